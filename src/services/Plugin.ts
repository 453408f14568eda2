/**
 * Plugins as Scope-managed resources (spec/city-plugin-lifecycle.md, "Two lifecycle checkpoints").
 *
 * `initialize` is the acquire: everything it acquires in its Scope (`Effect.acquireRelease`,
 * `Effect.addFinalizer`, `Effect.forkScoped`) is released at dispose, and that *is* dispose:
 * closing the plugin's Scope. There is no second mechanism.
 *
 * Code not written with Effect uses {@link fromPromise}: an object or class instance with
 * `name`, `initialize(ctx)`, optional `dispose(ctx)` and the contributions, whose throws and
 * rejections become {@link PluginCallbackFailed} errors naming the plugin.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { PluginContextShape } from "./PluginContext.ts"
import { PluginContext } from "./PluginContext.ts"
import type { PluginLifecycleContextShape } from "./PluginLifecycleContext.ts"
import { PluginLifecycleContext } from "./PluginLifecycleContext.ts"
import type { AnyAction, Availability, Contributions, Hook, Skill } from "./Contributions.ts"
import { PluginCallbackFailed } from "../schema/Errors.ts"

export const TypeId: unique symbol = Symbol.for("effect-city/Plugin")
export type TypeId = typeof TypeId

export interface Plugin<E = never, R = never> {
  readonly [TypeId]: TypeId
  readonly name: string
  readonly version?: string | undefined
  readonly initialize: Effect.Effect<Contributions, E, Scope.Scope | PluginLifecycleContext | R>
}

export const make = <E = never, R = never>(options: {
  readonly name: string
  readonly version?: string | undefined
  readonly initialize: Effect.Effect<Contributions, E, R>
}): Plugin<E, Exclude<R, Scope.Scope | PluginLifecycleContext>> =>
  ({ [TypeId]: TypeId, ...options }) as Plugin<E, Exclude<R, Scope.Scope | PluginLifecycleContext>>

export const isPlugin = (u: unknown): u is Plugin<unknown, unknown> =>
  typeof u === "object" && u !== null && TypeId in u

// ---------------------------------------------------------------------------------------------
// The Promise / class adapter
// ---------------------------------------------------------------------------------------------

type Awaitable<A> = A | PromiseLike<A>

/** An action of a Promise-style plugin: the handler gets the decoded input and the fresh context. */
export interface PromiseAction<A, I> {
  readonly input: Schema.Schema<A, I, never>
  readonly handler: (input: A, ctx: PluginContextShape) => Awaitable<unknown>
}

/** A Promise-style action with its types erased. */
export interface AnyPromiseAction {
  readonly input: Schema.Schema.AnyNoContext
  readonly handler: (input: never, ctx: PluginContextShape) => Awaitable<unknown>
}

/** A plugin written without Effect: a plain object or an instance of a class. */
export interface PromisePlugin {
  readonly name: string
  readonly version?: string | undefined
  initialize?(ctx: PluginLifecycleContextShape): Awaitable<void>
  dispose?(ctx: PluginLifecycleContextShape): Awaitable<void>
  readonly actions?: Readonly<Record<string, AnyPromiseAction>> | undefined
  readonly hooks?: Readonly<Record<string, (value: unknown, ctx: PluginContextShape) => Awaitable<unknown>>> | undefined
  readonly system?: ((ctx: PluginContextShape) => Awaitable<string | undefined>) | undefined
  readonly availability?: ((ctx: PluginContextShape) => Awaitable<Availability>) | undefined
  readonly skills?: ReadonlyArray<Skill> | undefined
}

/** Builds a Promise-style action with the handler's input inferred from the Schema. */
export const promiseAction = <A, I>(definition: PromiseAction<A, I>): AnyPromiseAction =>
  definition

/**
 * Calls a plugin's own callback, catching a synchronous throw and a rejection alike as a
 * {@link PluginCallbackFailed} that names the plugin and the callback.
 */
export const callback = <A>(
  plugin: string,
  name: string,
  f: () => Awaitable<A>
): Effect.Effect<A, PluginCallbackFailed> =>
  Effect.suspend(() => {
    let result: Awaitable<A>
    try {
      result = f()
    } catch (error) {
      return Effect.fail(new PluginCallbackFailed({ plugin, callback: name, error }))
    }
    if (isThenable(result)) {
      const promise = result
      return Effect.tryPromise({
        try: () => Promise.resolve(promise),
        catch: (error) => new PluginCallbackFailed({ plugin, callback: name, error })
      })
    }
    return Effect.succeed(result)
  })

const isThenable = <A>(u: Awaitable<A>): u is PromiseLike<A> =>
  typeof u === "object" && u !== null && typeof (u as { then?: unknown }).then === "function"

/**
 * Adapts a Promise/class plugin. `initialize(ctx)` runs as the acquire; `dispose(ctx)` is added
 * as the release only once initialize succeeded (a failed initialize never gets a dispose call,
 * what it acquired is its own to release). A synchronous throw in `dispose` is caught like a
 * rejection, so it never stops the City's other cleanup.
 */
export const fromPromise = (plugin: PromisePlugin): Plugin<PluginCallbackFailed> => {
  const name = plugin.name
  const withContext = <A>(f: (ctx: PluginContextShape) => Awaitable<A>, label: string) =>
    Effect.flatMap(PluginContext, (ctx) => callback(name, label, () => f(ctx)))
  return make({
    name,
    version: plugin.version,
    initialize: Effect.gen(function*() {
      const ctx = yield* PluginLifecycleContext
      if (plugin.initialize !== undefined) {
        yield* callback(name, "initialize", () => plugin.initialize!(ctx))
      }
      if (plugin.dispose !== undefined) {
        yield* Effect.addFinalizer(() => Effect.orDie(callback(name, "dispose", () => plugin.dispose!(ctx))))
      }
      const actions: Record<string, AnyAction> = {}
      for (const [actionName, def] of Object.entries(plugin.actions ?? {})) {
        actions[actionName] = {
          input: def.input,
          handler: (input: never) => withContext((c) => def.handler(input, c), `action ${actionName}`)
        }
      }
      const hooks: Record<string, Hook> = {}
      for (const [point, hook] of Object.entries(plugin.hooks ?? {})) {
        hooks[point] = (value) => withContext((c) => hook(value, c), `hook ${point}`)
      }
      // Called as methods of the plugin, like initialize and dispose: a class's `this` holds.
      const contributions: Contributions = {
        actions,
        hooks,
        system: plugin.system === undefined ? undefined : (c) => callback(name, "system", () => plugin.system!(c)),
        availability: plugin.availability === undefined
          ? undefined
          : (c) => callback(name, "availability", () => plugin.availability!(c)),
        skills: plugin.skills
      }
      return contributions
    })
  })
}
