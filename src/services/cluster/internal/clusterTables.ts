/**
 * The one module that reads or deletes rows of `@effect/cluster`'s own tables (`city_cluster_*`)
 * rather than going through its services (docs/cluster.md, "Retention"). Everything else reaches
 * the cluster through its public API: `Sharding`, `MessageStorage`.
 *
 * Why this, and nothing else: **pruning processed messages** (`pruneProcessed`). A processed
 * message and its reply are kept so that a resend is answered from them; `MessageStorage` clears
 * one request's replies (`clearReplies`) but has no way to delete processed messages by age.
 *
 * It depends on columns of `@effect/cluster`'s schema (`messages.id`, `messages.processed`,
 * `replies.request_id`), at the version pinned in package.json (~0.60.2): an upgrade that changes
 * them breaks this module alone, and the tests of retention fail.
 * @since 0.1.0
 */
import * as MachineId from "@effect/cluster/MachineId"
import * as Snowflake from "@effect/cluster/Snowflake"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import { tablePrefix } from "../ClusterRunner.ts"

const messagesTable = `${tablePrefix}_messages`
const repliesTable = `${tablePrefix}_replies`

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
