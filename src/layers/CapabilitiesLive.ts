/**
 * Wiring of the capability part: the state root first (everything reads or
 * writes under it), then the host configuration, the document stores, the
 * command runner and the log, then the calls, then the joints and the views.
 * Node's file system and path are provided (`NodeFileSystem.layer`, `NodePath.layer`), so the
 * result needs nothing else.
 * @since 0.1.0
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Capabilities from "../services/capabilities/Capabilities.ts"
import * as CommandRunner from "../services/capabilities/CommandRunner.ts"
import * as ProcessRecords from "../services/capabilities/ProcessRecords.ts"
import * as EndpointCalls from "../services/capabilities/EndpointCalls.ts"
import * as EndpointRecords from "../services/capabilities/EndpointRecords.ts"
import * as Runtimes from "../services/capabilities/Runtimes.ts"
import * as LifecycleLog from "../services/capabilities/LifecycleLog.ts"
import * as Listings from "../services/capabilities/Listings.ts"
import * as Peers from "../services/capabilities/Peers.ts"
import * as Provisioner from "../services/capabilities/Provisioner.ts"
import * as StateRoot from "../services/capabilities/StateRoot.ts"

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
 * Every capability service over a given command runner (tests pass a scripted one).
 * @since 0.1.0
 * @category layers
 */
export const layerWith = <E, R>(
  config: CapabilitiesConfig,
  runner: Layer.Layer<CommandRunner.CommandRunner, E, R>
) => {
  const root = StateRoot.layer({
    root: config.root,
    ...(config.lockWait ? { lockWait: config.lockWait } : {}),
    ...(config.lockNotice ? { lockNotice: config.lockNotice } : {})
  })
  const host = Layer.mergeAll(
    Runtimes.layer,
    ProcessRecords.layer(config.killGrace ? { killGrace: config.killGrace } : {})
  ).pipe(Layer.provideMerge(root))
  const stores = Layer.mergeAll(
    Capabilities.layer,
    Peers.layer,
    EndpointRecords.layer,
    LifecycleLog.layer(config.log ?? {}),
    runner
  ).pipe(Layer.provideMerge(host))
  const calls = EndpointCalls.layer.pipe(Layer.provideMerge(stores))
  return Layer.mergeAll(Provisioner.layer, Listings.layer).pipe(
    Layer.provideMerge(calls),
    Layer.provideMerge(Layer.merge(NodeFileSystem.layer, NodePath.layer))
  )
}

/**
 * Every capability service, on Node.
 * @since 0.1.0
 * @category layers
 */
export const layer = (config: CapabilitiesConfig) =>
  layerWith(config, CommandRunner.layer(config.killGrace ? { killGrace: config.killGrace } : {}))
