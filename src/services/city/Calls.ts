/**
 * The calls of one Step or City scope against one execution view (docs/city-plugin-lifecycle.md,
 * "Call context": "City freshly projects a PluginContext for every Action, Hook, System, and
 * Availability call"). Bound once per Step: one object whose methods live on its prototype, so a
 * Step that makes no call pays for one allocation.
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import {
  ActionRejected,
  describeCause,
  HookFailed
} from "../../schema/Errors.ts"
import type { CallBase } from "../../schema/HostModel.ts"
import { issueLine } from "../../schema/ParseIssue.ts"
import type { ActionRef, Availability } from "../Contributions.ts"
import { Encoded, Refused, unwrap, unwrapCause } from "../internal/encoded.ts"
import { spans } from "../Observability.ts"
import { PluginContext, type PluginContextShape } from "../PluginContext.ts"
import { type ExecutionView, instanceIn, type PluginInstance, ExecutionView as View } from "./ExecutionView.ts"

/** A fresh PluginContext object for one call. */
const project = (plugin: string, base: CallBase): PluginContextShape => ({
  plugin,
  agent: base.agent,
  workspace: base.workspace,
  session: base.session,
  turn: base.turn
})

/**
 * A block of system text contributed by one plugin.
 * @since 0.1.0
 * @category models
 */
export interface SystemBlock {
  /** The plugin that contributed the text. */
  readonly name: string
  /** The text. */
  readonly content: string
}

/**
 * `invoke`, by reference (typed) or by name, failing with `E`.
 *
 * By reference (`invoke(ref, input)`, see `Contributions.reference`) the compiler checks the input
 * (the input Schema's encoded form) and types the result (`O`) and the failure: `E`, the action's
 * own error (a failure its `error` Schema accepts, as itself), and `ActionOutputRejected` (a result
 * its `output` Schema refuses). By name (`invoke(plugin, action, input)`) nothing is checked before
 * run time: a wrong input is `ActionInputRejected` when the call runs, the result is `unknown`
 * and every failure of the handler is `ActionFailed`. Prefer a reference where the plugin exports
 * one; the string form is for plugins called by name (those loaded from folders).
 * @since 0.1.0
 * @category models
 */
export interface Invoke<E> {
  /** By reference: the input, the result and the action's own error typed. */
  <A, I, O, AE>(action: ActionRef<A, I, O, AE>, input: I): Effect.Effect<O, AE | ActionRejected | E>
  /** By name: checked at run time only (`ActionInputRejected`); the result is `unknown`. */
  (plugin: string, action: string, input: unknown): Effect.Effect<unknown, E>
}

/**
 * The plugin, action and input of an `invoke` call, by reference or by name.
 * @since 0.1.0
 * @category constructors
 */
export const invokeArguments = (
  target: string | ActionRef<unknown, unknown, unknown, unknown>,
  second: unknown,
  third?: unknown
): readonly [plugin: string, action: string, input: unknown] =>
  typeof target === "string" ? [target, second as string, third] : [target.plugin, target.action, second]

/**
 * The calls of one Step or City scope, against its view.
 * @since 0.1.0
 * @category models
 */
export interface Calls {
  /** The view these calls run against: plugin names and contributions. */
  readonly view: ExecutionView
  /** The plugin names of the view, in name order. */
  readonly names: ReadonlyArray<string>
  /**
   * Calls a plugin's action: the input is decoded with the action's Schema, then the handler runs
   * with a fresh PluginContext. By reference (`invoke(ref, input)`, see `Contributions.reference`)
   * the input, the result and the action's own error are typed, and the result is checked when the
   * reference has an `output` Schema; by name (`invoke(plugin, action, input)`) nothing is typed and
   * a wrong input fails only at run time, with `ActionInputRejected` (see {@link Invoke}).
   */
  readonly invoke: Invoke<ActionRejected>
  /** Runs the handlers of a hook point as a waterfall, plugins in name order: each gets the value the previous one returned. */
  readonly runHooks: (point: string, value: unknown) => Effect.Effect<unknown, HookFailed>
  /** The system text of every available plugin that has some, in plugin name order; a failing one is skipped with a warning. */
  readonly system: () => Effect.Effect<ReadonlyArray<SystemBlock>>
  /** Whether a plugin can serve this call; a failing check reads as unavailable with the reason. */
  readonly availability: (plugin: string) => Effect.Effect<Availability, ActionRejected>
}

/**
 * Tells a plugin that is not in the view apart: not ready (with its last error), or unknown.
 * @since 0.1.0
 * @category models
 */
export type Explain = (name: string) => ActionRejected

const alwaysAvailable: Availability = { available: true, reasons: [] }

const passInterrupts = <E>(cause: Cause.Cause<unknown>, otherwise: () => Effect.Effect<never, E>) =>
  Cause.isInterruptedOnly(cause) ? Effect.failCause(cause as Cause.Cause<never>) : otherwise()

/** By name: the result as the handler gave it; every failure of the handler is `ActionFailed`. */
const byName = (run: Effect.Effect<unknown, unknown>, plugin: string, action: string) =>
  // One step for both ends (a by-name call is the hot path): the result unwrapped, the failure wrapped.
  Effect.matchCauseEffect(run, {
    onFailure: (cause) => passInterrupts(cause, () => Effect.fail(new ActionRejected({ reason: "ActionFailed", plugin, action, cause: unwrapCause(cause) }))),
    onSuccess: (value) => Effect.succeed(unwrap(value))
  })

/**
 * By reference: the result checked with the reference's `output` Schema (validated when the
 * handler ran here, decoded when it crossed from a worker encoded), and a failure the `error`
 * Schema accepts passed on as itself. The reference's Schemas decide, not the action's: they are
 * the caller's contract, and a worker's action never reaches the host's thread.
 */
const byReference = (
  run: Effect.Effect<unknown, unknown>,
  ref: ActionRef<unknown, unknown, unknown, unknown>,
  plugin: string,
  action: string
) =>
  Effect.matchCauseEffect(run, {
    onFailure: (cause) =>
      passInterrupts(cause, () => {
        const typed = typedFailure(cause, ref)
        return Effect.fail(Option.isSome(typed) ? typed.value : new ActionRejected({ reason: "ActionFailed", plugin, action, cause: unwrapCause(cause) }))
      }),
    onSuccess: (value) => {
      const output = ref.output
      if (output === undefined) return Effect.succeed(unwrap(value))
      const checked = value instanceof Encoded ? Schema.decodeUnknown(output)(value.value) : Schema.validate(output)(value)
      return Effect.mapError(checked, (error) => new ActionRejected({ reason: "ActionOutputRejected", plugin, action, issue: issueLine(error) }))
    }
  })

/**
 * The failure a caller by reference gets as itself: the output refusal of a worker, or a failure
 * the reference's `error` Schema accepts (a Cause with a defect or an interruption is not one).
 */
const typedFailure = (cause: Cause.Cause<unknown>, ref: ActionRef<unknown, unknown, unknown, unknown>): Option.Option<unknown> => {
  if (Cause.isDie(cause) || Cause.isInterrupted(cause)) return Option.none()
  return Option.flatMap(Cause.failureOption(cause), (failure): Option.Option<unknown> => {
    if (failure instanceof Refused) return Option.some(failure.error)
    if (ref.error === undefined) return Option.none()
    if (failure instanceof Encoded) return Schema.decodeUnknownOption(ref.error)(failure.value)
    return Schema.is(ref.error)(failure) ? Option.some(failure) : Option.none()
  })
}

/**
 * Calls bound to a view and a call base.
 * @since 0.1.0
 * @category constructors
 */
export class BoundCalls implements Calls {
  constructor(readonly view: ExecutionView, readonly base: CallBase, readonly explain: Explain) {}

  get names(): ReadonlyArray<string> {
    return this.view.names
  }

  /** The span attributes of a call: the host model's ids and what is called. */
  private attributes(extra: Record<string, unknown>): Record<string, unknown> {
    const { agent, session, turn, workspace } = this.base
    return { agent: agent.id, workspace: workspace.id, session: session?.id, turn: turn?.number, ...extra }
  }

  private inContext<A, E>(name: string, effect: Effect.Effect<A, E, PluginContext>) {
    return effect.pipe(Effect.provideService(PluginContext, project(name, this.base)), Effect.annotateLogs("plugin", name))
  }

  private lookup(name: string): Effect.Effect<PluginInstance, ActionRejected> {
    const instance = instanceIn(this.view, name)
    return instance === undefined ? Effect.fail(this.explain(name)) : Effect.succeed(instance)
  }

  private availabilityOf(instance: PluginInstance): Effect.Effect<Availability> {
    const check = instance.contributions.availability
    if (check === undefined) return Effect.succeed(alwaysAvailable)
    const ctx = project(instance.name, this.base)
    return Effect.suspend(() => check(ctx)).pipe(
      Effect.provideService(PluginContext, ctx),
      Effect.annotateLogs("plugin", instance.name),
      Effect.catchAllCause((cause) =>
        passInterrupts(cause, () => Effect.fail(cause)).pipe(
          Effect.orElseSucceed((): Availability => ({
            available: false,
            reasons: [`availability check failed: ${describeCause(cause)}`]
          }))
        )
      )
    )
  }

  invoke<A, I, O, AE>(
    action: ActionRef<A, I, O, AE>,
    input: I
  ): Effect.Effect<O, AE | ActionRejected>
  invoke(plugin: string, action: string, input: unknown): Effect.Effect<unknown, ActionRejected>
  invoke(target: string | ActionRef<unknown, unknown, unknown, unknown>, second: unknown, third?: unknown) {
    const [plugin, actionName, input] = invokeArguments(target, second, third)
    return Effect.withSpan(this.invokeUntraced(plugin, actionName, input, typeof target === "string" ? undefined : target), spans.invoke, {
      attributes: this.attributes({ plugin, action: actionName })
    })
  }

  private invokeUntraced(plugin: string, actionName: string, input: unknown, ref: ActionRef<unknown, unknown, unknown, unknown> | undefined) {
    return Effect.flatMap(this.lookup(plugin), (instance): Effect.Effect<unknown, unknown> => {
      const action = instance.contributions.actions?.[actionName]
      if (action === undefined) return Effect.fail(new ActionRejected({ reason: "ActionNotFound", plugin, action: actionName }))
      return Schema.decodeUnknown(action.input)(input).pipe(
        Effect.mapError((error) =>
          new ActionRejected({ reason: "ActionInputRejected",
            plugin,
            action: actionName,
            issues: ParseResult.TreeFormatter.formatErrorSync(error)
          })
        ),
        Effect.flatMap((decoded) => {
          const run = this.inContext(plugin, Effect.suspend(() => action.handler(decoded as never)))
          return ref === undefined ? byName(run, plugin, actionName) : byReference(run, ref, plugin, actionName)
        })
      )
    })
  }

  runHooks(point: string, value: unknown) {
    return Effect.withSpan(this.runHooksUntraced(point, value), spans.runHooks, { attributes: this.attributes({ point }) })
  }

  private runHooksUntraced(point: string, value: unknown) {
    return Effect.reduce(View.instances(this.view), value, (current, instance) => {
      const handlers = instance.hooks.get(point)
      if (handlers === undefined) return Effect.succeed(current)
      return Effect.reduce(handlers, current, (v, handler) =>
        this.inContext(instance.name, Effect.suspend(() => handler(v))).pipe(
          Effect.catchAllCause((cause) =>
            passInterrupts(cause, () => Effect.fail(new HookFailed({ plugin: instance.name, point, cause })))
          )
        ))
    })
  }

  system() {
    return Effect.map(
      Effect.forEach(View.instances(this.view), (instance) => this.systemOf(instance), { concurrency: "unbounded" }),
      (blocks) => blocks.flatMap((b) => (Option.isSome(b) ? [b.value] : []))
    ).pipe(Effect.withSpan(spans.system, { attributes: this.attributes({}) }))
  }

  private systemOf(instance: PluginInstance): Effect.Effect<Option.Option<SystemBlock>> {
    const system = instance.contributions.system
    if (system === undefined) return Effect.succeed(Option.none())
    return Effect.flatMap(this.availabilityOf(instance), (availability) => {
      if (!availability.available) return Effect.succeed(Option.none<SystemBlock>())
      const ctx = project(instance.name, this.base)
      return Effect.suspend(() => system(ctx)).pipe(
        Effect.provideService(PluginContext, ctx),
        Effect.annotateLogs("plugin", instance.name),
        Effect.map((content) =>
          content === undefined || content.length === 0
            ? Option.none<SystemBlock>()
            : Option.some<SystemBlock>({ name: instance.name, content })
        ),
        Effect.catchAllCause((cause) =>
          passInterrupts(cause, () => Effect.fail(cause)).pipe(
            Effect.orElse(() =>
              Effect.as(
                Effect.logWarning(`system text of plugin ${instance.name} skipped: ${describeCause(cause)}`),
                Option.none<SystemBlock>()
              )
            )
          )
        )
      )
    })
  }

  availability(plugin: string) {
    return Effect.flatMap(this.lookup(plugin), (instance) => this.availabilityOf(instance)).pipe(
      Effect.withSpan(spans.availability, { attributes: this.attributes({ plugin }) })
    )
  }
}
