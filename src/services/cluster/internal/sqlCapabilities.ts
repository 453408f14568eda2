/**
 * The SQL declaration store's implementation (cluster/SqlCapabilities.ts holds the decisions): its
 * table, the row's locator, `make` and `revision`. The rules are the file store's
 * (capabilities/internal/capabilities.ts): a row is judged by the same `validate`, on this host.
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Order from "effect/Order"
import * as Schema from "effect/Schema"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { StateRootError, CapabilityError } from "../../../schema/CapabilityErrors.ts"
import { Declaration } from "../../../schema/Declaration.ts"
import type { InvalidFile } from "../../../schema/FileErrors.ts"
import type { Capabilities } from "../../capabilities/Capabilities.ts"
import { readFile, validate } from "../../capabilities/internal/capabilities.ts"
import { RuntimeProfiles } from "../../capabilities/RuntimeProfiles.ts"

/**
 * The table of declarations: one row per capability, fleet-wide.
 * @since 0.1.0
 * @category internals
 */
export const table = "city_capabilities"

/**
 * Where the declaration of `name` is stored, as errors and `file` name it.
 * @since 0.1.0
 * @category internals
 */
export const locator = (name: string) => `${table} (${name})`

interface Row {
  readonly name: string
  readonly declaration: string
}

const encode = Schema.encode(Schema.parseJson(Declaration))

const failed = (operation: string, path: string) => (error: SqlError) =>
  new StateRootError({ reason: "StateError", operation, path, detail: error.message, cause: error })

const byName = Order.mapInput(Order.string, (row: Row) => row.name)

/**
 * The revision of the stored declaration of `name`; `None` when there is none.
 * @since 0.1.0
 * @category internals
 */
export const revision = (name: string): Effect.Effect<Option.Option<number>, StateRootError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ readonly revision: number }>`SELECT revision FROM ${sql(table)} WHERE name = ${name}`.pipe(
      Effect.map((rows) => Option.map(Arr.head(rows), (row) => Number(row.revision))),
      Effect.mapError(failed("read", locator(name)))
    ))

/**
 * The last revision given to each name, kept when its declaration is removed.
 * @since 0.1.0
 * @category internals
 */
export const revisionsTable = "city_capability_revisions"

/**
 * Builds the declaration store on the `SqlClient` (the table must exist).
 * @since 0.1.0
 * @category internals
 */
export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const profiles = yield* RuntimeProfiles
  const read = yield* readFile(profiles.config)
  const decode = (row: Row) => validate(locator(row.name), row.name, row.declaration, profiles.config)

  const store = (declaration: Declaration) => {
    const name = declaration.capability
    return encode(declaration).pipe(
      Effect.mapError((e) => new StateRootError({ reason: "StateError", operation: "encode", path: locator(name), detail: e.message, cause: e })),
      Effect.flatMap((text) =>
        sql.withTransaction(Effect.gen(function*() {
          // The name's last revision, never deleted: a declaration removed and registered again
          // goes on from it, so a revision (and the sweep keyed by it) never repeats.
          yield* sql`INSERT INTO ${sql(revisionsTable)} (name, last) VALUES (${name}, 1)
            ON CONFLICT (name) DO UPDATE SET last = ${sql(revisionsTable)}.last + 1`
          const [row] = yield* sql<{ readonly last: number }>`SELECT last FROM ${sql(revisionsTable)} WHERE name = ${name}`
          yield* sql`INSERT INTO ${sql(table)} (name, revision, declaration) VALUES (${name}, ${Number(row?.last ?? 1)}, ${text})
            ON CONFLICT (name) DO UPDATE SET revision = excluded.revision, declaration = excluded.declaration`
        })).pipe(Effect.mapError(failed("write", locator(name))))
      ),
      Effect.asVoid
    )
  }

  const get = (name: string) =>
    sql<Row>`SELECT name, declaration FROM ${sql(table)} WHERE name = ${name}`.pipe(
      Effect.mapError(failed("read", locator(name))),
      Effect.flatMap((rows): Effect.Effect<Declaration, CapabilityError | InvalidFile> =>
        rows[0] === undefined
          ? Effect.fail(new CapabilityError({ reason: "UnknownCapability", capability: name, file: locator(name) }))
          : decode(rows[0])
      )
    )

  const remove = (name: string) =>
    sql`DELETE FROM ${sql(table)} WHERE name = ${name}`.pipe(Effect.asVoid, Effect.mapError(failed("delete", locator(name))))

  // Name order by code units, as the file store lists its folder (a database's collation may differ).
  const scan = sql<Row>`SELECT name, declaration FROM ${sql(table)}`.pipe(
    Effect.mapError(failed("list", table)),
    Effect.flatMap((rows) => Effect.forEach(Arr.sort(rows, byName), (row) => Effect.either(decode(row)))),
    Effect.map((found) => ({ valid: Arr.getRights(found), invalid: Arr.getLefts(found) }))
  )

  return { readFile: read, store, get, remove, file: locator, scan } satisfies Capabilities["Type"]
})

