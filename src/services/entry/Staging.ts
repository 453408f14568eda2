/**
 * Staging (docs/plugin-loader-lifecycle.md: "Each plugin is loaded into a staging registry ...
 * Contributions are merged only after registration completes. A malformed manifest, failed
 * import, or throwing registration skips that plugin without leaving partial tools or routes in
 * the live registry").
 *
 * A `register(ctx)` entry registers into a staging area: `ctx.registerAction`, `registerHook`,
 * `registerSystem`, `registerAvailability`, `registerSkills` only record. The staged set becomes
 * the plugin's Contributions when `register` has completed, and the registry publishes them only
 * when initialize as a whole succeeded; so a `register` that throws halfway, or rejects,
 * contributes nothing. What it acquired is released through `ctx.onDispose(fn)`: the callbacks
 * run in reverse order at dispose, and also when registration fails, since they belong to the
 * plugin's Scope from the start. One that throws does not stop the others; the failures fail the
 * dispose, which the registry reports.
 *
 * Decisions where the spec is silent:
 * - registering after `register` completed is ignored with a warning (the staging area is closed); a plugin that
 *   needs to change its skills later uses `ctx.requestReload({ mode: "reload", skills })`;
 * - an action's `input` is an Effect Schema when the plugin has one, else the input is passed
 *   through unchecked (a `register(ctx)` plugin need not import anything);
 * - `prompt/*.md` text comes before the plugin's own system text, separated by a blank line.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Cause from "effect/Cause"
import * as Exit from "effect/Exit"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import { AsyncLocalStorage } from "node:async_hooks"
import type { CallBase } from "../../schema/HostModel.ts"
import type { Skill } from "../../schema/PluginChange.ts"
import type { AnyAction, Availability, Contributions, Hook } from "../Contributions.ts"
import { make as makePlugin, type Plugin } from "../Plugin.ts"
import { callback } from "../internal/pluginCallbacks.ts"
import { PluginContext, type PluginContextShape } from "../PluginContext.ts"
import { PluginLifecycleContext } from "../PluginLifecycleContext.ts"
import type { RegisterCallContext, RegisterContext, RegisterFunction } from "../RegisterContext.ts"
import type { PluginCallbackFailed } from "../../schema/Errors.ts"

type Awaitable<A> = A | PromiseLike<A>

export type { RegisterCallContext, RegisterContext, RegisterFunction } from "../RegisterContext.ts"

/**
 * How a loaded plugin reaches a sibling: an action call resolved from the current view, with the
 * calling context's agent, workspace, session and turn.
 * @since 0.1.0
 * @category models
 */
export type SiblingInvoke = (base: CallBase, plugin: string, action: string, input: unknown) => Effect.Effect<unknown, unknown>

/**
 * What the loader adds around any entry: prompt text and the manifest's initial skills.
 * @since 0.1.0
 * @category models
 */
export interface Extras {
  /** The text of the folder's `prompt/*.md`, put before the plugin's own system text. */
  readonly prompt: string | undefined
  /** The manifest's initial skills. */
  readonly skills: ReadonlyArray<Skill> | undefined
}

/**
 * Adds the prompt text before the plugin's own system text, and the manifest's skills if it has none.
 * @since 0.1.0
 * @category utils
 */
export const withExtras = (contributions: Contributions, extras: Extras): Contributions => {
  const own = contributions.system
  const prompt = extras.prompt
  const system: Contributions["system"] = prompt === undefined
    ? own
    : own === undefined
    ? () => Effect.succeed(prompt)
    : (ctx) => Effect.map(own(ctx), (text) => (text === undefined || text.length === 0 ? prompt : `${prompt}\n\n${text}`))
  return {
    ...contributions,
    system,
    skills: contributions.skills ?? extras.skills
  }
}

/**
 * The call a `register(ctx)` plugin's code is running for, across its awaits: `ctx` is one
 * object for the plugin's life, so `ctx.requestReload` learns its caller's call from here.
 */
const currentCall = new AsyncLocalStorage<PluginContextShape>()

/** Runs an Effect for plugin code written with Promises: resolves with its value, rejects with its error. */
const toPromise = <A, E>(runtime: Runtime.Runtime<never>, effect: Effect.Effect<A, E>): Promise<A> =>
  Runtime.runPromiseExit(runtime)(effect).then((exit) =>
    Exit.isSuccess(exit) ? exit.value : Promise.reject(Cause.squash(exit.cause))
  )

const callContext = (ctx: PluginContextShape, invoke: SiblingInvoke, runtime: Runtime.Runtime<never>): RegisterCallContext => ({
  ...ctx,
  invoke: (plugin, action, input) => toPromise(runtime, invoke(ctx, plugin, action, input))
})

/**
 * A Plugin from a `register(ctx)` function: initialize runs `register` against a staging area
 * and returns what it recorded once it completed.
 * @since 0.1.0
 * @category constructors
 */
export const fromRegister = (options: {
  readonly name: string
  readonly version: string
  readonly register: RegisterFunction
  readonly extras: Extras
  readonly invoke: SiblingInvoke
}): Plugin<PluginCallbackFailed> => {
  const { name } = options
  return makePlugin({
    name,
    version: options.version,
    initialize: Effect.gen(function*() {
      const lifecycle = yield* PluginLifecycleContext
      const runtime = yield* Effect.runtime<never>()
      const run = Runtime.runSync(runtime)
      const actions: Record<string, AnyAction> = {}
      const hooks: Record<string, Array<Hook>> = {}
      const systems: Array<(ctx: RegisterCallContext) => Awaitable<string | undefined>> = []
      let availability: ((ctx: RegisterCallContext) => Awaitable<Availability>) | undefined
      let skills: ReadonlyArray<Skill> | undefined
      const releases: Array<() => Awaitable<void>> = []
      let open = true

      // Every onDispose runs (reverse order) even when one fails; the failures then fail the
      // dispose together, so the registry reports them (PluginDisposeFailed).
      yield* Effect.addFinalizer(() =>
        Effect.flatMap(
          Effect.forEach([...releases].reverse(), (release, i) =>
            Effect.either(callback(name, `onDispose #${releases.length - i}`, release))),
          (results) => {
            const failures = results.flatMap((r) => (r._tag === "Left" ? [Cause.die(r.left)] : []))
            return failures.length === 0 ? Effect.void : Effect.failCause(failures.reduce((a, b) => Cause.sequential(a, b)))
          }
        )
      )

      // After register completed the staging area is closed: a late registration is ignored, loudly.
      const staged = <A extends ReadonlyArray<unknown>>(what: string, f: (...args: A) => void) => (...args: A) => {
        if (open) f(...args)
        else run(lifecycle.log.warn(`${what} after register completed is ignored: the staging area is closed`))
      }
      const withCtx = <A>(f: (ctx: RegisterCallContext) => Awaitable<A>, label: string) =>
        Effect.flatMap(PluginContext, (ctx) =>
          callback(name, label, () => currentCall.run(ctx, () => f(callContext(ctx, options.invoke, runtime)))))

      const ctx: RegisterContext = {
        name,
        version: options.version,
        storage: lifecycle.storage,
        config: lifecycle.config,
        configUnset: lifecycle.configUnset,
        log: {
          debug: (m) => run(lifecycle.log.debug(m)),
          info: (m) => run(lifecycle.log.info(m)),
          warn: (m) => run(lifecycle.log.warn(m)),
          error: (m) => run(lifecycle.log.error(m))
        },
        // Within a call, the request carries that call's context (a restart asked inside a Turn
        // must not wait for itself: see Generations).
        requestReload: (change) => {
          const call = currentCall.getStore()
          const request = lifecycle.requestReload(change)
          return toPromise(runtime, call === undefined ? request : Effect.provideService(request, PluginContext, call))
        },
        registerAction: staged("registerAction", (actionName: string, action) => {
          actions[actionName] = {
            input: action.input ?? Schema.Unknown,
            handler: (input: never) => withCtx((c) => action.handler(input, c), `action ${actionName}`)
          }
        }),
        registerHook: staged("registerHook", (point: string, handler) => {
          ;(hooks[point] ??= []).push((value) => withCtx((c) => handler(value, c), `hook ${point}`))
        }),
        registerSystem: staged("registerSystem", (system) => {
          systems.push(typeof system === "string" ? () => system : system)
        }),
        registerAvailability: staged("registerAvailability", (check) => {
          availability = check
        }),
        registerSkills: staged("registerSkills", (next) => {
          skills = [...next]
        }),
        onDispose: (release) => {
          releases.push(release)
        }
      }

      yield* callback(name, "register", () => options.register(ctx))
      open = false

      const system: Contributions["system"] = systems.length === 0 ? undefined : (callCtx) =>
        Effect.map(
          Effect.forEach(systems, (s, i) =>
            callback(name, `system #${i + 1}`, () => s(callContext(callCtx, options.invoke, runtime)))),
          (texts) => texts.filter((t): t is string => t !== undefined && t.length > 0).join("\n\n")
        )
      const check = availability
      const contributions: Contributions = {
        actions,
        hooks,
        system,
        availability: check === undefined
          ? undefined
          : (callCtx) => callback(name, "availability", () => check(callContext(callCtx, options.invoke, runtime))),
        skills
      }
      return withExtras(contributions, options.extras)
    })
  })
}
