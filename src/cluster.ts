/**
 * `effect-city/cluster`: a City's stores on `@effect/sql`, for hosts that share one database
 * (docs/cluster.md). Nothing else in the package loads this entry point or the modules it reaches
 * (`@effect/cluster`, `@effect/sql`, `@effect/workflow`, `@effect/rpc`): a City on one host runs on
 * its files without them.
 *
 * - `SqlStores`: one host's stores over any `SqlClient`, as one layer (`SqlStores.layer({ host })`):
 *   the declaration store (`Capabilities`, fleet-wide, with revisions), the host's peer store
 *   (`Peers`) and owed-work store (`Reloads`), the fleet's host table (`Hosts`), their tables
 *   created by one migration set.
 * - `ClusterRunner`, `ClusterHost`: a host's runner and a client of the fleet; one host of the fleet
 *   on its own services. `ClusterRetention`: the pruning of processed messages.
 * - `Sweep`: `register` / `sync` / `unregister` across hosts as the durable workflow `CapabilitySweep`,
 *   its calls made through `FleetCalls` (the endpoints of every host, and the call to one host).
 *
 * The stores provide the Tags `effect-city` exports as `Capabilities.Capabilities` and
 * `Capabilities.Peers`, and `Reloads`, exported here.
 *
 * ```ts
 * import { Reloads, SqlStores, Sweep } from "effect-city/cluster"
 * ```
 * @module
 * @since 0.1.0
 */

/**
 * One host's stores on SQL as one layer: declarations, peers, owed work and the host table, with
 * their migrations.
 * @since 0.1.0
 */
export * as SqlStores from "./services/cluster/SqlStores.ts"

/**
 * A host's runner (`Sharding` serving its host's endpoints) and a client of the fleet, over the
 * shared SQL database.
 * @since 0.1.0
 */
export * as ClusterRunner from "./services/cluster/ClusterRunner.ts"

/**
 * One host of the fleet: its runner on the shared database, serving its endpoints'
 * messages through its own applier and endpoint calls, announced in the host table.
 * @since 0.1.0
 */
export * as ClusterHost from "./services/cluster/ClusterHost.ts"

/**
 * The retention of processed messages: `prune`, and the hourly job every host's runner runs.
 * @since 0.1.0
 */
export * as ClusterRetention from "./services/cluster/ClusterRetention.ts"

/**
 * The owed-work store's Tag, which `SqlStores.layer` provides (a City on one host provides it from
 * its files), and an endpoint's key in it.
 * @since 0.1.0
 */
export { type EndpointKey, Reloads } from "./services/owed/Reloads.ts"
/**
 * A capability's sweep across hosts as a durable workflow: `CapabilitySweep`, its layer and `run`.
 * @since 0.1.0
 */
export * as Sweep from "./services/cluster/Sweep.ts"
/**
 * What a sweep across hosts calls: the `FleetCalls` Tag (every host's endpoints of a capability,
 * and one call carried to an endpoint's host), its models and `HostUnavailable`.
 * @since 0.1.0
 */
export * as FleetCalls from "./services/cluster/FleetCalls.ts"
