/**
 * Wiring of the capability part: the state root first (everything reads or
 * writes under it), then the host configuration, the stores, the command runner
 * and the log, then the joints. Node's file system, path and command executor
 * are provided by `NodeContext.layer` here, so the result needs nothing else.
 * @since 0.1.0
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import type * as Duration from "effect/Duration"
import * as Layer from "effect/Layer"
import * as Capabilities from "../services/capabilities/Capabilities.ts"
import * as CommandRunner from "../services/capabilities/CommandRunner.ts"
import * as Host from "../services/capabilities/Host.ts"
import * as LifecycleLog from "../services/capabilities/LifecycleLog.ts"
import * as Peers from "../services/capabilities/Peers.ts"
import * as Provisioner from "../services/capabilities/Provisioner.ts"
import * as StateRoot from "../services/capabilities/StateRoot.ts"

export interface CapabilitiesConfig {
  readonly root: string
  readonly lockWait?: Duration.DurationInput
  readonly killGrace?: Duration.DurationInput
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

/** Every capability service, on Node. */
export const layer = (config: CapabilitiesConfig) => {
  const root = StateRoot.layer({ root: config.root, ...(config.lockWait ? { lockWait: config.lockWait } : {}) })
  const host = Host.layer.pipe(Layer.provideMerge(root))
  const stores = Layer.mergeAll(
    Capabilities.layer,
    Peers.layer,
    LifecycleLog.layer(config.log ?? {}),
    CommandRunner.layer(config.killGrace ? { killGrace: config.killGrace } : {})
  ).pipe(Layer.provideMerge(host))
  return Provisioner.layer.pipe(
    Layer.provideMerge(stores),
    Layer.provideMerge(NodeContext.layer)
  )
}
