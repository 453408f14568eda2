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
 * - a runner serves two shard groups, its host's and the fleet's (`fleetGroup`: a sweep's workflow,
 *   which any host may run): the assignments of a group come from the runners registered in it,
 *   so no runner needs the fleet's list of hosts;
 * - a runner whose process dies is found by the others' health checks (`healthCheckInterval`,
 *   default 5 s, then a few pings) and its shards are taken once its locks expire
 *   (`lockExpiration`, default 15 s, refreshed every third of it): the takeover after a `kill -9`
 *   is about their sum. A runner that stops cleanly releases its shards at once;
 * - the storage layers, which create `@effect/cluster`'s tables when they are built, are built
 *   under the fleet's table-creation lock (internal/tableCreation.ts): hosts started at once on an
 *   empty PostgreSQL database would otherwise create the same tables at once, and one would fail;
 * - an endpoint's messages are handled one at a time (the entity's concurrency is 1).
 * @since 0.1.0
 */
import type * as MessageStorage from "@effect/cluster/MessageStorage"
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
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { HostWork } from "./HostWork.ts"
import { handlers } from "./internal/endpointHandlers.ts"
import { serializedLayer } from "./internal/tableCreation.ts"

/**
 * The prefix of `@effect/cluster`'s tables in the shared database.
 * @since 0.1.0
 * @category constants
 */
export const tablePrefix = "city_cluster"

/**
 * The shard group every runner serves beside its host's: the fleet's own work, which any host may
 * do (a sweep's workflow), as opposed to an endpoint's, which only its host does.
 * @since 0.1.0
 * @category constants
 */
export const fleetGroup = "fleet"

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
  const expiration = Duration.decode(options.lockExpiration ?? Duration.seconds(15))
  return ShardingConfig.layer({
    runnerAddress: Option.some(new RunnerAddress.RunnerAddress({ host: options.address.host, port: options.address.port })),
    runnerListenAddress: Option.map(
      Option.fromNullable(options.listen),
      (listen) => new RunnerAddress.RunnerAddress({ host: listen.host, port: listen.port })
    ),
    availableShardGroups: [options.host, fleetGroup],
    assignedShardGroups: [options.host, fleetGroup],
    shardsPerGroup: shardsPerHost,
    shardLockDisableAdvisory: true,
    shardLockExpiration: expiration,
    shardLockRefreshInterval: Option.getOrElse(Duration.divide(expiration, 3), () => Duration.seconds(5)),
    runnerHealthCheckInterval: options.healthCheckInterval ?? Duration.seconds(5)
  })
}

/** `@effect/cluster`'s message and runner storage, its tables created under the fleet's lock. */
const storage = serializedLayer(Layer.mergeAll(
  SqlMessageStorage.layerWith({ prefix: tablePrefix }),
  SqlRunnerStorage.layerWith({ prefix: tablePrefix })
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
  Layer.provide(ShardingConfig.layer({ runnerAddress: Option.none(), shardsPerGroup: shardsPerHost, shardLockDisableAdvisory: true })),
  Layer.provide(RpcSerialization.layerMsgPack)
))
