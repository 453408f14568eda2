/**
 * The SQL owed-work store's implementation (docs/cluster.md, "What this part provides"): the body
 * of `SqlReloads.make` and its table; the public module (cluster/SqlReloads.ts) holds the
 * decisions.
 * @since 0.1.0
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as FileSystem from "@effect/platform/FileSystem"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { StateRootError } from "../../../schema/CapabilityErrors.ts"
import { OwedRecord } from "../../../schema/Live.ts"
import { identityOf } from "../../../schema/Outcome.ts"
import { documentIssue, fieldRuleLine } from "../../../schema/ParseIssue.ts"
import { type Loaded } from "../../owed/OwedRecords.ts"
import { type EndpointKey, owesWork, Reloads, transitions } from "../../owed/Reloads.ts"
import { makeOwedChanges } from "../../owed/OwedChanges.ts"

/**
 * The table of owed work: one row per endpoint.
 * @since 0.1.0
 * @category internals
 */
export const table = "city_owed_reloads"

const decode = Schema.decodeUnknownEither(Schema.parseJson(OwedRecord))
const rowName = (key: EndpointKey & { readonly host: string }) =>
  `${table} (${key.host}, ${key.runtime}, ${key.personality})`

/** One row, as a record file is loaded (owed/OwedRecords.ts): valid, or invalid with its reason. */
const loadRow = (row: Row): Loaded =>
  Either.match(decode(row.record), {
    onLeft: (error): Loaded => ({
      _tag: "Invalid",
      invalid: { file: rowName(row), identity: identityOf(row.runtime, row.personality), ...documentIssue(error) }
    }),
    onRight: (record): Loaded => ({ _tag: "Valid", record })
  })
const encode = Schema.encodeSync(Schema.parseJson(OwedRecord))

interface Row {
  readonly host: string
  readonly runtime: string
  readonly personality: string
  readonly record: string
}

/**
 * Builds one host's owed-work store on the `SqlClient` (the table must exist).
 * @since 0.1.0
 * @category internals
 */
export const make = (host: string): Effect.Effect<Reloads["Type"], never, SqlClient.SqlClient | FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const failed = (operation: string, path: string) => (error: SqlError) =>
      new StateRootError({ reason: "StateError", operation, path, detail: error.message, cause: error })

    const select = (key: EndpointKey, lock: boolean) =>
      sql<Row>`SELECT host, runtime, personality, record FROM ${sql(table)}
        WHERE host = ${host} AND runtime = ${key.runtime} AND personality = ${key.personality}${
        lock ? sql.onDialectOrElse({ pg: () => sql.literal(" FOR UPDATE"), orElse: () => sql.literal("") }) : sql.literal("")
      }`

    const get = (key: EndpointKey) =>
      select(key, false).pipe(
        Effect.mapError(failed("read", rowName({ host, ...key }))),
        Effect.flatMap((rows) => {
          if (rows[0] === undefined) return Effect.succeed(Option.none<OwedRecord>())
          const loaded = loadRow(rows[0])
          return loaded._tag === "Invalid"
            ? Effect.fail(new StateRootError({ reason: "StateError", operation: "read", path: loaded.invalid.file, detail: fieldRuleLine(loaded.invalid) }))
            : loaded._tag === "Valid"
            ? Effect.succeed(Option.some(loaded.record))
            : Effect.succeed(Option.none<OwedRecord>())
        })
      )

    const write = (key: EndpointKey, record: OwedRecord) =>
      owesWork(record) || record.claim !== undefined
        ? sql`UPDATE ${sql(table)} SET record = ${encode(record)}
            WHERE host = ${host} AND runtime = ${key.runtime} AND personality = ${key.personality}`
        : sql`DELETE FROM ${sql(table)} WHERE host = ${host} AND runtime = ${key.runtime} AND personality = ${key.personality}`

    /**
     * The row to change, inside the transaction: made present (empty) when absent, read (locked on
     * PostgreSQL); a row that does not decode is replaced at once by one that owes a reload again,
     * logged, as an unreadable record file is (owed/OwedRecordFile.ts). `true` when it was.
     */
    const current = (key: EndpointKey, at: string) =>
      Effect.gen(function*() {
        const empty = transitions.empty(key, at)
        yield* sql`INSERT INTO ${sql(table)} (host, runtime, personality, record)
          VALUES (${host}, ${key.runtime}, ${key.personality}, ${encode(empty)}) ON CONFLICT DO NOTHING`
        const rows = yield* select(key, true)
        const loaded: Loaded = rows[0] === undefined ? { _tag: "Absent" } : loadRow(rows[0])
        if (loaded._tag === "Valid") return [loaded.record, false] as const
        if (loaded._tag === "Absent") return [empty, false] as const
        const reason = `owed again: its record could not be read (${fieldRuleLine(loaded.invalid)})`
        const again = transitions.request(empty, reason, at)
        yield* write(key, again)
        yield* Effect.logWarning(
          `owed-work record ${loaded.invalid.file} is invalid (${fieldRuleLine(loaded.invalid)}): ` +
            "replaced; the reload it may have stood for is owed again"
        ).pipe(Effect.annotateLogs({ endpoint: identityOf(key.runtime, key.personality) }))
        return [again, true] as const
      })

    /** One transaction: the row read by `current`, changed by `change` (`None`: as it was), written back. */
    const updateWith = <A>(
      key: EndpointKey,
      change: (record: OwedRecord, at: DateTime.Utc) => Effect.Effect<readonly [Option.Option<OwedRecord>, A]>
    ) =>
      sql.withTransaction(Effect.gen(function*() {
        const at = yield* DateTime.now
        const [record] = yield* current(key, DateTime.formatIso(at))
        const [next, result] = yield* change(record, at)
        yield* write(key, Option.getOrElse(next, () => record))
        return result
      })).pipe(Effect.mapError(failed("update", rowName({ host, ...key }))))

    const request = (keys: ReadonlyArray<EndpointKey>, reason: string, capability?: string) =>
      keys.length === 0 ? Effect.succeed([]) : sql.withTransaction(Effect.forEach(keys, (key) =>
        updateWith(key, (record, at) => {
          const next = transitions.request(record, reason, DateTime.formatIso(at), capability)
          return Effect.succeed([Option.some(next), next] as const)
        }))).pipe(Effect.catchTag("SqlError", (error) => Effect.fail(failed("update", table)(error))))


    const recover = (key: EndpointKey) =>
      sql.withTransaction(Effect.gen(function*() {
        const [record, replaced] = yield* current(key, DateTime.formatIso(yield* DateTime.now))
        yield* write(key, record)
        return replaced
      })).pipe(Effect.mapError(failed("update", rowName({ host, ...key }))))

    const completeRemoval = (key: EndpointKey) =>
      sql`DELETE FROM ${sql(table)} WHERE host = ${host} AND runtime = ${key.runtime} AND personality = ${key.personality}`.pipe(
        Effect.asVoid,
        Effect.mapError(failed("delete", rowName({ host, ...key })))
      )

    const owed = yield* makeOwedChanges({
      updateWith,
      loadAll: sql<Row>`SELECT host, runtime, personality, record FROM ${sql(table)} WHERE host = ${host} ORDER BY runtime, personality`.pipe(
        Effect.mapError(failed("list", `${table} (${host})`)),
        Effect.map((rows) => rows.map(loadRow))
      )
    })

    return Reloads.of({ ...owed, request, completeRemoval, recover, get })
  })
