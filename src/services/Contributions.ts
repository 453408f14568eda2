/**
 * What a plugin gives the host (docs/design.md "Core model"): actions, hooks, system text,
 * availability and skills. Contributions are the value initialize returns, so they are staged
 * while it runs and published only when it succeeds: a failed plugin contributes nothing, ever.
 * @since 0.1.0
 */
import type * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { Skill } from "../schema/PluginChange.ts"
import type { PluginContext, PluginContextShape } from "./PluginContext.ts"

/**
 * An action: its input Schema (decoded from the caller's unknown input) and its handler.
 * @since 0.1.0
 * @category models
 */
export interface Action<A, I, O, E> {
  /** The Schema the caller's unknown input is decoded with before the handler runs. */
  readonly input: Schema.Schema<A, I, never>
  /** Runs the action on the decoded input, with the call's PluginContext. */
  readonly handler: (input: A) => Effect.Effect<O, E, PluginContext>
}

/**
 * An action with its types erased, as the registry stores it.
 * @since 0.1.0
 * @category models
 */
export interface AnyAction {
  /** The Schema the caller's unknown input is decoded with. */
  readonly input: Schema.Schema.AnyNoContext
  /** The handler, its input type erased. */
  readonly handler: (input: never) => Effect.Effect<unknown, unknown, PluginContext>
}

/**
 * The rule every handler keeps, as a type: it may require `PluginContext` and nothing else (the
 * call provides the context; any other service is provided inside the handler, or reached through
 * the plugin's own initialize). A handler that requires more gets a property named by the rule
 * in its compile error, instead of an unrelated one.
 * @since 0.1.0
 * @category models
 */
export type HandlerRequiresOnlyPluginContext<R> = [Exclude<R, PluginContext>] extends [never] ? unknown
  : { readonly "a handler may require only PluginContext; provide these services inside it": Exclude<R, PluginContext> }

/**
 * Builds an action with the handler's input inferred from the Schema. Its handler may require only
 * `PluginContext` ({@link HandlerRequiresOnlyPluginContext}).
 * @since 0.1.0
 * @category constructors
 */
export const action = <A, I, O, E, R = never>(
  definition:
    & { readonly input: Schema.Schema<A, I, never>; readonly handler: (input: A) => Effect.Effect<O, E, R> }
    & HandlerRequiresOnlyPluginContext<R>
): AnyAction =>
  // The intersection above only type-checks when R is PluginContext or less: the handler is an
  // `Action` then, which the cast states.
  definition as unknown as Action<A, I, O, E>

/** The brand of an action reference's output type (a type only). */
declare const ActionRefTypeId: unique symbol

/**
 * A reference to one plugin's action, typed on both ends (docs/library.md, "Plugin
 * dependencies"): its plugin, its name, its input Schema and the type of its result. Declared
 * beside the plugin (`Contributions.reference`), exported by its module, implemented in its
 * initialize (`Contributions.implement`), and called with `invoke(ref, input)`: the compiler
 * checks the input (the Schema's encoded form, as a caller passes it) and types the result. At
 * run time the input is decoded by the Schema as for every call; the result is the handler's,
 * which `implement` ties to the declared type (a plugin loaded from a folder is called by name).
 * @since 0.1.0
 * @category models
 */
export interface ActionRef<A, I, O> {
  /** Tells a reference apart (see `isActionRef`). */
  readonly _tag: "ActionRef"
  /** The plugin that contributes the action. */
  readonly plugin: string
  /** The action's name among its plugin's actions. */
  readonly action: string
  /** The Schema the input is decoded with. */
  readonly input: Schema.Schema<A, I, never>
  /** The result's type (a type only). */
  readonly [ActionRefTypeId]?: () => O
}

/**
 * Declares a plugin's action by reference: `O` is the type of its result.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Contributions } from "effect-city/plugin"
 *
 * export const Say = Contributions.reference<string>()({ plugin: "greeter", action: "say", input: Schema.Struct({ name: Schema.String }) })
 * // in greeter's initialize:
 * const actions = { [Say.action]: Contributions.implement(Say, ({ name }) => Effect.succeed(`Hello ${name}`)) }
 * // a caller: view.invoke(Say, { name: "Grace" }) is an Effect of a string
 * ```
 * @since 0.1.0
 * @category constructors
 */
export const reference = <O>() =>
<A, I>(spec: { readonly plugin: string; readonly action: string; readonly input: Schema.Schema<A, I, never> }): ActionRef<A, I, O> => ({
  _tag: "ActionRef",
  plugin: spec.plugin,
  action: spec.action,
  input: spec.input
})

/**
 * The action a reference declares, with its handler: the handler gets the decoded input and must
 * return the declared result type.
 * @since 0.1.0
 * @category constructors
 */
export const implement = <A, I, O, E, R = never>(
  ref: ActionRef<A, I, O>,
  handler: ((input: A) => Effect.Effect<O, E, R>) & HandlerRequiresOnlyPluginContext<R>
): AnyAction => action<A, I, O, E, R>({ input: ref.input, handler } as Parameters<typeof action<A, I, O, E, R>>[0])

/**
 * Whether a value is an {@link ActionRef}.
 * @since 0.1.0
 * @category guards
 */
export const isActionRef = (u: unknown): u is ActionRef<unknown, unknown, unknown> =>
  typeof u === "object" && u !== null && (u as { readonly _tag?: unknown })._tag === "ActionRef"

/**
 * A hook handler: receives the value of its point and returns the value passed on. Handlers of one
 * point run in plugin name order, and within a plugin in the order given (a waterfall).
 * @since 0.1.0
 * @category models
 */
export type Hook = (value: unknown) => Effect.Effect<unknown, unknown, PluginContext>

/**
 * Whether a plugin can serve a call, with the reasons when it cannot.
 * @since 0.1.0
 * @category models
 */
export const Availability = Schema.Struct({
  available: Schema.Boolean,
  reasons: Schema.Array(Schema.String)
})
/**
 * Whether a plugin can serve a call, with the reasons when it cannot.
 * @since 0.1.0
 * @category models
 */
export type Availability = typeof Availability.Type

/**
 * Skills are plain data, resolved per turn; the loader can replace a plugin's set live.
 * @since 0.1.0
 * @category models
 */
export { Skill } from "../schema/PluginChange.ts"

/**
 * What a plugin's initialize returns: its actions, hooks, system text, availability and skills,
 * every part optional.
 * @since 0.1.0
 * @category models
 */
export interface Contributions {
  /** The actions, by action name. */
  readonly actions?: Readonly<Record<string, AnyAction>> | undefined
  /** The hook handlers, by hook point: one handler or several, run in the order given. */
  readonly hooks?: Readonly<Record<string, Hook | ReadonlyArray<Hook>>> | undefined
  /** System text for a call, or nothing. */
  readonly system?:
    | ((ctx: PluginContextShape) => Effect.Effect<string | undefined, unknown, PluginContext>)
    | undefined
  /** Whether the plugin can serve this call; a plugin without it is always available. */
  readonly availability?:
    | ((ctx: PluginContextShape) => Effect.Effect<Availability, unknown, PluginContext>)
    | undefined
  /** The skills, resolved per Turn (the loader can replace the set live). */
  readonly skills?: ReadonlyArray<Skill> | undefined
  /**
   * The services the plugin provides to its siblings, under their Tags (`Plugin.make({ provides })`;
   * a dependent reaches one with `Siblings.service(Tag)`).
   */
  readonly services?: Context.Context<never> | undefined
}

/**
 * Contributions of a plugin that gives the host nothing (it only holds resources, say).
 * @since 0.1.0
 * @category constructors
 */
export const empty: Contributions = {}
