/**
 * The one module that reads or deletes rows of `@effect/cluster`'s own tables (`city_cluster_*`)
 * rather than going through its services (docs/cluster.md, "The fleet's status" and "Retention").
 * Everything else reaches the cluster through its public API: `Sharding`, `RunnerStorage` (the
 * runners and their health), `MessageStorage`.
 *
 * Why these two, and nothing else:
 * - **a runner's last heartbeat** (`heartbeatAges`). `RunnerStorage.getRunners` says whether each
 *   runner is healthy, but health is what the health check's pings last found, and pings cannot
 *   see every death in time: a stopped process (SIGSTOP) keeps its connections open, so each ping
 *   waits out its timeout (about half a minute in all); a runner cut off from the database still
 *   answers pings; and the check never marks the last healthy runner unhealthy. What does stop at
 *   once in each case is the heartbeat, the runner's refresh of its shard locks, which writes
 *   `last_heartbeat`; no public API returns it. Its age is computed by the database, on the
 *   database's clock, as `@effect/cluster` computes lock expiry, so no host's clock enters into it;
 * - **pruning processed messages** (`pruneProcessed`). A processed message and its reply are kept
 *   so that a resend is answered from them; `MessageStorage` clears one request's replies
 *   (`clearReplies`) but has no way to delete processed messages by age.
 *
 * Both depend on columns of `@effect/cluster`'s schema (`runners.address`, `runners.last_heartbeat`,
 * `messages.id`, `messages.processed`, `replies.request_id`), at the version pinned in
 * package.json (~0.60.2): an upgrade that changes them breaks this module alone, and the tests of
 * the fleet's status and of retention fail.
 * @since 0.1.0
 */
import * as MachineId from "@effect/cluster/MachineId"
import * as Snowflake from "@effect/cluster/Snowflake"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import { tablePrefix } from "./runnerDefaults.ts"

const runnersTable = `${tablePrefix}_runners`
const messagesTable = `${tablePrefix}_messages`
const repliesTable = `${tablePrefix}_replies`

/**
 * How long ago each registered runner's last heartbeat was, in seconds, by its address
 * (`host:port`, as `RunnerAddress`'s primary key). SQLite keeps the time to the second.
 * @since 0.1.0
 * @category internals
 */
export const heartbeatAges: Effect.Effect<ReadonlyMap<string, number>, SqlError, SqlClient.SqlClient> = Effect.gen(
  function*() {
    const sql = yield* SqlClient.SqlClient
    const age = sql.onDialectOrElse({
      pg: () => sql.literal("EXTRACT(EPOCH FROM (NOW() - last_heartbeat))"),
      orElse: () => sql.literal("(julianday('now') - julianday(last_heartbeat)) * 86400.0")
    })
    const rows = yield* sql<{ readonly address: string; readonly age: unknown }>`
      SELECT address, ${age} AS age FROM ${sql(runnersTable)}`.withoutTransform
    return new Map(rows.map((row) => [row.address, Number(row.age)]))
  }
)

/**
 * Deletes the processed messages made before `before` (epoch milliseconds), their replies first,
 * in one transaction: how many messages went. A message's age is the time in its id (a
 * `Snowflake` holds the time it was made), so no column is added to the cluster's tables.
 * @since 0.1.0
 * @category internals
 */
export const pruneProcessed = (before: number): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const bound = String(Snowflake.make({ machineId: MachineId.make(0), sequence: 0, timestamp: before }))
    const messages = sql(messagesTable)
    const replies = sql(repliesTable)
    const processed = sql.onDialectOrElse({ pg: () => sql.literal("TRUE"), orElse: () => sql.literal("1") })
    return yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`DELETE FROM ${replies} WHERE request_id IN (
        SELECT id FROM ${messages} WHERE processed = ${processed} AND id < ${bound})`
      const gone = yield* sql<{ readonly id: string }>`DELETE FROM ${messages}
        WHERE processed = ${processed} AND id < ${bound} RETURNING id`
      return gone.length
    }))
  })
