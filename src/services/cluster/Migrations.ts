/**
 * The one migration set of the cluster folder (docs/cluster.md, "Capability, peer and host stores
 * on SQL"): every table the SQL stores use, created by `@effect/sql`'s `Migrator` and recorded in
 * its own migrations table `city_migrations` (a database shared with an application keeps that
 * application's `effect_sql_migrations` apart).
 *
 * Decisions where the spec is silent:
 * - one set, numbered in the order the tables were added, so a database migrated by an older
 *   version gets the tables it lacks and nothing else;
 * - every store's layer runs `migrate` before it serves: it is idempotent (the `Migrator` skips
 *   what it has recorded), and runs wait for each other, so the second finds the work done: on
 *   PostgreSQL each run holds the fleet's table-creation lock (internal/tableCreation.ts), which
 *   `@effect/cluster`'s table creation holds too, across processes; on SQLite a migration run is
 *   one transaction, and a write takes the whole file;
 * - the `Migrator` creates `city_migrations` before it locks anything, so two connections that
 *   migrate an empty PostgreSQL database at once without that lock (a process of a version before
 *   it) can both try to create it, and one fails with "already exists": a run that fails with an
 *   `SqlError` is tried again, up to `migrateAttempts` runs in all, and the next run finds the
 *   table. A `MigrationError` (a migration that failed) is never retried.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { revisionsTable, table as capabilitiesTable } from "./internal/sqlCapabilities.ts"
import { table as hostsTable } from "./internal/sqlHosts.ts"
import { table as peersTable } from "./internal/sqlPeers.ts"
import { table as reloadsTable } from "./internal/sqlReloads.ts"
import { serialized } from "./internal/tableCreation.ts"

/**
 * The table `@effect/sql`'s `Migrator` records our migrations in.
 * @since 0.1.0
 * @category constants
 */
export const migrationsTable = "city_migrations"

/**
 * Every migration of the cluster folder, for `Migrator.fromRecord`: the owed reloads, the
 * capabilities, the peers, the hosts.
 * @since 0.1.0
 * @category constants
 */
export const migrations: Record<string, Effect.Effect<void, SqlError, SqlClient.SqlClient>> = {
  "1_owed_reloads": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`CREATE TABLE ${sql(reloadsTable)} (
      host TEXT NOT NULL,
      runtime TEXT NOT NULL,
      personality TEXT NOT NULL,
      record TEXT NOT NULL,
      PRIMARY KEY (host, runtime, personality)
    )`.pipe(Effect.asVoid)),
  "2_capabilities": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`CREATE TABLE ${sql(capabilitiesTable)} (
      name TEXT PRIMARY KEY,
      revision INTEGER NOT NULL,
      declaration TEXT NOT NULL
    )`.pipe(Effect.asVoid)),
  "3_peers": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`CREATE TABLE ${sql(peersTable)} (
      host TEXT NOT NULL,
      personality TEXT NOT NULL,
      peer TEXT NOT NULL,
      PRIMARY KEY (host, personality)
    )`.pipe(Effect.asVoid)),
  "4_hosts": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`CREATE TABLE ${sql(hostsTable)} (
      host TEXT PRIMARY KEY,
      profiles TEXT NOT NULL,
      started_at TEXT NOT NULL,
      seen_at TEXT NOT NULL
    )`.pipe(Effect.asVoid)),
  "5_capability_revisions": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`CREATE TABLE ${sql(revisionsTable)} (
      name TEXT PRIMARY KEY,
      last INTEGER NOT NULL
    )`.pipe(Effect.asVoid))
}

/**
 * How many runs `migrate` makes at most when a run fails with an `SqlError` (see the module comment).
 * @since 0.1.0
 * @category constants
 */
export const migrateAttempts = 3

/**
 * Runs the migrations not yet applied; applied ones are skipped, so every layer may run it.
 * @since 0.1.0
 * @category constructors
 */
export const migrate: Effect.Effect<void, Migrator.MigrationError | SqlError, SqlClient.SqlClient> = Effect.asVoid(
  serialized(Migrator.make({})({ loader: Migrator.fromRecord(migrations), table: migrationsTable })).pipe(
    Effect.retry({ times: migrateAttempts - 1, while: (error) => error._tag === "SqlError" })
  )
)
