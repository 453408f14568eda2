/**
 * The City's options (issue "City core", §5), resolved to their defaults once.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Layer from "effect/Layer"
import * as os from "node:os"
import * as path from "node:path"

export interface CityOptions {
  /** The City's state root; plugin storage lives in `<root>/plugins/<name>`. Default: `$CITY_ROOT`, else `~/.city`. */
  readonly root?: string | undefined
  /** Bound on each plugin's initialize. Default 30 seconds. */
  readonly initializeTimeout?: Duration.DurationInput | undefined
  /** Bound on each plugin's dispose. Default 10 seconds. */
  readonly disposeTimeout?: Duration.DurationInput | undefined
  /** How many plugins close disposes at once (in reverse name order). Default 1. */
  readonly disposeConcurrency?: number | undefined
  /** How long close lets running Steps and calls finish before interrupting them. Default 10 seconds. */
  readonly drainTimeout?: Duration.DurationInput | undefined
}

export interface CityConfigShape {
  readonly root: string
  readonly initializeTimeout: Duration.Duration
  readonly disposeTimeout: Duration.Duration
  readonly disposeConcurrency: number
  readonly drainTimeout: Duration.Duration
}

export class CityConfig extends Context.Tag("effect-city/CityConfig")<CityConfig, CityConfigShape>() {}

export const defaultRoot = (): string => process.env["CITY_ROOT"] ?? path.join(os.homedir(), ".city")

export const resolve = (options: CityOptions = {}): CityConfigShape => ({
  root: path.resolve(options.root ?? defaultRoot()),
  initializeTimeout: Duration.decode(options.initializeTimeout ?? "30 seconds"),
  disposeTimeout: Duration.decode(options.disposeTimeout ?? "10 seconds"),
  disposeConcurrency: Math.max(1, Math.floor(options.disposeConcurrency ?? 1)),
  drainTimeout: Duration.decode(options.drainTimeout ?? "10 seconds")
})

export const layer = (options: CityOptions = {}) => Layer.succeed(CityConfig, resolve(options))
