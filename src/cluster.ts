/**
 * `effect-city/cluster`: the stores of a City on `@effect/sql`, for hosts that share one database
 * (docs/cluster.md). Nothing else in the package loads this entry point or the modules it reaches
 * (`@effect/cluster`, `@effect/sql`, `@effect/workflow`, `@effect/rpc`): a City on one host runs on
 * its files without them.
 *
 * - `SqlReloads`: the owed-reload store (the `Reloads` service) over any `SqlClient`, its table created by
 *   `@effect/sql`'s `Migrator`.
 * - `EndpointEntity`, `HostWork`, `ClusterRunner`, `ClusterHost`: endpoints as entities with host
 *   affinity, a runner and a client, one host of the fleet on its own services.
 * - `Sweep`: `register` / `sync` / `unregister` across hosts as the durable workflow `CapabilitySweep`,
 *   its calls made through `FleetCalls` (the endpoints of every host, and the call to one host).
 * - `ClusterFleetCalls`: `FleetCalls` over the SQL stores and the endpoint entities.
 * - `SqlCapabilities`, `SqlPeers`, `SqlHosts`: the declaration store (`Capabilities`, fleet-wide, with
 *   revisions), the peer store (`Peers`, per host, and the fleet's peers) and the host table (`Hosts`).
 * - `Migrations`: the one migration set of every table above.
 *
 * `SqlCapabilities.layer` and `SqlPeers.layer` provide the Tags `effect-city` exports as
 * `Capabilities.Capabilities` and `Peers.Peers`.
 *
 * ```ts
 * import { FleetCalls, SqlReloads, Sweep } from "effect-city/cluster"
 * ```
 * @module
 * @since 0.1.0
 */

/**
 * The owed-reload store on SQL: the `Reloads` service over any `SqlClient`.
 * @since 0.1.0
 */
export * as SqlReloads from "./services/cluster/SqlReloads.ts"
/**
 * An endpoint as an `@effect/cluster` entity whose shard group is its host: its one message
 * (`Provision`, a sweep's call), its id.
 * @since 0.1.0
 */
export * as EndpointEntity from "./services/cluster/EndpointEntity.ts"

/**
 * What an endpoint's messages ask of their host: the Tag a host runner provides.
 * @since 0.1.0
 */
export * as HostWork from "./services/cluster/HostWork.ts"

/**
 * A host's runner (`Sharding` serving its host's endpoints) and a client of the fleet, over the
 * shared SQL database.
 * @since 0.1.0
 */
export * as ClusterRunner from "./services/cluster/ClusterRunner.ts"

/**
 * One host of the fleet: its stores on the shared database and its runner, serving its endpoints'
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
 * The declaration store on SQL: the `Capabilities` service over any `SqlClient`, one row per
 * capability for the fleet, each `store` a new revision.
 * @since 0.1.0
 */
export * as SqlCapabilities from "./services/cluster/SqlCapabilities.ts"
/**
 * The peer store on SQL: the `Peers` service of one host over any `SqlClient`, and every host's
 * peers (`fleet`).
 * @since 0.1.0
 */
export * as SqlPeers from "./services/cluster/SqlPeers.ts"
/**
 * The hosts of the fleet on SQL: each host's runtime profiles, start and last sight (`Hosts`).
 * @since 0.1.0
 */
export * as SqlHosts from "./services/cluster/SqlHosts.ts"
/**
 * The one migration set of the SQL stores, recorded in `city_migrations`.
 * @since 0.1.0
 */
export * as Migrations from "./services/cluster/Migrations.ts"
/**
 * The owed-work store's Tag, which `SqlReloads.layer` provides (a City on one host provides it from
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
/**
 * `FleetCalls` on the cluster: the endpoints of every host listed from the SQL stores, each call
 * carried to its host's runner by the endpoint entities.
 * @since 0.1.0
 */
export * as ClusterFleetCalls from "./services/cluster/ClusterFleetCalls.ts"
