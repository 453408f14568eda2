/**
 * Table creation one at a time across the fleet (docs/cluster.md, "Setup": hosts in any number
 * started at once on an empty database all come up).
 *
 * On PostgreSQL, `CREATE TABLE IF NOT EXISTS` is not safe against itself: two sessions that create
 * the same table at once both find it missing, and one fails on the catalog's unique index
 * (`duplicate key value violates unique constraint "pg_type_typname_nsp_index"`). Every table of a
 * fleet is created at a host's first start: ours by `@effect/sql`'s `Migrator` (Migrations.ts),
 * `@effect/cluster`'s when its storage layers are built (`SqlMessageStorage` runs its own
 * `Migrator`, `SqlRunnerStorage` its `CREATE TABLE IF NOT EXISTS`). So each of those runs holds
 * one PostgreSQL advisory lock of ours for as long as it runs: the second host waits, then finds
 * the tables made.
 *
 * Decisions:
 * - a session lock (`pg_try_advisory_lock`) on a connection reserved for it, tried every 50 ms: a
 *   waiter holds a connection only for the moment of a try, so waiters in one process never use up
 *   its pool while the holder's migration needs a connection; a try and the registration of its
 *   release are one uninterruptible step, so a lock is never left on a pooled connection;
 * - the two-key form `(1667855481, 1)` ("city", tables): the one-key advisory locks that
 *   `@effect/cluster` may take are another key space;
 * - SQLite needs none: a write there takes the whole file, and its `CREATE TABLE IF NOT EXISTS`
 *   is checked under that lock.
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"

/** The advisory lock's two keys: "city" in ASCII, and 1 for "tables". */
const lockKeys = "1667855481, 1"

/** How long a waiter waits between two tries. */
const tryEvery = "50 millis"

/** One try on a connection of its own, in `scope`: the lock held until `scope` closes, or `false`. */
const tryOnce = (sql: SqlClient.SqlClient, scope: Scope.Scope) =>
  Effect.uninterruptible(Effect.gen(function*() {
    const conn = yield* Scope.extend(sql.reserve, scope)
    return yield* Scope.extend(
      Effect.acquireRelease(
        Effect.map(conn.executeValues(`SELECT pg_try_advisory_lock(${lockKeys})`, []), (rows) => rows[0]?.[0] === true),
        (got) => got ? Effect.ignore(conn.executeValues(`SELECT pg_advisory_unlock(${lockKeys})`, [])) : Effect.void
      ),
      scope
    )
  }))

/** Holds the lock for the caller's Scope (PostgreSQL), or nothing (SQLite). */
const hold: Effect.Effect<void, SqlError, SqlClient.SqlClient | Scope.Scope> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  if (!sql.onDialectOrElse({ pg: () => true, orElse: () => false })) return
  const outer = yield* Effect.scope
  while (true) {
    const attempt = yield* Scope.fork(outer, ExecutionStrategy.sequential)
    const got = yield* Effect.onError(tryOnce(sql, attempt), (cause) => Scope.close(attempt, Exit.failCause(cause)))
    if (got) return
    yield* Scope.close(attempt, Exit.void)
    yield* Effect.sleep(tryEvery)
  }
})

/**
 * Runs `effect` while this process holds the fleet's table-creation lock.
 * @since 0.1.0
 * @category internals
 */
export const serialized = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError, R | SqlClient.SqlClient> =>
  Effect.acquireUseRelease(
    Scope.make(),
    (scope) => Effect.zipRight(Scope.extend(hold, scope), effect),
    (scope, exit) => Scope.close(scope, exit)
  )

/**
 * `layer`, built while this process holds the fleet's table-creation lock (its resources live as
 * long as the layer; the lock only while it is built).
 * @since 0.1.0
 * @category internals
 */
export const serializedLayer = <A, E, R>(
  layer: Layer.Layer<A, E, R>
): Layer.Layer<A, E | SqlError, Exclude<R, Scope.Scope> | SqlClient.SqlClient> =>
  Layer.scopedContext(Effect.flatMap(Effect.scope, (scope) => serialized(Layer.buildWithScope(layer, scope))))
