/**
 * A fleet on SQLite is one host (docs/cluster.md, "SQLite: one host"): one `city daemon --cluster
 * sqlite:<file>` at a time; a second, of any host, is refused in one line that says to use
 * PostgreSQL.
 *
 * Why one: SQLite lets one process write at a time, and the two ways it makes others wait do not
 * hold for a fleet. `better-sqlite3` (under `@effect/sql-sqlite-node`) waits for a locked file
 * inside its call, so a daemon waiting on another's write stops its whole thread, heartbeat and
 * health-check answers included; and `@effect/sql` begins a transaction `DEFERRED`, so one that
 * reads before it writes fails at once with `database is locked` when another process wrote
 * meanwhile, whatever the busy timeout: the owed-work claims and `@effect/cluster`'s storage do
 * exactly that. The `city` verbs of the host's machine still open the file beside its daemon
 * (the driver's WAL journal and its 5 s busy timeout let their few writes wait their turn).
 *
 * How: the daemon claims the file when it starts, in a row of `city_sqlite_daemon` (its host, its
 * process as `ProcessIdentity` names it, its machine), written in one transaction whose first
 * statement is a write, so that two daemons starting at once take turns. A row naming another
 * live process refuses the start; a row of a process that is gone (a daemon killed with SIGKILL)
 * is taken over at once; a row of another machine refuses too, since its process cannot be judged
 * from here. The row goes when the daemon's Scope closes.
 *
 * Decisions where the spec is silent:
 * - the table is made by the claim itself, on SQLite only (PostgreSQL has no use for it), so it is
 *   not in the migration set;
 * - a process that may be the holder but cannot be told from a reused pid (no `/proc`) counts as
 *   the holder: a refusal names its pid, and a wrong one is ended by ending that process.
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { hostname } from "node:os"
import { ClusterError } from "../../schema/Live.ts"
import { oneLine } from "../../schema/OneLine.ts"
import * as ProcessIdentity from "../capabilities/ProcessIdentity.ts"

/**
 * The table of the daemon that holds a SQLite fleet's file: one row at most.
 * @since 0.1.0
 * @category constants
 */
export const table = "city_sqlite_daemon"

interface Row {
  readonly host: string
  readonly pid: number
  readonly start: string | null
  readonly machine: string
  readonly started_at: string
}

const failed = (file: string) => (error: SqlError) =>
  new ClusterError({ reason: "ClusterUnavailable", detail: oneLine(`the SQLite database ${file} cannot be claimed: ${error.message}`, 300) })

const refusal = (file: string, holder: Row) =>
  new ClusterError({ reason: "ClusterUnavailable",
    detail: oneLine(
      `sqlite:${file} is the database of host ${holder.host} (pid ${holder.pid} on ${holder.machine}, since ${holder.started_at}), ` +
        `and SQLite serves one host: for a fleet of several hosts use PostgreSQL (--cluster postgres://…)`,
      400
    )
  })

/**
 * Claims the SQLite database `file` for this process, host `host`, for the caller's Scope; fails
 * with `ClusterUnavailable` (naming the holder and PostgreSQL) when another daemon holds it. On
 * any other database it does nothing.
 * @since 0.1.0
 * @category constructors
 */
export const claim = (
  host: string,
  file: string
): Effect.Effect<void, ClusterError, SqlClient.SqlClient | FileSystem.FileSystem | Scope.Scope> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    if (!sql.onDialectOrElse({ sqlite: () => true, orElse: () => false })) return
    const self = yield* ProcessIdentity.identify(process.pid)
    const machine = hostname()
    const ours: Row = { host, pid: self.pid, start: self.start, machine, started_at: DateTime.formatIso(yield* DateTime.now) }
    const t = sql(table)
    const taken = Effect.gen(function*() {
      yield* sql`CREATE TABLE IF NOT EXISTS ${t} (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        start TEXT,
        machine TEXT NOT NULL,
        started_at TEXT NOT NULL
      )`
      return yield* sql.withTransaction(Effect.gen(function*() {
        // A write first: from here this transaction holds the file's write lock.
        yield* sql`INSERT INTO ${t} ${sql.insert({ id: 1, ...ours })} ON CONFLICT (id) DO NOTHING`
        const [row] = yield* sql<Row>`SELECT host, pid, start, machine, started_at FROM ${t} WHERE id = 1`.withoutTransform
        if (row === undefined || (row.pid === ours.pid && row.start === ours.start && row.machine === machine)) return undefined
        const gone = row.machine === machine &&
          (yield* ProcessIdentity.running({ pid: Number(row.pid), start: row.start })) === false
        if (!gone) return row
        yield* sql`UPDATE ${t} SET ${sql.update({ ...ours })} WHERE id = 1`
        return undefined
      }))
    }).pipe(Effect.mapError(failed(file)))
    const holder = yield* taken
    if (holder !== undefined) return yield* refusal(file, holder)
    yield* Effect.addFinalizer(() =>
      Effect.ignore(sql`DELETE FROM ${t} WHERE id = 1 AND pid = ${ours.pid} AND machine = ${machine}`)
    )
  })
