/**
 * Plugins as Scope-managed resources (docs/city-plugin-lifecycle.md, "Two lifecycle checkpoints").
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
import type * as Context from "effect/Context"
import type * as Scope from "effect/Scope"
import type { SiblingViews } from "./Siblings.ts"
import type { PluginContextShape } from "./PluginContext.ts"
import { PluginContext } from "./PluginContext.ts"
import type { PluginLifecycleContextShape } from "./PluginLifecycleContext.ts"
import { PluginLifecycleContext } from "./PluginLifecycleContext.ts"
import type { AnyAction, Availability, Contributions, Hook, Skill } from "./Contributions.ts"
import type { PluginCallbackFailed } from "../schema/Errors.ts"
import { callback, requirements } from "./internal/pluginCallbacks.ts"

/**
 * The brand every Plugin carries, so that `isPlugin` can tell one apart from other values.
 * @since 0.1.0
 * @category symbols
 */
export const TypeId: unique symbol = Symbol.for("effect-city/Plugin")

/** The brand of a plugin's provided services (a type only). */
declare const ProvidesTypeId: unique symbol

/**
 * The type of {@link TypeId}.
 * @since 0.1.0
 * @category symbols
 */
export type TypeId = typeof TypeId

/**
 * A plugin: a name, an optional version and `initialize`, the Effect that acquires the plugin's
 * resources in its Scope and returns its Contributions. Closing that Scope is dispose.
 * @since 0.1.0
 * @category models
 */
export interface Plugin<E = never, R = never, P = unknown> {
  /** Marks a value made by `make` or `fromPromise` (see `isPlugin`). */
  readonly [TypeId]: TypeId
  /** The plugin's name, unique in a City (see `PluginName`). */
  readonly name: string
  /** The plugin's version, shown in its snapshot. */
  readonly version?: string | undefined
  /** The plugins it needs (docs/library.md, "Plugin dependencies"); none when absent. */
  readonly requires?: ReadonlyArray<Requirement> | undefined
  /** The identifiers of the services it provides, in types only (see `Siblings.SiblingNeed`). */
  readonly [ProvidesTypeId]?: (() => P) | undefined
  /** Acquires the plugin's resources in its Scope and returns its Contributions; closing the Scope is dispose. */
  readonly initialize: Effect.Effect<Contributions, E, Scope.Scope | PluginLifecycleContext | SiblingViews | R>
}

/**
 * What an initialize must return for the Tags a plugin `provides`: their services.
 * @since 0.1.0
 * @category models
 */
export type Provided<P extends ReadonlyArray<Context.Tag<any, any>>> = P extends readonly [] ? {}
  : { readonly services: Context.Context<Context.Tag.Identifier<P[number]>> }

/**
 * A plugin another one needs: by name, and whether it may be absent. A required one must be ready
 * before the dependent initializes and stays until the dependent is gone; an optional one, when
 * present, only orders initialize and dispose.
 * @since 0.1.0
 * @category models
 */
export interface Requirement {
  /** The plugin's name. */
  readonly name: string
  /** Whether the dependent starts without it (default false). */
  readonly optional: boolean
}

/**
 * How a requirement is written: a plugin's name (required), or `{ name, optional }`.
 * @since 0.1.0
 * @category models
 */
export type RequirementInput = string | { readonly name: string; readonly optional?: boolean | undefined }

/**
 * Makes a Plugin from its `initialize` Effect, which runs with the plugin's Scope and its
 * PluginLifecycleContext provided: what it acquires there is released at dispose.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Contributions, Plugin, PluginContext, PluginLifecycleContext } from "effect-city/plugin"
 *
 * // Notes per Workspace, kept for the plugin's life: acquired by initialize, released at dispose.
 * export const notes = Plugin.make({
 *   name: "notes",
 *   version: "1.0.0",
 *   initialize: Effect.gen(function*() {
 *     const lifecycle = yield* PluginLifecycleContext.PluginLifecycleContext
 *     const store = yield* Effect.acquireRelease(
 *       Effect.sync(() => new Map<string, Array<string>>()),
 *       (store) => lifecycle.log.info(`dropping notes of ${store.size} workspace(s)`)
 *     )
 *     return {
 *       actions: {
 *         add: Contributions.action({
 *           input: Schema.Struct({ text: Schema.String }),
 *           handler: ({ text }) =>
 *             Effect.gen(function*() {
 *               const ctx = yield* PluginContext.PluginContext
 *               const list = store.get(ctx.workspace.id) ?? []
 *               store.set(ctx.workspace.id, [...list, text])
 *               return list.length + 1
 *             })
 *         })
 *       },
 *       system: (ctx) => {
 *         const count = store.get(ctx.workspace.id)?.length ?? 0
 *         return Effect.succeed(count === 0 ? undefined : `This workspace has ${count} note(s).`)
 *       }
 *     }
 *   })
 * })
 * ```
 * @since 0.1.0
 * @category constructors
 */
export const make = <E = never, R = never, const P extends ReadonlyArray<Context.Tag<any, any>> = readonly []>(options: {
  readonly name: string
  readonly version?: string | undefined
  /** The plugins it needs, by name (`"store"`) or with `{ name, optional: true }`. */
  readonly requires?: ReadonlyArray<RequirementInput> | undefined
  /** The services it provides to its siblings, by Tag: its initialize returns them in `services`. */
  readonly provides?: P | undefined
  readonly initialize: Effect.Effect<Contributions & Provided<P>, E, R>
}): Plugin<E, Exclude<R, Scope.Scope | PluginLifecycleContext | SiblingViews>, Context.Tag.Identifier<P[number]>> =>
  ({
    [TypeId]: TypeId,
    name: options.name,
    version: options.version,
    ...(options.requires === undefined || options.requires.length === 0 ? {} : { requires: requirements(options.requires) }),
    initialize: options.initialize
  }) as Plugin<E, Exclude<R, Scope.Scope | PluginLifecycleContext | SiblingViews>, Context.Tag.Identifier<P[number]>>

/**
 * Whether a value is a Plugin (made by `make` or `fromPromise`).
 * @since 0.1.0
 * @category guards
 */
export const isPlugin = (u: unknown): u is Plugin<unknown, unknown> =>
  typeof u === "object" && u !== null && TypeId in u

// ---------------------------------------------------------------------------------------------
// The Promise / class adapter
// ---------------------------------------------------------------------------------------------

type Awaitable<A> = A | PromiseLike<A>

/**
 * An action of a Promise-style plugin: the handler gets the decoded input and the fresh context.
 * @since 0.1.0
 * @category models
 */
export interface PromiseAction<A, I> {
  /** The Schema the caller's unknown input is decoded with before the handler runs. */
  readonly input: Schema.Schema<A, I, never>
  /** Runs the action on the decoded input and the call's context; may return a value or a Promise. */
  readonly handler: (input: A, ctx: PluginContextShape) => Awaitable<unknown>
}

/**
 * A Promise-style action with its types erased.
 * @since 0.1.0
 * @category models
 */
export interface AnyPromiseAction {
  /** The Schema the caller's unknown input is decoded with. */
  readonly input: Schema.Schema.AnyNoContext
  /** The handler, its input type erased. */
  readonly handler: (input: never, ctx: PluginContextShape) => Awaitable<unknown>
}

/**
 * A plugin written without Effect: a plain object or an instance of a class. Its methods are
 * called as methods (`this` is the object), and each may return a value or a Promise.
 * @since 0.1.0
 * @category models
 */
export interface PromisePlugin {
  /** The plugin's name, unique in a City (see `PluginName`). */
  readonly name: string
  /** The plugin's version, shown in its snapshot. */
  readonly version?: string | undefined
  /** The plugins it needs (see `Requirement`). */
  readonly requires?: ReadonlyArray<RequirementInput> | undefined
  /** Called once when the plugin starts, before any call; a throw or a rejection fails the start. */
  initialize?(ctx: PluginLifecycleContextShape): Awaitable<void>
  /** Called once at dispose (removal, City close), only if initialize succeeded. */
  dispose?(ctx: PluginLifecycleContextShape): Awaitable<void>
  /** The actions, by action name. */
  readonly actions?: Readonly<Record<string, AnyPromiseAction>> | undefined
  /** The hook handlers, by hook point: each receives the value and returns the value passed on. */
  readonly hooks?: Readonly<Record<string, (value: unknown, ctx: PluginContextShape) => Awaitable<unknown>>> | undefined
  /** System text for a call, or nothing. */
  readonly system?: ((ctx: PluginContextShape) => Awaitable<string | undefined>) | undefined
  /** Whether the plugin can serve this call; a plugin without it is always available. */
  readonly availability?: ((ctx: PluginContextShape) => Awaitable<Availability>) | undefined
  /** The skills, resolved per Turn. */
  readonly skills?: ReadonlyArray<Skill> | undefined
}

/**
 * Builds a Promise-style action with the handler's input inferred from the Schema.
 * @since 0.1.0
 * @category constructors
 */
export const promiseAction = <A, I>(definition: PromiseAction<A, I>): AnyPromiseAction =>
  definition

/**
 * Adapts a Promise/class plugin. `initialize(ctx)` runs as the acquire; `dispose(ctx)` is added
 * as the release only once initialize succeeded (a failed initialize never gets a dispose call,
 * what it acquired is its own to release). A synchronous throw in `dispose` is caught like a
 * rejection, so it never stops the City's other cleanup.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { readFile, writeFile } from "node:fs/promises"
 * import { join } from "node:path"
 * import { Plugin, type PluginContext, type PluginLifecycleContext } from "effect-city/plugin"
 *
 * class Reminders {
 *   readonly name = "reminders"
 *   readonly version = "1.0.0"
 *   private file = ""
 *   private due: Record<string, Array<string>> = {}
 *
 *   // Called as methods of the instance: `this` is the instance in all three.
 *   async initialize(ctx: PluginLifecycleContext.PluginLifecycleContextShape) {
 *     this.file = join(ctx.storage.path, "reminders.json")
 *     this.due = await readFile(this.file, "utf8").then(JSON.parse, () => ({}))
 *   }
 *
 *   async dispose() {
 *     await writeFile(this.file, JSON.stringify(this.due))
 *   }
 *
 *   system(ctx: PluginContext.PluginContextShape) {
 *     const due = this.due[ctx.agent.id] ?? []
 *     return due.length === 0 ? undefined : `Remind the user of: ${due.join("; ")}`
 *   }
 *
 *   readonly actions = {
 *     remind: Plugin.promiseAction({
 *       input: Schema.Struct({ text: Schema.String }),
 *       handler: ({ text }, ctx) => {
 *         const list = (this.due[ctx.agent.id] ??= [])
 *         list.push(text)
 *         return list.length
 *       }
 *     })
 *   }
 * }
 *
 * // A throw or a rejection in any of these fails with PluginCallbackFailed naming "reminders".
 * export const reminders = Plugin.fromPromise(new Reminders())
 * ```
 * @since 0.1.0
 * @category constructors
 */
export const fromPromise = (plugin: PromisePlugin): Plugin<PluginCallbackFailed> => {
  const name = plugin.name
  const withContext = <A>(f: (ctx: PluginContextShape) => Awaitable<A>, label: string) =>
    Effect.flatMap(PluginContext, (ctx) => callback(name, label, () => f(ctx)))
  return make({
    name,
    version: plugin.version,
    requires: plugin.requires,
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
          // An Effect-style action (`Contributions.action`) placed in a Promise-style plugin
          // type-checks (its handler returns a value); its Effect is run, not returned unrun. Like
          // every handler it may require only PluginContext (docs/library.md).
          handler: (input: never) =>
            Effect.flatMap(withContext((c) => def.handler(input, c), `action ${actionName}`), (result) =>
              Effect.isEffect(result) ? (result as Effect.Effect<unknown, unknown, PluginContext>) : Effect.succeed(result))
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
