/**
 * The live application's services over a given owed-work store (docs/cluster.md: the files on one
 * host, SQL for many): the live joints, the applier, the store and the fingerprints.
 * @since 0.1.0
 */
import * as Layer from "effect/Layer"
import type * as CommandsHost from "../../services/live/CommandsHost.ts"
import * as DaemonHostedHost from "../../services/live/DaemonHostedHost.ts"
import * as Applier from "../../services/live/Applier.ts"
import * as Fingerprints from "../../services/live/Fingerprints.ts"
import * as LiveJoints from "../../services/live/LiveJoints.ts"
import type { Reloads } from "../../services/owed/Reloads.ts"
import type * as CapabilityServices from "../CapabilityServices.ts"
import { routed } from "./routedHost.ts"

/**
 * The services over `reloads`.
 * @since 0.1.0
 * @category internals
 */
export const servicesWith = <E, R>(reloads: Layer.Layer<Reloads, E, R>) =>
  LiveJoints.layer.pipe(
    Layer.provideMerge(Applier.layer),
    Layer.provideMerge(Layer.mergeAll(reloads, Fingerprints.layer))
  )

/**
 * Every capability and live service on Node over the stores given: the owed-work store and the
 * capability services (`LiveApplication.layer` is this over the state root's files; a host of a
 * fleet gives the fleet's database: docs/cluster.md). The `city` runtimes go through
 * `DaemonHostedHost` (the daemon applies), the others through the Commands host.
 * @since 0.1.0
 * @category internals
 */
export const layerWithStores = <RE, RR, CE>(
  commands: CommandsHost.CommandsHostConfig,
  stores: {
    readonly reloads: Layer.Layer<Reloads, RE, RR>
    readonly capabilities: Layer.Layer<CapabilityServices.CapabilityServices, CE>
  }
) =>
  servicesWith(stores.reloads).pipe(
    Layer.provideMerge(routed(DaemonHostedHost.make(), commands)),
    Layer.provideMerge(stores.reloads),
    Layer.provideMerge(stores.capabilities)
  )
