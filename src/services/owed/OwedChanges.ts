/**
 * What both owed-work stores do the same way (docs/live-application.md, "Owed work"): the changes
 * of a record (an owed removal, a claim, its holder judged by the process table, a completed
 * reload, a failed attempt with its backoff, a settle) and the looks at every record (`scan`,
 * `list`, `invalid`). Each store gives its own read-modify-write of one record (`updateWith`: the
 * file store, Reloads.ts, under the root lock; the SQL store, services/cluster/internal/sqlReloads.ts,
 * in one transaction) and its own read of every record (`loadAll`); the protocol's transitions are
 * `OwedRecords.transitions`. The SQL store stays in cluster/, the only room that imports
 * `@effect/sql` (docs/cluster.md).
 * @since 0.1.0
 */
import * as DateTime from "effect/DateTime"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Option from "effect/Option"
import type { OwedRecord } from "../../schema/Live.ts"
import { storedText } from "../../schema/StoredText.ts"
import * as ProcessIdentity from "../capabilities/ProcessIdentity.ts"
import { recordOwed } from "./internal/owedGauges.ts"
import { type EndpointKey, type Loaded, type OwedScan, transitions } from "./OwedRecords.ts"
import { delayAfter, RetryBackoff } from "./RetryBackoff.ts"

/**
 * A store's read-modify-write of one record: `change` returns the record to write (`None`: as it
 * was) and a result.
 * @since 0.1.0
 * @category models
 */
export type UpdateWith<E> = <A>(
  key: EndpointKey,
  change: (record: OwedRecord, at: DateTime.Utc) => Effect.Effect<readonly [Option.Option<OwedRecord>, A]>
) => Effect.Effect<A, E>

/**
 * The shared changes over a store's `updateWith`.
 * @since 0.1.0
 * @category constructors
 */
export const makeOwedChanges = <E, LE>(deps: {
  readonly updateWith: UpdateWith<E>
  /** Every record the store holds, one read each. */
  readonly loadAll: Effect.Effect<ReadonlyArray<Loaded>, LE>
}) => Effect.gen(function*() {
  const { loadAll, updateWith } = deps
  const self = yield* ProcessIdentity.identify(process.pid)
  const backoff = yield* RetryBackoff
  const fs = yield* FileSystem.FileSystem

  const update = <A>(key: EndpointKey, change: (record: OwedRecord, at: string) => readonly [Option.Option<OwedRecord>, A]) =>
    updateWith(key, (record, at) => Effect.succeed(change(record, DateTime.formatIso(at))))

  const requestRemoval = (key: EndpointKey, force = false) =>
    update(key, (record, at) => {
      const removal = record.removal ?? { requested_at: at }
      const next: OwedRecord = { ...record, removal: force ? { ...removal, force: true } : removal, updated_at: at }
      return [Option.some(next), next] as const
    })

  // A claim names its holder by pid and start: a claim left by a dead daemon whose pid now belongs
  // to another process is not respected (capabilities/ProcessIdentity.ts).
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

  // Every look sets the owed-work gauges from the store, so they hold across processes: a CLI verb
  // owes, the daemon applies.
  const scan = Effect.tap(
    Effect.map(loadAll, (found): OwedScan => ({
      valid: found.flatMap((f) => f._tag === "Valid" ? [f.record] : []),
      invalid: found.flatMap((f) => f._tag === "Invalid" ? [f.invalid] : [])
    })),
    (found) => recordOwed(found.valid)
  )

  return {
    requestRemoval,
    claim,
    complete,
    release,
    settle,
    scan,
    list: Effect.map(scan, (found) => found.valid),
    invalid: Effect.map(scan, (found) => found.invalid)
  }
})
