/**
 * A database of its own for a test file (or a test), on the run's PostgreSQL server
 * (test/support/postgres.ts): test files run at the same time and must not share tables.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"

let created = 0

/** Runs one statement on the server's `postgres` database over a short-lived connection. */
const onServer = (url: string, statement: (sql: PgClient.PgClient) => Effect.Effect<unknown, unknown>) =>
  Effect.flatMap(PgClient.PgClient, statement).pipe(
    Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })),
    Effect.orDie
  )

/**
 * Creates a database with a unique name on the server of `url` and returns its URL; it is dropped
 * (its connections ended) when the scope closes.
 */
export const freshDatabase = (url: string): Effect.Effect<string, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const name = `city_test_${process.pid}_${++created}_${Math.random().toString(36).slice(2, 8)}`
      yield* onServer(url, (sql) => sql`CREATE DATABASE ${sql(name)}`)
      const own = new URL(url)
      own.pathname = `/${name}`
      return { name, url: own.toString() }
    }),
    ({ name }) => onServer(url, (sql) => sql`DROP DATABASE IF EXISTS ${sql(name)} WITH (FORCE)`)
  ).pipe(Effect.map(({ url }) => url))
