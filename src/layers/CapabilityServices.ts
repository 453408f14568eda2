/**
 * Wiring of the capability part: the state root first (everything reads or
 * writes under it), then the host configuration, the document stores, the
 * command runner and the log, then the calls, then the joints and the views.
 * Node's file system and path are provided (`NodeFileSystem.layer`, `NodePath.layer`), so the
 * result needs nothing else.
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as CommandRunner from "../services/capabilities/CommandRunner.ts"
import type * as LifecycleLog from "../services/capabilities/LifecycleLog.ts"
import * as internal from "./internal/capabilityServices.ts"

/**
 * Where the capability services keep their state, and how they run commands and write the log.
 * @since 0.1.0
 * @category models
 */
export interface CapabilitiesConfig {
  /** The state root, `$CITY_ROOT`. */
  readonly root: string
  /** How long a mutation waits for the root lock before failing with `RootLockBusy` (default 10 minutes). */
  readonly lockWait?: Duration.DurationInput
  /** Told who holds the root lock after one second of waiting for it (`StateRoot`'s `lockNotice`). */
  readonly lockNotice?: (text: string) => Effect.Effect<void>
  /** After a command's timeout, how long its process group has between SIGTERM and SIGKILL (default 2 s). */
  readonly killGrace?: Duration.DurationInput
  /** Rotation of `lifecycle.log`. */
  readonly log?: LifecycleLog.LifecycleLogConfig
}

/**
 * The services `layer` provides.
 * @since 0.1.0
 * @category models
 */
export type CapabilityServices = Layer.Layer.Success<ReturnType<typeof layer>>

/**
 * Why the capability services could not be built (an unreadable state root or host configuration).
 * @since 0.1.0
 * @category models
 */
export type CapabilityServicesError = Layer.Layer.Error<ReturnType<typeof layer>>

/**
 * Every capability service, on Node.
 * @since 0.1.0
 * @category layers
 */
export const layer = (config: CapabilitiesConfig) =>
  internal.layerWith(config, CommandRunner.layer(config.killGrace ? { killGrace: config.killGrace } : {}))
