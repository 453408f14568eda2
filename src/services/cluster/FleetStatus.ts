/**
 * The fleet at a glance (docs/cluster.md, "The fleet's status"): every host the database knows,
 * when it started and was last seen, whether a runner of it is registered now, its peers, its
 * endpoints and its owed work; and every row that could not be read. What `city fleet` prints, and
 * the fleet part of a fleet host's `city status` and status page.
 *
 * Decisions where the spec is silent:
 * - a host is `up` when a runner of its shard group is registered and healthy in the cluster's
 *   runner table, else `down` (its messages wait in the database until it comes back);
 * - owed work is counted from the hosts' owed-work rows: reloads owed (`requested > applied`) and
 *   removals owed; a row that does not decode counts as one owed reload (it will be owed again:
 *   live/Reloads.ts) and is listed with the invalid rows;
 * - a host's endpoints are its peers' runtimes that the host runs as agents, by its own stored
 *   `host.json` (the rule of one host: capabilities/RuntimeProfiles.ts); a peer that declares a
 *   channel, or a runtime that host does not know, makes none;
 * - hosts in name order (code units).
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { StateError } from "../../schema/CapabilityErrors.ts"
import type { InvalidFile } from "../../schema/FileErrors.ts"
import { documentIssue } from "../../schema/ParseIssue.ts"
import { tablePrefix } from "./ClusterRunner.ts"
import { fromConfig } from "../capabilities/RuntimeProfiles.ts"
import { decode as decodeOwed } from "../live/OwedRecords.ts"
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

/**
 * Reads the fleet from its database, whose tables exist (a host's daemon made them).
 * @since 0.1.0
 * @category constructors
 */
export const current: Effect.Effect<Fleet, StateError, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const hosts = yield* Effect.flatMap(SqlHosts.make, (h) => h.list)
  const peers = yield* SqlPeers.fleet
  const failed = (table: string) => (e: { readonly message: string }) =>
    new StateError({ operation: "list", path: table, detail: e.message, cause: e })
  const owedRows = yield* sql<{ readonly host: string; readonly runtime: string; readonly personality: string; readonly record: string }>`
    SELECT host, runtime, personality, record FROM ${sql(SqlReloads.table)}`.pipe(Effect.mapError(failed(SqlReloads.table)))
  const runners = yield* sql<{ readonly runner: string; readonly healthy: unknown }>`
    SELECT runner, healthy FROM ${sql(`${tablePrefix}_runners`)}`.pipe(
    Effect.orElseSucceed(() => [])
  )
  const upGroups = new Set(runners.flatMap((row) => {
    if (row.healthy === false || row.healthy === 0) return []
    try {
      const parsed = JSON.parse(row.runner) as { readonly groups?: ReadonlyArray<string> }
      return parsed.groups ?? []
    } catch {
      return []
    }
  }))
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
      up: upGroups.has(entry.host),
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
 * Reads the fleet from its database, making its tables first when missing (`city fleet` may be
 * the first to reach a new database).
 * @since 0.1.0
 * @category constructors
 */
export const read: Effect.Effect<Fleet, StateError, SqlClient.SqlClient> = Effect.zipRight(
  Effect.mapError(
    Migrations.migrate,
    (e) => new StateError({ operation: "migrate", path: "city_migrations", detail: e.message, cause: e })
  ),
  current
)
