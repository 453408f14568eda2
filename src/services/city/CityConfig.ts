/**
 * The City's options, resolved to their defaults once; from code (`resolve(options)`) or from the
 * environment through Effect `Config` (`config`). The `CityConfig` service holds the City's
 * timeouts only: the root is the one state root service's (services/root/StateRoot.ts), which the
 * City reads its plugins' data folders from.
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Path from "@effect/platform/Path"
import * as StateRoot from "../root/StateRoot.ts"

/**
 * The City's options as a host gives them: every one optional, with its default.
 * @since 0.1.0
 * @category models
 */
export interface CityOptions {
  /** The City's state root; plugin storage lives in `<root>/data/<name>`. Default: see services/root/CityRoot.ts. */
  readonly root?: string | undefined
  /** Bound on each plugin's initialize. Default 30 seconds. */
  readonly initializeTimeout?: Duration.DurationInput | undefined
  /** Bound on each plugin's dispose, and on close's wait for a plugin's last lease. Default 10 seconds. */
  readonly disposeTimeout?: Duration.DurationInput | undefined
  /** How many plugins close disposes at once (in reverse name order): a count or `"unbounded"`. Default 1. */
  readonly disposeConcurrency?: number | "unbounded" | undefined
  /** How long close lets running Steps and calls finish before interrupting them. Default 10 seconds. */
  readonly drainTimeout?: Duration.DurationInput | undefined
}

/**
 * The City's timeouts resolved: every default applied.
 * @since 0.1.0
 * @category models
 */
export interface CityConfigShape {
  readonly initializeTimeout: Duration.Duration
  readonly disposeTimeout: Duration.Duration
  readonly disposeConcurrency: number | "unbounded"
  readonly drainTimeout: Duration.Duration
}

/**
 * The resolved options as a service, read by the City's own services.
 * @since 0.1.0
 * @category tags
 */
export class CityConfig extends Context.Tag("effect-city/CityConfig")<CityConfig, CityConfigShape>() {}

/**
 * Resolves the timeouts of `options` to their defaults (see `CityOptions`).
 * @since 0.1.0
 * @category constructors
 */
export const resolve = (options: CityOptions = {}): CityConfigShape => ({
  initializeTimeout: Duration.decode(options.initializeTimeout ?? "30 seconds"),
  disposeTimeout: Duration.decode(options.disposeTimeout ?? "10 seconds"),
  disposeConcurrency: options.disposeConcurrency === "unbounded"
    ? "unbounded"
    : Math.max(1, Math.floor(options.disposeConcurrency ?? 1)),
  drainTimeout: Duration.decode(options.drainTimeout ?? "10 seconds")
})

/**
 * The options from the environment: `CITY_ROOT` (unset or empty: `~/.city`), and the durations
 * `CITY_INITIALIZE_TIMEOUT`, `CITY_DISPOSE_TIMEOUT`, `CITY_DRAIN_TIMEOUT` (e.g. `30 seconds`),
 * `CITY_DISPOSE_CONCURRENCY` (a number). An unset variable keeps its default; a malformed one is a
 * ConfigError naming it.
 * @since 0.1.0
 * @category constructors
 */
export const config: Config.Config<CityOptions> = Config.all({
  root: Config.option(Config.string("CITY_ROOT")),
  initializeTimeout: Config.option(Config.duration("CITY_INITIALIZE_TIMEOUT")),
  disposeTimeout: Config.option(Config.duration("CITY_DISPOSE_TIMEOUT")),
  drainTimeout: Config.option(Config.duration("CITY_DRAIN_TIMEOUT")),
  disposeConcurrency: Config.option(Config.integer("CITY_DISPOSE_CONCURRENCY"))
}).pipe(
  Config.map((c) => ({
    root: Option.getOrUndefined(Option.filter(c.root, (r) => r !== "")),
    initializeTimeout: Option.getOrUndefined(c.initializeTimeout),
    disposeTimeout: Option.getOrUndefined(c.disposeTimeout),
    drainTimeout: Option.getOrUndefined(c.drainTimeout),
    disposeConcurrency: Option.getOrUndefined(c.disposeConcurrency)
  }))
)

/**
 * The City's configuration of `options` as a Layer: its timeouts, and the state root on its root
 * (`StateRoot.layerShared`).
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: CityOptions = {}) =>
  Layer.merge(
    Layer.succeed(CityConfig, resolve(options)),
    StateRoot.layerShared({ root: options.root }).pipe(Layer.provide(Path.layer))
  )
