/**
 * What a `register(ctx)` entry works with (docs/plugin-loader-lifecycle.md: "imports the ESM entry,
 * and calls register(ctx)"): the registration context, the per-call context of its handlers, and
 * the function's type. Types only, so `effect-city/plugin` can export them without loading the
 * loader (services/entry/Staging.ts implements them).
 * @since 0.1.0
 */
import type * as Schema from "effect/Schema"
import type { PluginChange, Skill } from "../schema/PluginChange.ts"
import type { Availability } from "./Contributions.ts"
import type { PluginContextShape } from "./PluginContext.ts"

type Awaitable<A> = A | PromiseLike<A>

/**
 * What a `register(ctx)` handler receives on each call: the fresh call context, plus `invoke` to
 * reach a sibling plugin, resolved from the current execution view at the time of the call.
 * @since 0.1.0
 * @category models
 */
export interface RegisterCallContext extends PluginContextShape {
  /** Calls an action of a sibling plugin, resolved from the current execution view, with this call's context. */
  readonly invoke: (plugin: string, action: string, input?: unknown) => Promise<unknown>
}

/**
 * The `ctx` of `register(ctx)`.
 * @since 0.1.0
 * @category models
 */
export interface RegisterContext {
  /** The plugin's name (its manifest's). */
  readonly name: string
  /** The plugin's version (its manifest's). */
  readonly version: string
  /** The plugin's storage directory under the City's root (`<root>/data/<name>`). */
  readonly storage: { readonly path: string }
  /**
   * The plugin's settings: its object under `config` in `plugins.json`, decoded against the
   * manifest's `configSchema`, the fields' defaults applied (docs/plugin-loader.md, "Configuration").
   */
  readonly config: Readonly<Record<string, unknown>>
  /** The keys of `required` config fields that have neither a stored value nor a default. */
  readonly configUnset: ReadonlyArray<string>
  /** Logs annotated with `plugin=<name>`. */
  readonly log: {
    readonly debug: (message: string) => void
    readonly info: (message: string) => void
    readonly warn: (message: string) => void
    readonly error: (message: string) => void
  }
  /** Rejects with the ReloadRejected error when the host cannot apply the change. */
  readonly requestReload: (change: PluginChange) => Promise<void>
  /** Registers an action by name; without an `input` Schema the input is passed through unchecked. */
  readonly registerAction: (
    name: string,
    action: {
      readonly input?: Schema.Schema.AnyNoContext | undefined
      readonly handler: (input: unknown, ctx: RegisterCallContext) => Awaitable<unknown>
    }
  ) => void
  /** Adds a handler to a hook point; a plugin's handlers of one point run in registration order. */
  readonly registerHook: (point: string, handler: (value: unknown, ctx: RegisterCallContext) => Awaitable<unknown>) => void
  /** Adds system text, fixed or per call; the texts are joined by a blank line in registration order. */
  readonly registerSystem: (system: string | ((ctx: RegisterCallContext) => Awaitable<string | undefined>)) => void
  /** Sets the availability check (the last one registered wins). */
  readonly registerAvailability: (check: (ctx: RegisterCallContext) => Awaitable<Availability>) => void
  /** Sets the plugin's skills (the last set registered wins). */
  readonly registerSkills: (skills: ReadonlyArray<Skill>) => void
  /** Runs `release` at dispose (reverse order), or at once if registration fails afterwards. */
  readonly onDispose: (release: () => Awaitable<void>) => void
}

/**
 * A `register(ctx)` function as an entry exports it.
 * @since 0.1.0
 * @category models
 */
export type RegisterFunction = (ctx: RegisterContext) => Awaitable<void>
