/**
 * One host of the fleet (docs/cluster.md, "A host in the fleet"): its stores on the shared
 * database and its runner serving its endpoints' messages through its own services.
 *
 * - `layer(options)`: the runner (`ClusterRunner.layer`) whose `HostWork` is the host's endpoint
 *   calls (a `Provision` runs the endpoint's call under the host's root lock, records it,
 *   converges the endpoint through the host's applier); the host is
 *   announced in the host table at start with its `host.json`, and seen again every 30 s; processed
 *   messages older than a week are pruned every hour (`ClusterRetention`, started once the runner's
 *   storage has made the cluster's tables); and it runs the fleet's
 *   sweeps (`Sweep`, on `@effect/cluster`'s workflow engine, their calls through
 *   `ClusterFleetCalls`) whose shard it holds.
 *
 * What stays on the host's own disk, as on one host: the endpoint records (`state/endpoints/`),
 * the lifecycle log, the process records, the fingerprints, the plugin registry, leases, Sessions
 * and the loader. They describe this machine's processes and files; the fleet reads them through
 * the host (its outcomes in a sweep's report).
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import { RuntimeProfiles } from "../capabilities/RuntimeProfiles.ts"
import * as ClusterWorkflowEngine from "@effect/cluster/ClusterWorkflowEngine"
import * as ClusterFleetCalls from "./ClusterFleetCalls.ts"
import * as ClusterRetention from "./ClusterRetention.ts"
import * as ClusterRunner from "./ClusterRunner.ts"
import { HostWork } from "./HostWork.ts"
import * as internal from "./internal/hostWork.ts"
import * as SqlHosts from "./SqlHosts.ts"
import * as Sweep from "./Sweep.ts"

const announced = (host: string) =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const hosts = yield* SqlHosts.Hosts
    yield* hosts.announce(host, (yield* RuntimeProfiles).config)
    yield* Effect.forkScoped(
      Effect.repeat(Effect.ignore(hosts.seen(host)), Schedule.spaced("30 seconds"))
    )
  }))

/**
 * The host's runner, announced: serves its endpoints' messages through its own services.
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: ClusterRunner.RunnerOptions) => {
  const runner = ClusterRunner.layer(options).pipe(Layer.provide(Layer.effect(HostWork, internal.make)))
  // The fleet's sweeps run on whichever host's runner holds their shard (the fleet's group).
  const sweeps = Sweep.layer().pipe(
    Layer.provide(Layer.merge(ClusterFleetCalls.layer, ClusterWorkflowEngine.layer)),
    Layer.provideMerge(runner),
    Layer.provide(SqlHosts.layer)
  )
  // The prune after the runner: its storage made the cluster's tables it deletes from.
  return Layer.scopedDiscard(ClusterRetention.run()).pipe(
    Layer.provideMerge(Layer.merge(sweeps, announced(options.host).pipe(Layer.provide(SqlHosts.layer))))
  )
}
