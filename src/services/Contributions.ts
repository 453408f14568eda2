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
  /**
   * The result's Schema, when the action implements a reference that declares one
   * (`Contributions.implement`): where the action runs in a worker, its result crosses encoded
   * with it.
   */
  readonly output?: Schema.Schema.AnyNoContext | undefined
  /**
   * The typed failure's Schema, when the action implements a reference that declares one: where
   * the action runs in a worker, a failure it accepts crosses encoded with it.
   */
  readonly error?: Schema.Schema.AnyNoContext | undefined
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

/** The brand of an action reference's result and failure types (types only). */
declare const ActionRefTypeId: unique symbol

/**
 * A reference to one plugin's action, typed on both ends (docs/library.md, "Plugin
 * dependencies"): its plugin, its name, its input Schema, the type of its result `O` and of its
 * own failure `E`. Declared beside the plugin (`Contributions.reference`), exported by its module,
 * implemented in its initialize (`Contributions.implement`), and called with `invoke(ref, input)`:
 * the compiler checks the input (the Schema's encoded form, as a caller passes it) and types the
 * result and the failure.
 *
 * At run time the input is decoded by the Schema as for every call. With an `output` Schema the
 * result is checked too (`ActionOutputRejected` when it does not match): in the host's thread it
 * is validated against the Schema's Type side (`Schema.validate`: the handler returns the Type, a
 * `Date` for `Schema.DateFromString`, with no encode and decode round trip to pay), from a worker
 * it is encoded there and decoded here. Without one it is the handler's, which `implement` ties to
 * the declared type. With an `error` Schema a failure of the handler that the Schema accepts
 * reaches the caller as itself (`E`, so `Effect.catchTag` works); any other failure and a defect
 * stay `ActionFailed`, an interruption an interruption. Both Schemas are what lets a result and a
 * failure cross from a plugin that runs in a worker (docs/plugin-loader.md, "Isolation").
 * @since 0.1.0
 * @category models
 */
export interface ActionRef<A, I, O, E = never> {
  /** Tells a reference apart (see `isActionRef`). */
  readonly _tag: "ActionRef"
  /** The plugin that contributes the action. */
  readonly plugin: string
  /** The action's name among its plugin's actions. */
  readonly action: string
  /** The Schema the input is decoded with. */
  readonly input: Schema.Schema<A, I, never>
  /** The result's Schema, when declared: the result is checked with it (and crosses a worker encoded). */
  // Its encoded side is free: a caller never sees it.
  readonly output?: Schema.Schema<O, any, never> | undefined
  /** The typed failure's Schema, when declared: a failure it accepts reaches the caller as itself. */
  readonly error?: Schema.Schema<E, any, never> | undefined
  /** The result's and the failure's types (types only). */
  readonly [ActionRefTypeId]?: { readonly output: () => O; readonly error: () => E }
}

/**
 * What `Contributions.reference` takes: the plugin, the action's name, its input Schema and,
 * optionally, its result's and its failure's Schemas.
 * @since 0.1.0
 * @category models
 */
export interface ReferenceSpec<A, I, O, OI, E, EI> {
  /** The plugin that contributes the action. */
  readonly plugin: string
  /** The action's name among its plugin's actions. */
  readonly action: string
  /** The Schema the input is decoded with. */
  readonly input: Schema.Schema<A, I, never>
  /** The result's Schema: the result is checked with it; `O` is its Type. */
  readonly output?: Schema.Schema<O, OI, never> | undefined
  /** The failure's Schema: a failure it accepts reaches the caller as itself; `E` is its Type. */
  readonly error?: Schema.Schema<E, EI, never> | undefined
}

const makeRef = <A, I, O, E>(spec: ReferenceSpec<A, I, O, unknown, E, unknown>): ActionRef<A, I, O, E> => ({
  _tag: "ActionRef",
  plugin: spec.plugin,
  action: spec.action,
  input: spec.input,
  ...(spec.output === undefined ? {} : { output: spec.output }),
  ...(spec.error === undefined ? {} : { error: spec.error })
})

/**
 * Declares a plugin's action by reference, in one of two forms:
 *
 * - `reference({ plugin, action, input, output?, error? })`: the result's type is the `output`
 *   Schema's Type (`unknown` without one) and the failure's the `error` Schema's (`never`, nothing
 *   typed, without one). With Schemas the result is checked at run time and the typed failure
 *   reaches the caller as itself; this is the form for a plugin that may run in a worker.
 * - `reference<O>()({ plugin, action, input, error? })`: the result's type is given, not checked at
 *   run time (an `output` Schema, if given, must have the Type `O`).
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Contributions } from "effect-city/plugin"
 *
 * class UnknownUser extends Schema.TaggedError<UnknownUser>()("UnknownUser", { user: Schema.String }) {}
 *
 * export const Find = Contributions.reference({
 *   plugin: "users",
 *   action: "find",
 *   input: Schema.String,
 *   output: Schema.Struct({ name: Schema.String, since: Schema.DateFromString }),
 *   error: UnknownUser
 * })
 * // in users' initialize:
 * const actions = {
 *   [Find.action]: Contributions.implement(Find, (user) =>
 *     user === "grace"
 *       ? Effect.succeed({ name: "Grace", since: new Date(0) })
 *       : Effect.fail(new UnknownUser({ user })))
 * }
 * // a caller: view.invoke(Find, "ada").pipe(Effect.catchTag("UnknownUser", ...))
 *
 * // The result's type alone, unchecked at run time:
 * export const Say = Contributions.reference<string>()({ plugin: "greeter", action: "say", input: Schema.Struct({ name: Schema.String }) })
 * ```
 * @since 0.1.0
 * @category constructors
 */
export function reference<A, I, O = unknown, OI = O, E = never, EI = E>(
  spec: ReferenceSpec<A, I, O, OI, E, EI>
): ActionRef<A, I, O, E>
/**
 * Declares a plugin's action by reference, its result's type `O` given (not checked at run time).
 * @since 0.1.0
 * @category constructors
 */
export function reference<O>(): <A, I, E = never, EI = E>(
  spec: ReferenceSpec<A, I, O, any, E, EI>
) => ActionRef<A, I, O, E>
/**
 * Both forms: called with a declaration, the reference; called with nothing, the curried form.
 * @since 0.1.0
 * @category constructors
 */
export function reference(spec?: ReferenceSpec<unknown, unknown, unknown, unknown, unknown, unknown>) {
  return spec === undefined ? makeRef : makeRef(spec)
}

/**
 * Holds a handler of a reference to the failures its `error` Schema declares: `unknown` (no
 * constraint) when they are all declared, or the reference declares no `error`; else an object
 * type whose one property names the rule and carries the undeclared failures, so the compiler's
 * message names them (a sibling handle's `SiblingUnavailable`, most often) rather than a property
 * the two error types differ in.
 * @since 0.1.0
 * @category models
 */
export type HandlerFailsOnlyAsDeclared<E, F> = [E] extends [never] ? unknown
  : [Exclude<F, E>] extends [never] ? unknown
  : {
    readonly "a handler may fail only with its reference's error; handle these (a sibling handle's SiblingUnavailable with Effect.catchTag)": Exclude<F, E>
  }

/**
 * The action a reference declares, with its handler: the handler gets the decoded input, must
 * return the declared result type and, when the reference declares an `error` Schema, may fail
 * only with its Type. The action carries the reference's `output` and `error` Schemas, so that
 * code running it elsewhere (a worker) can encode what crosses.
 * @since 0.1.0
 * @category constructors
 */
export const implement = <A, I, O, E, R = never, F = never>(
  ref: ActionRef<A, I, O, E>,
  handler:
    & ((input: A) => Effect.Effect<O, F, R>)
    & HandlerRequiresOnlyPluginContext<R>
    & HandlerFailsOnlyAsDeclared<E, F>
): AnyAction => {
  const implemented = action<A, I, O, unknown, R>({ input: ref.input, handler } as Parameters<typeof action<A, I, O, unknown, R>>[0])
  return ref.output === undefined && ref.error === undefined
    ? implemented
    : { ...implemented, output: ref.output, error: ref.error }
}

/**
 * Whether a value is an {@link ActionRef}.
 * @since 0.1.0
 * @category guards
 */
export const isActionRef = (u: unknown): u is ActionRef<unknown, unknown, unknown, unknown> =>
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
