/**
 * A host's runner and a client of the fleet, on `@effect/cluster` over one SQL database
 * (docs/cluster.md, "Runners and clients").
 *
 * A **runner** (`layer`) is what `city daemon --cluster` adds to a host: `Sharding` with the
 * endpoint entity's handlers registered, serving the shards of its host's shard group only (each
 * endpoint's shard group is its host: EndpointEntity.ts), reached by the other runners and clients
 * over TCP at `address`. A **client** (`clientLayer`) sends messages and runs no entity: what the
 * other `city` verbs are.
 *
 * Decisions where the spec is silent:
 * - messages and runners live in the same database as the stores, in tables prefixed
 *   `city_cluster` (`@effect/cluster`'s own schema, created by it);
 * - shard locks are table locks (`shardLockDisableAdvisory`): PostgreSQL advisory lock numbers are
 *   derived from each runner's own list of shard groups, so runners of different hosts (whose
 *   lists differ) would take each other's numbers and starve;
 * - a runner serves three shard groups, its host's, the fleet's (`fleetGroup`: a sweep's workflow,
 *   which any host may run) and `@effect/cluster`'s own `default`, where its runner-health
 *   singleton lives (internal/runnerDefaults.ts: served by no runner, the health checks would never
 *   run): the assignments of a group come from the runners registered in it, so no runner needs
 *   the fleet's list of hosts;
 * - a runner whose process dies is found by the health check, which one runner runs for all
 *   (`healthCheckInterval`, default 5 s, then pings: a refused connection fails at once, a stopped
 *   process only after its pings time out); it is marked unhealthy and no longer assigned shards.
 *   A runner that stops refreshing its locks (its heartbeat, every third of `lockExpiration`) is
 *   dropped by every runner once they expire (`lockExpiration`, default 15 s), whatever the pings
 *   said; its locks can then be taken. A runner that stops cleanly releases its shards at once;
 * - a message's answer is kept until it is saved: `@effect/cluster` gives up saving it after 5
 *   tries 200 ms apart, and then nothing delivers the message again while the runner lives, so the
 *   runner's message storage tries the save again until the database takes it
 *   (internal/keptAnswers.ts; docs/cluster.md, "Faults");
 * - clients judge runners by the same `lockExpiration` as the runners (`@effect/cluster`'s own
 *   default is 35 s);
 * - the storage layers, which create `@effect/cluster`'s tables when they are built, are built
 *   under the fleet's table-creation lock (internal/tableCreation.ts): hosts started at once on an
 *   empty PostgreSQL database would otherwise create the same tables at once, and one would fail;
 * - an endpoint's messages are handled one at a time (the entity's concurrency is 1).
 * @since 0.1.0
 */
import * as MessageStorage from "@effect/cluster/MessageStorage"
import * as RunnerAddress from "@effect/cluster/RunnerAddress"
import * as Runners from "@effect/cluster/Runners"
import type * as Sharding from "@effect/cluster/Sharding"
import * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as SocketRunner from "@effect/cluster/SocketRunner"
import * as RunnerHealth from "@effect/cluster/RunnerHealth"
import * as SqlMessageStorage from "@effect/cluster/SqlMessageStorage"
import * as SqlRunnerStorage from "@effect/cluster/SqlRunnerStorage"
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import type * as SocketServer from "@effect/platform/SocketServer"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { HostWork } from "./HostWork.ts"
import { handlers } from "./internal/endpointHandlers.ts"
import { keepAnswers } from "./internal/keptAnswers.ts"
import * as defaults from "./internal/runnerDefaults.ts"
import { serializedLayer } from "./internal/tableCreation.ts"

/**
 * The shards of each host: the unit of balancing between one host's runners. Every runner and
 * client must agree on it (an entity's shard is its id's hash modulo this number).
 * @since 0.1.0
 * @category constants
 */
export const shardsPerHost = 60

/**
 * A host runner's settings.
 * @since 0.1.0
 * @category models
 */
export interface RunnerOptions {
  /** The host's name (a `Name`): the runner's one shard group. */
  readonly host: string
  /** Where the other runners and clients reach this runner (it listens there too). */
  readonly address: { readonly host: string; readonly port: number }
  /** Where it listens, when not at `address` (behind a NAT, `0.0.0.0`). */
  readonly listen?: { readonly host: string; readonly port: number } | undefined
  /** How long a dead runner's shard locks hold (default 15 s). */
  readonly lockExpiration?: Duration.DurationInput | undefined
  /** How often runners check each other (default 5 s). */
  readonly healthCheckInterval?: Duration.DurationInput | undefined
}

const shardingConfig = (options: RunnerOptions) => {
  const expiration = Duration.decode(options.lockExpiration ?? defaults.lockExpiration)
  const groups = [options.host, defaults.fleetGroup, defaults.clusterGroup]
  return ShardingConfig.layer({
    runnerAddress: Option.some(new RunnerAddress.RunnerAddress({ host: options.address.host, port: options.address.port })),
    runnerListenAddress: Option.map(
      Option.fromNullable(options.listen),
      (listen) => new RunnerAddress.RunnerAddress({ host: listen.host, port: listen.port })
    ),
    availableShardGroups: groups,
    assignedShardGroups: groups,
    shardsPerGroup: shardsPerHost,
    shardLockDisableAdvisory: true,
    shardLockExpiration: expiration,
    shardLockRefreshInterval: defaults.heartbeatOf(expiration),
    runnerHealthCheckInterval: options.healthCheckInterval ?? defaults.healthCheckInterval
  })
}

/**
 * `@effect/cluster`'s message storage, whose messages read for a runner keep their answers until
 * they are saved (internal/keptAnswers.ts).
 */
const messageStorage = Layer.effect(MessageStorage.MessageStorage, Effect.map(MessageStorage.MessageStorage, keepAnswers)).pipe(
  Layer.provide(SqlMessageStorage.layerWith({ prefix: defaults.tablePrefix }))
)

/** `@effect/cluster`'s message and runner storage, its tables created under the fleet's lock. */
const storage = serializedLayer(Layer.mergeAll(
  messageStorage,
  SqlRunnerStorage.layerWith({ prefix: defaults.tablePrefix })
))

/**
 * A host's runner: `Sharding` serving its host's endpoints through `HostWork`. Fresh, as
 * `clientLayer` is: both are built from `@effect/cluster`'s own layers (`Sharding.layer`, the
 * storage, whose behaviour depends on the `ShardingConfig` each is given), and a layer shared by
 * reference in one application is built once: a runner and a client composed together would
 * otherwise be one `Sharding`.
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: RunnerOptions): Layer.Layer<
  Sharding.Sharding | MessageStorage.MessageStorage,
  SocketServer.SocketServerError | SqlError,
  SqlClient.SqlClient | HostWork
> =>
  Layer.fresh(handlers.pipe(
    Layer.provideMerge(SocketRunner.layer),
    Layer.provide(NodeClusterSocket.layerSocketServer),
    Layer.provide(RunnerHealth.layerPing.pipe(Layer.provide(Runners.layerRpc))),
    Layer.provide(NodeClusterSocket.layerClientProtocol),
    Layer.provideMerge(storage),
    Layer.provide(shardingConfig(options)),
    Layer.provide(RpcSerialization.layerMsgPack)
  ))

/**
 * A client of the fleet: sends messages to any host's endpoints, runs none.
 * @since 0.1.0
 * @category layers
 */
export const clientLayer: Layer.Layer<
  Sharding.Sharding | MessageStorage.MessageStorage,
  SqlError,
  SqlClient.SqlClient
> = Layer.fresh(SocketRunner.layerClientOnly.pipe(
  Layer.provide(NodeClusterSocket.layerClientProtocol),
  Layer.provideMerge(storage),
  Layer.provide(ShardingConfig.layer({
    runnerAddress: Option.none(),
    shardsPerGroup: shardsPerHost,
    shardLockDisableAdvisory: true,
    shardLockExpiration: defaults.lockExpiration
  })),
  Layer.provide(RpcSerialization.layerMsgPack)
))
