/**
 * The lifecycle context (docs/city-plugin-lifecycle.md: "Both methods receive the same stable
 * PluginLifecycleContext"): one object per plugin instance, the same for initialize and dispose.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { ReloadRejected } from "../schema/Errors.ts"
import type { PluginChange } from "../schema/PluginChange.ts"

export { PluginChange } from "../schema/PluginChange.ts"

/**
 * What initialize and dispose see of their plugin instance: name, version, storage, logs, Scope and
 * `requestReload`.
 * @since 0.1.0
 * @category models
 */
export interface PluginLifecycleContextShape {
  /** The plugin's name. */
  readonly name: string
  /** The plugin's version, if it has one. */
  readonly version: string | undefined
  /**
   * The plugin's storage directory under the City's root (`<root>/data/<name>`), created the first
   * time the plugin reads `storage.path`.
   */
  readonly storage: { readonly path: string }
  /** Logs annotated with `plugin=<name>`. */
  readonly log: {
    readonly debug: (message: string) => Effect.Effect<void>
    readonly info: (message: string) => Effect.Effect<void>
    readonly warn: (message: string) => Effect.Effect<void>
    readonly error: (message: string) => Effect.Effect<void>
  }
  /**
   * The plugin instance's own Scope: closing it is dispose. Long-lived work started after
   * initialize (a timer a handler arms, a worker) is forked into it with `Effect.forkIn(scope)`
   * so that dispose interrupts it.
   */
  readonly scope: Scope.Scope
  /**
   * Asks the host to apply a change of this plugin: `{ mode: "reload", skills }` replaces its
   * skill set live, `{ mode: "restart", reason }` rebuilds the plugin set (a new generation).
   * Fails with ReloadRejected when the host cannot (a City without a loader, a closing City), so
   * the plugin can report "saved but not applied".
   */
  readonly requestReload: (change: PluginChange) => Effect.Effect<void, ReloadRejected>
  /**
   * The plugin's settings: for a folder plugin, its object under `config` in `plugins.json`,
   * decoded against the manifest's `configSchema` with the fields' defaults applied
   * (docs/plugin-loader.md, "Configuration"); for a plugin added by code, what `add` was given
   * (default: none).
   */
  readonly config: Readonly<Record<string, unknown>>
  /** The keys of `required` config fields that have neither a stored value nor a default. */
  readonly configUnset: ReadonlyArray<string>
}

/**
 * A plugin instance's settings, as the host gives them to `add`.
 * @since 0.1.0
 * @category models
 */
export interface PluginConfig {
  /** The settings by key, the fields' defaults applied. */
  readonly values: Readonly<Record<string, unknown>>
  /** The keys of `required` fields with neither a value nor a default. */
  readonly unset: ReadonlyArray<string>
}

const noConfig: PluginConfig = { values: {}, unset: [] }

/**
 * The lifecycle context as a service: `yield* PluginLifecycleContext` inside initialize.
 * @since 0.1.0
 * @category tags
 */
export class PluginLifecycleContext extends Context.Tag("effect-city/PluginLifecycleContext")<
  PluginLifecycleContext,
  PluginLifecycleContextShape
>() {}

type Log = PluginLifecycleContextShape["log"]

const makeLog = (name: string): Log => {
  const at = (level: "debug" | "info" | "warn" | "error") => (message: string) => {
    const log = level === "debug"
      ? Effect.logDebug(message)
      : level === "info"
      ? Effect.logInfo(message)
      : level === "warn"
      ? Effect.logWarning(message)
      : Effect.logError(message)
    return Effect.annotateLogs(log, "plugin", name)
  }
  return { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") }
}

/**
 * One object per instance, its log functions and default `requestReload` made the first time they
 * are read (most plugins never read them, and adding a plugin is a measured path). Both are read
 * through getters, so `const { log, requestReload } = ctx` works like on a plain object.
 */
class LifecycleContextImpl implements PluginLifecycleContextShape {
  #log: Log | undefined
  #requestReload: PluginLifecycleContextShape["requestReload"] | undefined
  constructor(
    readonly name: string,
    readonly version: string | undefined,
    readonly storage: { readonly path: string },
    readonly scope: Scope.Scope,
    requestReload: PluginLifecycleContextShape["requestReload"] | undefined,
    private readonly settings: PluginConfig
  ) {
    this.#requestReload = requestReload
  }
  get config(): Readonly<Record<string, unknown>> {
    return this.settings.values
  }
  get configUnset(): ReadonlyArray<string> {
    return this.settings.unset
  }
  get log(): Log {
    return this.#log ??= makeLog(this.name)
  }
  get requestReload(): PluginLifecycleContextShape["requestReload"] {
    const name = this.name
    return this.#requestReload ??= (change) =>
      Effect.fail(new ReloadRejected({ plugin: name, mode: change.mode, reason: "this City has no plugin loader" }))
  }
}

/**
 * Makes the lifecycle context of one plugin instance; without `requestReload` a request fails
 * with ReloadRejected (a City without a plugin loader).
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: {
  readonly name: string
  readonly version: string | undefined
  readonly storage: { readonly path: string }
  readonly scope: Scope.Scope
  readonly requestReload?: PluginLifecycleContextShape["requestReload"] | undefined
  readonly config?: PluginConfig | undefined
}): PluginLifecycleContextShape =>
  new LifecycleContextImpl(
    options.name,
    options.version,
    options.storage,
    options.scope,
    options.requestReload,
    options.config ?? noConfig
  )
