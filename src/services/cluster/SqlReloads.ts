/**
 * The owed-reload store on SQL: the `Reloads` service (owed/Reloads.ts) over any `@effect/sql`
 * `SqlClient`, for hosts that share one database (docs/cluster.md, "Owed reloads on SQL").
 *
 * Same protocol, same transitions (`Reloads.transitions`), same record: one row per endpoint in
 * `city_owed_reloads`, keyed by host, runtime and personality (each host's store sees its own
 * rows only: an endpoint's runtime files live on its host, docs/cluster.md), whose `record` column holds the
 * `OwedRecord` as JSON text, written by encoding through the Schema and read by decoding through
 * it. A row that does not decode is what an unreadable record file is in the file store: `scan`
 * and `invalid` report it (`file` names the table and the endpoint, `field` and `rule` as the one
 * formatter gives them), `list` leaves it out, `get` fails with it, and the next change of that
 * endpoint (`recover`, a request, a claim, a settle) replaces it with a row owing a reload again,
 * logged once.
 *
 * Decisions where the spec is silent:
 * - each read-modify-write is one transaction: the row is inserted empty when absent, then read
 *   (`FOR UPDATE` on PostgreSQL, whose transactions would otherwise race; SQLite serializes
 *   writers), changed and written back, or deleted when settled (the table lists owed work only);
 * - the schema is created by `@effect/sql`'s `Migrator` at layer build, in its own migrations
 *   table `city_migrations` (a database shared with an application keeps its own
 *   `effect_sql_migrations`), by the one migration set of the cluster folder (Migrations.ts);
 * - a claim still names its holder by pid and start and is judged by this machine's process table,
 *   as in the file store: only the host's own processes touch its rows, so the claim is the whole
 *   story of who applies an owed reload (docs/cluster.md, "Owed reloads: one path");
 * - a database failure is a `StateError` naming the table and the operation.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Migrator from "@effect/sql/Migrator"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Reloads } from "../owed/Reloads.ts"
import * as internal from "./internal/sqlReloads.ts"
import * as Migrations from "./Migrations.ts"

/**
 * The table of owed work: one row per endpoint.
 * @since 0.1.0
 * @category constants
 */
export const table: string = internal.table

/**
 * Builds the owed-work store of the host `host` on the `SqlClient` (the table must exist: see
 * `Migrations.migrate`). Another host's rows are neither seen nor changed.
 * @since 0.1.0
 * @category constructors
 */
export const make: (host: string) => Effect.Effect<Reloads["Type"], never, SqlClient.SqlClient | FileSystem.FileSystem> =
  internal.make

/**
 * The owed-work store of one host on the `SqlClient` as a layer: runs the migrations, then serves
 * `Reloads` for `options.host` (a `Name`: docs/cluster.md, "Hosts").
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: { readonly host: string }): Layer.Layer<
  Reloads,
  Migrator.MigrationError | SqlError,
  SqlClient.SqlClient | FileSystem.FileSystem
> => Layer.effect(Reloads, Effect.zipRight(Migrations.migrate, make(options.host)))
