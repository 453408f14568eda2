/**
 * Execution views (spec/city-plugin-lifecycle.md, "Execution leases": "A Session captures an
 * immutable Plugin execution view at each Step checkpoint"). A view is the registry's ready
 * plugins at one generation, in name order; it never changes after it is made. The calls a Step
 * or a City scope makes (`invoke`, `runHooks`, `system`, `availability`) run against one view and
 * project a fresh PluginContext for every handler call.
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { Availability, Contributions, Hook } from "../Contributions.ts"
import {
  ActionFailed,
  ActionInputRejected,
  ActionNotFound,
  describeCause,
  HookFailed,
  PluginNotFound,
  PluginNotReady
} from "../../schema/Errors.ts"
import type { PluginSnapshot } from "../../schema/PluginSnapshot.ts"
import type { CallBase } from "../../schema/HostModel.ts"
import { PluginContext, project } from "../PluginContext.ts"
import type { PluginLifecycleContextShape } from "../PluginLifecycleContext.ts"

/** One initialized plugin: its contributions and the Scope whose closing is its dispose. */
export interface PluginInstance {
  readonly name: string
  readonly version: string | undefined
  readonly contributions: Contributions
  readonly hooks: ReadonlyMap<string, ReadonlyArray<Hook>>
  readonly lifecycle: PluginLifecycleContextShape
  readonly scope: Scope.CloseableScope
}

export const normalizeHooks = (contributions: Contributions): ReadonlyMap<string, ReadonlyArray<Hook>> => {
  const hooks = new Map<string, ReadonlyArray<Hook>>()
  for (const [point, handler] of Object.entries(contributions.hooks ?? {})) {
    hooks.set(point, typeof handler === "function" ? [handler] : handler)
  }
  return hooks
}

/**
 * An immutable view of the ready plugins at one registry generation, in name order (code units).
 * Making one costs nothing beyond the array the registry already built; lookups are a binary
 * search, so a registry change never pays for an index it may not need.
 */
export class ExecutionView {
  constructor(readonly generation: number, readonly plugins: ReadonlyArray<PluginInstance>) {}
  get names(): ReadonlyArray<string> {
    return this.plugins.map((p) => p.name)
  }
  get(name: string): PluginInstance | undefined {
    const plugins = this.plugins
    let lo = 0
    let hi = plugins.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      const at = plugins[mid]!.name
      if (at === name) return plugins[mid]
      if (at < name) lo = mid + 1
      else hi = mid
    }
    return undefined
  }
  has(name: string): boolean {
    return this.get(name) !== undefined
  }
}

/** A block of system text contributed by one plugin. */
export interface SystemBlock {
  readonly name: string
  readonly content: string
}

/** The calls of one Step or City scope, bound to its view and call base. */
export interface Calls {
  readonly view: ExecutionView
  readonly invoke: (
    plugin: string,
    action: string,
    input: unknown
  ) => Effect.Effect<unknown, PluginNotFound | PluginNotReady | ActionNotFound | ActionInputRejected | ActionFailed>
  readonly runHooks: (point: string, value: unknown) => Effect.Effect<unknown, HookFailed>
  readonly system: () => Effect.Effect<ReadonlyArray<SystemBlock>>
  readonly availability: (plugin: string) => Effect.Effect<Availability, PluginNotFound | PluginNotReady>
}

const alwaysAvailable: Availability = { available: true, reasons: [] }

/**
 * Binds a view to a call base. `snapshot` tells a plugin that is not in the view apart: one that
 * exists but is not ready (initializing, error, disposing) fails with PluginNotReady carrying its
 * last error; anything else is PluginNotFound.
 */
export const bind = (
  view: ExecutionView,
  base: CallBase,
  snapshot: (name: string) => Option.Option<PluginSnapshot>
): Calls => {
  const missing = (name: string): PluginNotFound | PluginNotReady =>
    Option.match(snapshot(name), {
      onNone: () => new PluginNotFound({ name }),
      onSome: (s) =>
        s.status === "ready"
          ? new PluginNotFound({ name })
          : new PluginNotReady({ name, status: s.status, ...(s.last_error === undefined ? {} : { last_error: s.last_error }) })
    })

  const lookup = (name: string) => {
    const instance = view.get(name)
    return instance === undefined ? Effect.fail(missing(name)) : Effect.succeed(instance)
  }

  const inContext = <A, E>(name: string, effect: Effect.Effect<A, E, PluginContext>) =>
    effect.pipe(Effect.provideService(PluginContext, project(name, base)), Effect.annotateLogs("plugin", name))

  const availabilityOf = (instance: PluginInstance): Effect.Effect<Availability> => {
    const check = instance.contributions.availability
    if (check === undefined) return Effect.succeed(alwaysAvailable)
    return Effect.suspend(() => {
      const ctx = project(instance.name, base)
      return check(ctx).pipe(Effect.provideService(PluginContext, ctx), Effect.annotateLogs("plugin", instance.name))
    }).pipe(
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause)
          ? Effect.failCause(cause as Cause.Cause<never>)
          : Effect.succeed<Availability>({
            available: false,
            reasons: [`availability check failed: ${describeCause(cause)}`]
          })
      )
    )
  }

  return {
    view,
    invoke: (plugin, actionName, input) =>
      Effect.flatMap(lookup(plugin), (instance): Effect.Effect<
        unknown,
        ActionNotFound | ActionInputRejected | ActionFailed
      > => {
        const action = instance.contributions.actions?.[actionName]
        if (action === undefined) return Effect.fail(new ActionNotFound({ plugin, action: actionName }))
        return Schema.decodeUnknown(action.input)(input).pipe(
          Effect.mapError((error) =>
            new ActionInputRejected({
              plugin,
              action: actionName,
              issues: ParseResult.TreeFormatter.formatErrorSync(error)
            })
          ),
          Effect.flatMap((decoded) =>
            inContext(plugin, Effect.suspend(() => action.handler(decoded as never))).pipe(
              Effect.catchAllCause((cause) =>
                Cause.isInterruptedOnly(cause)
                  ? Effect.failCause(cause as Cause.Cause<never>)
                  : Effect.fail(new ActionFailed({ plugin, action: actionName, cause }))
              )
            )
          )
        )
      }),
    runHooks: (point, value) =>
      Effect.reduce(view.plugins, value, (current, instance) => {
        const handlers = instance.hooks.get(point)
        if (handlers === undefined) return Effect.succeed(current)
        return Effect.reduce(handlers, current, (v, handler) =>
          inContext(instance.name, Effect.suspend(() => handler(v))).pipe(
            Effect.catchAllCause((cause) =>
              Cause.isInterruptedOnly(cause)
                ? Effect.failCause(cause as Cause.Cause<never>)
                : Effect.fail(new HookFailed({ plugin: instance.name, point, cause }))
            )
          ))
      }),
    system: () =>
      Effect.map(
        Effect.forEach(
          view.plugins,
          (instance) => {
            const system = instance.contributions.system
            if (system === undefined) return Effect.succeed(Option.none<SystemBlock>())
            return Effect.flatMap(availabilityOf(instance), (availability) => {
              if (!availability.available) return Effect.succeed(Option.none<SystemBlock>())
              const ctx = project(instance.name, base)
              return Effect.suspend(() => system(ctx)).pipe(
                Effect.provideService(PluginContext, ctx),
                Effect.annotateLogs("plugin", instance.name),
                Effect.map((content) =>
                  content === undefined || content.length === 0
                    ? Option.none<SystemBlock>()
                    : Option.some<SystemBlock>({ name: instance.name, content })
                ),
                Effect.catchAllCause((cause) =>
                  Cause.isInterruptedOnly(cause)
                    ? Effect.failCause(cause as Cause.Cause<never>)
                    : Effect.as(
                      Effect.logWarning(`system text of plugin ${instance.name} skipped: ${describeCause(cause)}`),
                      Option.none<SystemBlock>()
                    )
                )
              )
            })
          },
          { concurrency: "unbounded" }
        ),
        (blocks) => blocks.flatMap((b) => (Option.isSome(b) ? [b.value] : []))
      ),
    availability: (plugin) => Effect.flatMap(lookup(plugin), availabilityOf)
  }
}
