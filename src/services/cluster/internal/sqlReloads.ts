/**
 * The SQL owed-work store's implementation (docs/cluster.md, "What this part provides"): the body
 * of `SqlReloads.make` and its table; the public module (cluster/SqlReloads.ts) holds the
 * decisions.
 * @since 0.1.0
 */
import * as DateTime from "effect/DateTime"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as FileSystem from "@effect/platform/FileSystem"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { StateError } from "../../../schema/CapabilityErrors.ts"
import { OwedRecord } from "../../../schema/Live.ts"
import { storedText } from "../../../schema/StoredText.ts"
import * as ProcessIdentity from "../../capabilities/ProcessIdentity.ts"
import { recordOwed } from "../../internal/owedGauges.ts"
import { type EndpointKey, owesWork, Reloads, transitions } from "../../live/Reloads.ts"
import { delayAfter, RetryBackoff } from "../../live/RetryBackoff.ts"

/**
 * The table of owed work: one row per endpoint.
 * @since 0.1.0
 * @category internals
 */
export const table = "city_owed_reloads"

const decode = Schema.decodeUnknownEither(Schema.parseJson(OwedRecord))
const encode = Schema.encodeSync(Schema.parseJson(OwedRecord))

interface Row {
  readonly runtime: string
  readonly personality: string
  readonly record: string
}

/**
 * Builds the owed-work store on the `SqlClient` (the table must exist).
 * @since 0.1.0
 * @category internals
 */
export const make: Effect.Effect<Reloads["Type"], never, SqlClient.SqlClient | FileSystem.FileSystem> = Effect.gen(
  function*() {
    const sql = yield* SqlClient.SqlClient
    const fs = yield* FileSystem.FileSystem
    const self = yield* ProcessIdentity.identify(process.pid)
    const backoff = yield* RetryBackoff
    const where = (key: EndpointKey) => `${table} (${key.runtime}, ${key.personality})`
    const failed = (operation: string, path: string) => (error: SqlError) =>
      new StateError({ operation, path, detail: error.message, cause: error })

    const select = (key: EndpointKey, lock: boolean) =>
      sql<Row>`SELECT runtime, personality, record FROM ${sql(table)}
        WHERE runtime = ${key.runtime} AND personality = ${key.personality}${
        lock ? sql.onDialectOrElse({ pg: () => sql.literal(" FOR UPDATE"), orElse: () => sql.literal("") }) : sql.literal("")
      }`

    const get = (key: EndpointKey) =>
      select(key, false).pipe(
        Effect.map((rows) => Option.flatMap(Option.fromNullable(rows[0]), (row) => Either.getRight(decode(row.record)))),
        Effect.mapError(failed("read", where(key)))
      )

    const write = (key: EndpointKey, record: OwedRecord) =>
      owesWork(record) || record.claim !== undefined
        ? sql`UPDATE ${sql(table)} SET record = ${encode(record)}
            WHERE runtime = ${key.runtime} AND personality = ${key.personality}`
        : sql`DELETE FROM ${sql(table)} WHERE runtime = ${key.runtime} AND personality = ${key.personality}`

    /** One transaction: the row made present, read, changed by `change` (`None`: as it was), written back. */
    const updateWith = <A>(
      key: EndpointKey,
      change: (record: OwedRecord, at: DateTime.Utc) => Effect.Effect<readonly [Option.Option<OwedRecord>, A]>
    ) =>
      sql.withTransaction(Effect.gen(function*() {
        const at = yield* DateTime.now
        const empty = transitions.empty(key, DateTime.formatIso(at))
        yield* sql`INSERT INTO ${sql(table)} (runtime, personality, record)
          VALUES (${key.runtime}, ${key.personality}, ${encode(empty)}) ON CONFLICT DO NOTHING`
        const rows = yield* select(key, true)
        const current = Option.getOrElse(
          Option.flatMap(Option.fromNullable(rows[0]), (row) => Either.getRight(decode(row.record))),
          () => empty
        )
        const [next, result] = yield* change(current, at)
        yield* write(key, Option.getOrElse(next, () => current))
        return result
      })).pipe(Effect.mapError(failed("update", where(key))))

    const update = <A>(key: EndpointKey, change: (record: OwedRecord, at: string) => readonly [Option.Option<OwedRecord>, A]) =>
      updateWith(key, (record, at) => Effect.succeed(change(record, DateTime.formatIso(at))))

    const request = (keys: ReadonlyArray<EndpointKey>, reason: string, capability?: string) =>
      keys.length === 0 ? Effect.succeed([]) : sql.withTransaction(Effect.forEach(keys, (key) =>
        update(key, (record, at) => {
          const next = transitions.request(record, reason, at, capability)
          return [Option.some(next), next] as const
        }))).pipe(Effect.catchTag("SqlError", (error) => Effect.fail(failed("update", table)(error))))

    const requestRemoval = (key: EndpointKey, force = false) =>
      update(key, (record, at) => {
        const removal = record.removal ?? { requested_at: at }
        const next: OwedRecord = { ...record, removal: force ? { ...removal, force: true } : removal, updated_at: at }
        return [Option.some(next), next] as const
      })

    const claim = (key: EndpointKey) =>
      updateWith(key, (record, at) =>
        Effect.map(
          record.claim === undefined
            ? Effect.succeed<boolean | undefined>(false)
            : ProcessIdentity.running({ pid: record.claim.pid, start: record.claim.start ?? null }).pipe(
              Effect.provideService(FileSystem.FileSystem, fs)
            ),
          (alive) => {
            const claimed = transitions.claim(record, self, DateTime.formatIso(at), () => alive !== false)
            return [claimed, Option.map(claimed, (r) => r.requested)] as const
          }
        ))

    const complete = (key: EndpointKey, target: number) =>
      update(key, (record, at) => [Option.some(transitions.complete(record, target, at)), undefined] as const)

    const release = (key: EndpointKey, error: string) =>
      updateWith(key, (record, at) =>
        Effect.map(delayAfter(backoff, (record.attempts ?? 0) + 1), (delay: Duration.Duration) => {
          const next = transitions.release(
            record,
            storedText(error),
            DateTime.formatIso(at),
            DateTime.formatIso(DateTime.addDuration(at, delay))
          )
          return [Option.some(next), next] as const
        }))

    const settle = (key: EndpointKey) =>
      update(key, (record, at) => [Option.some(transitions.settle(record, at)), undefined] as const)

    const completeRemoval = (key: EndpointKey) =>
      sql`DELETE FROM ${sql(table)} WHERE runtime = ${key.runtime} AND personality = ${key.personality}`.pipe(
        Effect.asVoid,
        Effect.mapError(failed("delete", where(key)))
      )

    const rows = sql<Row>`SELECT runtime, personality, record FROM ${sql(table)} ORDER BY runtime, personality`.pipe(
      Effect.mapError(failed("list", table))
    )

    // Every listing sets the owed-work gauges, as the file store's does.
    const list = rows.pipe(
      Effect.map((found) => found.flatMap((row) => Either.match(decode(row.record), { onLeft: () => [], onRight: (r) => [r] }))),
      Effect.tap((records) => recordOwed(records))
    )

    const invalid = Effect.map(rows, (found) =>
      found.flatMap((row) => {
        const decoded = decode(row.record)
        return Either.isLeft(decoded) ? [{ file: where(row), rule: decoded.left.message }] : []
      }))

    return Reloads.of({ request, requestRemoval, claim, complete, release, settle, completeRemoval, get, list, invalid })
  }
)
