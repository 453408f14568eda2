/**
 * The timings and the shard group every runner and reader of the fleet agrees on
 * (docs/cluster.md, "Runners and clients" and "The fleet's status"): ClusterRunner.ts configures
 * the runners and clients with them, FleetStatus.ts judges a runner's last heartbeat by them.
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"

/**
 * How long a runner's shard locks hold once it stops refreshing them, by default; `@effect/cluster`
 * also stops counting a runner whose last heartbeat is older (its `SqlRunnerStorage` lists only the
 * runners seen within it).
 * @since 0.1.0
 * @category internals
 */
export const lockExpiration: Duration.Duration = Duration.seconds(15)

/**
 * How often a runner checks the others by default (the runner-health singleton, below).
 * @since 0.1.0
 * @category internals
 */
export const healthCheckInterval: Duration.Duration = Duration.seconds(5)

/**
 * A runner's heartbeat: it refreshes its shard locks, and with them its `last_heartbeat`, every
 * third of the lock expiration (5 s by default), so a lock outlives two missed refreshes.
 * @since 0.1.0
 * @category internals
 */
export const heartbeatOf = (expiration: Duration.Duration): Duration.Duration =>
  Duration.millis(Math.max(1, Math.floor(Duration.toMillis(expiration) / 3)))

/**
 * A runner whose last heartbeat is older than this has missed two in a row: it is silent (stopped,
 * frozen, or cut off from the database) and its host is shown `down` (FleetStatus.ts). 10 s with
 * the default expiration, so that a silent host is seen before its locks even expire.
 * @since 0.1.0
 * @category internals
 */
export const silentAfter: Duration.Duration = Duration.times(heartbeatOf(lockExpiration), 2)

/**
 * The shard group in which `@effect/cluster` registers its own singletons, the runner-health check
 * among them (`Sharding.registerSingleton` without a `shardGroup`, the group `ShardingConfig`'s
 * defaults name). A singleton runs on the runner that holds its shard, so unless some runner
 * serves this group the health checks never run: every runner of ours serves it beside its host's
 * group and the fleet's.
 * @since 0.1.0
 * @category internals
 */
export const clusterGroup = "default"

/**
 * The prefix of `@effect/cluster`'s tables in the shared database.
 * @since 0.1.0
 * @category internals
 */
export const tablePrefix = "city_cluster"

/**
 * The shard group every runner serves beside its host's: the fleet's own work, which any host may
 * do (a sweep's workflow), as opposed to an endpoint's, which only its host does.
 * @since 0.1.0
 * @category internals
 */
export const fleetGroup = "fleet"
