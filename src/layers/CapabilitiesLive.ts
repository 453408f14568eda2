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
import * as Capabilities from "../services/Capabilities.js"
import * as CommandRunner from "../services/CommandRunner.js"
import * as Host from "../services/Host.js"
import * as LifecycleLog from "../services/LifecycleLog.js"
import * as Peers from "../services/Peers.js"
import * as Provisioner from "../services/Provisioner.js"
import * as StateRoot from "../services/StateRoot.js"

export interface CapabilitiesConfig {
  readonly root: string
  readonly lockWait?: Duration.DurationInput
  readonly killGrace?: Duration.DurationInput
  readonly log?: LifecycleLog.LifecycleLogConfig
}

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
