/**
 * The host table's implementation (cluster/SqlHosts.ts holds the decisions): its table, a row's
 * locator and `make`. A row's profiles are decoded through `HostConfig`, as `host.json` is
 * (capabilities/RuntimeProfiles.ts), its times through `DateTimeUtc`.
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Order from "effect/Order"
import * as Schema from "effect/Schema"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { StateRootError } from "../../../schema/CapabilityErrors.ts"
import * as Faults from "../../../schema/Faults.ts"
import { InvalidFile } from "../../../schema/FileErrors.ts"
import { HostConfig } from "../../../schema/HostConfig.ts"
import { Name } from "../../../schema/Name.ts"
import { documentIssues, firstIssue } from "../../../schema/ParseIssue.ts"

/**
 * One host of the fleet as its row has it.
 * @since 0.1.0
 * @category models
 */
export interface HostEntry {
  /** The host's name (a `Name`). */
  readonly host: string
  /** Its runtimes and their profiles, as its `host.json` has them. */
  readonly profiles: HostConfig
  /** When it last announced itself (its process started). */
  readonly started_at: DateTime.Utc
  /** When it last said it was there. */
  readonly seen_at: DateTime.Utc
}

/**
 * The table of hosts: one row per host.
 * @since 0.1.0
 * @category internals
 */
export const table = "city_hosts"

/**
 * Where the host `host` is stored, as errors name it.
 * @since 0.1.0
 * @category internals
 */
export const locator = (host: string) => `${table} (${host})`

interface Row {
  readonly host: string
  readonly profiles: string
  readonly started_at: string
  readonly seen_at: string
}

const Columns = Schema.Struct({ host: Name, started_at: Schema.DateTimeUtc, seen_at: Schema.DateTimeUtc })
const decodeColumns = Schema.decodeUnknownEither(Columns)
const decodeProfiles = Schema.decodeUnknownEither(Schema.parseJson(HostConfig), { errors: "all", onExcessProperty: "error" })
const encodeProfiles = Schema.encode(Schema.parseJson(HostConfig))

const invalid = (row: Row, faults: Faults.Faults) => new InvalidFile({ reason: "HostConfig", file: locator(row.host), ...faults })

/** One row: its columns, then its profiles (a field inside them is named `profiles.<field>`). */
const decode = (row: Row): Either.Either<HostEntry, InvalidFile> =>
  Either.flatMap(
    Either.mapLeft(decodeColumns({ host: row.host, started_at: row.started_at, seen_at: row.seen_at }), (error) => {
      const { field, rule } = firstIssue(error)
      return invalid(row, Faults.one(field, rule))
    }),
    (columns) =>
      Either.map(
        Either.mapLeft(decodeProfiles(row.profiles), (error) =>
          invalid(
            row,
            Faults.collect(
              Arr.map(documentIssues(error), ({ field, rule }) => ({ field: field === "" ? "profiles" : `profiles.${field}`, rule }))
            )
          )),
        (profiles): HostEntry => ({ ...columns, profiles })
      )
  )

const failed = (operation: string, path: string) => (error: SqlError) =>
  new StateRootError({ reason: "StateError", operation, path, detail: error.message, cause: error })

const byHost = Order.mapInput(Order.string, (row: Row) => row.host)

/**
 * Builds the host table's service on the `SqlClient` (the table must exist).
 * @since 0.1.0
 * @category internals
 */
export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const announce = (host: string, profiles: HostConfig) =>
    Effect.gen(function*() {
      const text = yield* encodeProfiles(profiles).pipe(
        Effect.mapError((e) => new StateRootError({ reason: "StateError", operation: "encode", path: locator(host), detail: e.message, cause: e }))
      )
      const at = DateTime.formatIso(yield* DateTime.now)
      yield* sql`INSERT INTO ${sql(table)} (host, profiles, started_at, seen_at) VALUES (${host}, ${text}, ${at}, ${at})
        ON CONFLICT (host) DO UPDATE SET profiles = excluded.profiles, started_at = excluded.started_at,
        seen_at = excluded.seen_at`.pipe(Effect.mapError(failed("write", locator(host))))
    })

  const seen = (host: string) =>
    Effect.gen(function*() {
      const at = DateTime.formatIso(yield* DateTime.now)
      const rows = yield* sql`UPDATE ${sql(table)} SET seen_at = ${at} WHERE host = ${host} RETURNING host`.pipe(
        Effect.mapError(failed("update", locator(host)))
      )
      return rows.length > 0
    })

  // Host order by code units (a database's collation may differ). The column names as they are,
  // whatever name transform the caller's client applies to results.
  const list = sql<Row>`SELECT host, profiles, started_at, seen_at FROM ${sql(table)}`.withoutTransform.pipe(
    Effect.mapError(failed("list", table)),
    Effect.map((rows) => {
      const found = Arr.sort(rows, byHost).map(decode)
      return { valid: Arr.getRights(found), invalid: Arr.getLefts(found) }
    })
  )

  return { announce, seen, list }
})
