/**
 * The fleet at a glance (docs/cluster.md, "The fleet's status"): every host the database knows,
 * when it started and was last seen, whether a runner of it is registered now, its peers, its
 * endpoints and its owed work; and every row that could not be read. What `city fleet` prints, and
 * the fleet part of a fleet host's `city status` and status page.
 *
 * Decisions where the spec is silent:
 * - a host is `up` when a runner of its shard group is registered, healthy by `@effect/cluster`'s
 *   health check (`RunnerStorage.getRunners`, its public API), and has beaten within `silentAfter`
 *   (10 s: two heartbeats missed; internal/runnerDefaults.ts), else `down` (its messages wait in
 *   the database until it comes back). The health check sees a killed runner within about its
 *   interval (5 s), but not a stopped one in time nor one cut off from the database, and no public
 *   API gives the heartbeat: its age is read in the one module that reads the cluster's tables
 *   (internal/clusterTables.ts, which says why). A dead, stopped or cut-off host is so `down`
 *   within 10 s of its last heartbeat; one that comes back beats at once and is `up` again;
 * - the runners are read through a `RunnerStorage` of the cluster (`runners`) configured as every
 *   runner of the `city` program is (the default lock expiration): a library user's runner with
 *   other timings is judged by these;
 * - owed work is counted from the hosts' owed-work rows: reloads owed (`requested > applied`) and
 *   removals owed; a row that does not decode counts as one owed reload (it will be owed again:
 *   owed/Reloads.ts) and is listed with the invalid rows;
 * - a host's endpoints are its peers' runtimes that the host runs as agents, by its own stored
 *   `host.json` (the rule of one host: capabilities/RuntimeProfiles.ts); a peer that declares a
 *   channel, or a runtime that host does not know, makes none;
 * - hosts in name order (code units).
 * @since 0.1.0
 */
import type { PersistenceError } from "@effect/cluster/ClusterError"
import * as RunnerStorage from "@effect/cluster/RunnerStorage"
import * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as SqlRunnerStorage from "@effect/cluster/SqlRunnerStorage"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as PrimaryKey from "effect/PrimaryKey"
import { StateRootError } from "../../schema/CapabilityErrors.ts"
import type { InvalidFile } from "../../schema/FileErrors.ts"
import { documentIssue } from "../../schema/ParseIssue.ts"
import { tablePrefix } from "./internal/runnerDefaults.ts"
import { fromConfig } from "../capabilities/RuntimeProfiles.ts"
import { heartbeatAges } from "./internal/clusterTables.ts"
import { lockExpiration, silentAfter } from "./internal/runnerDefaults.ts"
import { serializedLayer } from "./internal/tableCreation.ts"
import { decode as decodeOwed } from "../owed/OwedRecords.ts"
import * as Migrations from "./Migrations.ts"
import * as SqlHosts from "./SqlHosts.ts"
import * as SqlPeers from "./SqlPeers.ts"
import * as SqlReloads from "./SqlReloads.ts"

/**
 * One host of the fleet.
 * @since 0.1.0
 * @category models
 */
export interface FleetHost {
  /** Its name. */
  readonly host: string
  /** Whether a runner of it is registered and healthy now. */
  readonly up: boolean
  /** When it last started (announced itself). */
  readonly started_at: string
  /** When it was last seen (every 30 s while it runs). */
  readonly seen_at: string
  /** Its peers. */
  readonly peers: number
  /** Its endpoints: (peer, runtime) pairs where the runtime is one of its agents. */
  readonly endpoints: number
  /** Its endpoints' owed reloads. */
  readonly owed_reloads: number
  /** Its endpoints' owed removals. */
  readonly owed_removals: number
}

/**
 * The fleet.
 * @since 0.1.0
 * @category models
 */
export interface Fleet {
  /** Every host, in name order. */
  readonly hosts: ReadonlyArray<FleetHost>
  /** Every row that could not be read (hosts, peers, owed work). */
  readonly invalid: ReadonlyArray<InvalidFile | { readonly file: string; readonly field: string; readonly rule: string }>
}

/** The cluster's runner table, as errors name it. */
const runnersTable = `${tablePrefix}_runners`

/** A failure of the runner table as a `StateError`; a `PersistenceError` says nothing but its cause. */
const unreadable = (operation: string, path: string) => (e: SqlError | PersistenceError) =>
  new StateRootError({ reason: "StateError",
    operation,
    path,
    detail: e._tag === "PersistenceError" ? (e.cause instanceof Error ? e.cause.message : String(e.cause)) : e.message,
    cause: e
  })

/**
 * `@effect/cluster`'s runner storage over the fleet's database, to read the runners through
 * (`current`): configured as a client of the `city` program is (the lock expiration by which it
 * lists only the runners seen within it), built, like every storage of the cluster, under the
 * fleet's table-creation lock (it creates its tables when missing).
 * @since 0.1.0
 * @category layers
 */
export const runners: Layer.Layer<RunnerStorage.RunnerStorage, StateRootError, SqlClient.SqlClient> = serializedLayer(
  SqlRunnerStorage.layerWith({ prefix: tablePrefix })
).pipe(
  Layer.provide(ShardingConfig.layer({ runnerAddress: Option.none(), shardLockDisableAdvisory: true, shardLockExpiration: lockExpiration })),
  Layer.mapError(unreadable("open", runnersTable))
)

/** The shard groups (hosts) that a runner serves now: registered, healthy, and not silent. */
const upGroups = Effect.gen(function*() {
  const registered = yield* Effect.flatMap(RunnerStorage.RunnerStorage, (storage) => storage.getRunners).pipe(
    Effect.mapError(unreadable("list", runnersTable))
  )
  const ages = yield* Effect.mapError(heartbeatAges, unreadable("list", runnersTable))
  const bound = Duration.toSeconds(silentAfter)
  return new Set(registered.flatMap(([runner, healthy]) => {
    const age = ages.get(PrimaryKey.value(runner.address))
    return healthy && age !== undefined && age <= bound ? runner.groups : []
  }))
})

/**
 * Reads the fleet from its database, whose tables exist (a host's daemon made them), its runners
 * through `RunnerStorage` (`runners`).
 * @since 0.1.0
 * @category constructors
 */
export const current: Effect.Effect<Fleet, StateRootError, SqlClient.SqlClient | RunnerStorage.RunnerStorage> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const hosts = yield* Effect.flatMap(SqlHosts.make, (h) => h.list)
  const peers = yield* SqlPeers.fleet
  const failed = (table: string) => (e: { readonly message: string }) =>
    new StateRootError({ reason: "StateError", operation: "list", path: table, detail: e.message, cause: e })
  const owedRows = yield* sql<{ readonly host: string; readonly runtime: string; readonly personality: string; readonly record: string }>`
    SELECT host, runtime, personality, record FROM ${sql(SqlReloads.table)}`.pipe(Effect.mapError(failed(SqlReloads.table)))
  const serving = yield* upGroups
  const owed = new Map<string, { reloads: number; removals: number }>()
  const invalid: Array<Fleet["invalid"][number]> = [...hosts.invalid, ...peers.invalid]
  for (const row of owedRows) {
    const count = owed.get(row.host) ?? { reloads: 0, removals: 0 }
    const decoded = decodeOwed(row.record)
    if (decoded._tag === "Left") {
      count.reloads++
      invalid.push({ file: `${SqlReloads.table} (${row.host}, ${row.runtime}, ${row.personality})`, ...documentIssue(decoded.left) })
    } else {
      if (decoded.right.requested > decoded.right.applied) count.reloads++
      if (decoded.right.removal !== undefined) count.removals++
    }
    owed.set(row.host, count)
  }
  const list = hosts.valid.map((entry): FleetHost => {
    const own = peers.valid.filter((p) => p.host === entry.host)
    const isAgent = fromConfig(entry.profiles).isAgent
    return {
      host: entry.host,
      up: serving.has(entry.host),
      started_at: DateTime.formatIso(entry.started_at),
      seen_at: DateTime.formatIso(entry.seen_at),
      peers: own.length,
      endpoints: own.reduce((n, p) => n + p.peer.runtimes.filter(isAgent).length, 0),
      owed_reloads: owed.get(entry.host)?.reloads ?? 0,
      owed_removals: owed.get(entry.host)?.removals ?? 0
    }
  })
  return { hosts: list.sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : 0)), invalid }
})

/**
 * Reads the fleet from its database once, making its tables first when missing (`city fleet` may
 * be the first to reach a new database).
 * @since 0.1.0
 * @category constructors
 */
export const read: Effect.Effect<Fleet, StateRootError, SqlClient.SqlClient> = Effect.zipRight(
  Effect.mapError(
    Migrations.migrate,
    (e) => new StateRootError({ reason: "StateError", operation: "migrate", path: "city_migrations", detail: e.message, cause: e })
  ),
  Effect.provide(current, runners)
)
