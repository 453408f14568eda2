/**
 * The wiring of the capability part (CapabilityServices.ts) over a given command runner: tests pass
 * a scripted one, `CapabilityServices.layer` the real one.
 * @since 0.1.0
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import type * as Duration from "effect/Duration"
import * as Layer from "effect/Layer"
import * as Capabilities from "../../services/capabilities/Capabilities.ts"
import type * as CommandRunner from "../../services/capabilities/CommandRunner.ts"
import * as EndpointCalls from "../../services/capabilities/EndpointCalls.ts"
import * as EndpointRecords from "../../services/capabilities/EndpointRecords.ts"
import * as LifecycleLog from "../../services/capabilities/LifecycleLog.ts"
import * as Listings from "../../services/capabilities/Listings.ts"
import * as Peers from "../../services/capabilities/Peers.ts"
import * as ProcessRecords from "../../services/capabilities/ProcessRecords.ts"
import * as Provisioner from "../../services/capabilities/Provisioner.ts"
import * as RuntimeProfiles from "../../services/capabilities/RuntimeProfiles.ts"
import * as StateRoot from "../../services/root/StateRoot.ts"

/**
 * Every capability service over a given command runner (tests pass a scripted one).
 * @since 0.1.0
 * @category layers
 */
export const layerWith = <E, R>(
  config: StateRoot.StateRootConfig & {
    readonly killGrace?: Duration.DurationInput
    readonly log?: LifecycleLog.LifecycleLogConfig
  },
  runner: Layer.Layer<CommandRunner.CommandRunner, E, R>
) => layerWithStores(config, runner, fileStores)

/**
 * The declaration and peer stores on the state root's files: the default.
 * @since 0.1.0
 * @category internals
 */
export const fileStores = Layer.merge(Capabilities.layer, Peers.layer)

/**
 * The services with the declaration and peer stores given (`effect-city/cluster` gives them on
 * SQL: docs/cluster.md); everything else on the state root.
 * @since 0.1.0
 * @category internals
 */
export const layerWithStores = <E, R, SE, SR>(
  config: StateRoot.StateRootConfig & {
    readonly killGrace?: Duration.DurationInput
    readonly log?: LifecycleLog.LifecycleLogConfig
  },
  runner: Layer.Layer<CommandRunner.CommandRunner, E, R>,
  declarationsAndPeers: Layer.Layer<Capabilities.Capabilities | Peers.Peers, SE, SR>
) => {
  const root = StateRoot.layer({
    root: config.root,
    ...(config.lockWait ? { lockWait: config.lockWait } : {}),
    ...(config.lockNotice ? { lockNotice: config.lockNotice } : {})
  })
  const host = Layer.mergeAll(
    RuntimeProfiles.layer,
    ProcessRecords.layer(config.killGrace ? { killGrace: config.killGrace } : {})
  ).pipe(Layer.provideMerge(root))
  const stores = Layer.mergeAll(
    declarationsAndPeers,
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

