/**
 * Owed reloads and owed removals, durable (docs/capability-plugin-lifecycle.md, "Applying surfaces
 * to a live endpoint": "A busy endpoint finishes its current turn without interruption, then
 * reloads automatically. The request is durable across daemon restarts. Repeated requests may
 * coalesce, but a change arriving during reload must not be silently consumed"; docs/design.md,
 * "Reloads").
 *
 * One record per endpoint, `$CITY_ROOT/state/reloads/<runtime>-<personality>.json`, written
 * atomically under the root lock (read-modify-write: concurrent `city` processes never lose a
 * request). The protocol, in sequence numbers:
 * - `request` raises `requested` by one: every request is a new number;
 * - `claim` marks the record as being applied by this process with `target = requested`: every
 *   request so far is covered by this one reload (repeats coalesce);
 * - `complete(target)` sets `applied = max(applied, target)`: a request that arrived during the
 *   reload has a number above `target`, so the record stays owed and exactly one more reload
 *   follows (never silently consumed);
 * - a crash at any point leaves `requested > applied` if anything was owed, so after a restart the
 *   owed reload is applied once more (the claim of a dead process is ignored).
 *
 * Decisions where the spec is silent:
 * - a settled record (nothing owed, no removal) is deleted, so the folder lists owed work only;
 * - a failed attempt (a reload, or an owed removal) releases the claim and keeps the record owed
 *   with `last_error` (stored by the rule of `schema/StoredText.ts`: escaped, capped), one more
 *   `attempts` and the `next_attempt_at` its backoff gives (RetryBackoff.ts); the daemon skips the
 *   endpoint until then (`isDue`), and `city status` and `city capability list` show the failure
 *   meanwhile. A completed reload clears the three, and so does a request (a new surface change is
 *   worth trying at once) and a settle;
 * - a claim by a live process other than this one is respected; a claim by this process is this
 *   process's business (the Applier serializes work per endpoint in memory);
 * - asleep/stopped endpoints owe nothing: `settle` marks every request applied (their next launch
 *   reads the current surfaces) but keeps an owed removal.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as FileSystem from "@effect/platform/FileSystem"
import type { ProcessIdentity as ProcessIdentityT } from "../../schema/ProcessRecord.ts"
import type { RootLockBusy, RootNotFound, StateError } from "../../schema/CapabilityErrors.ts"
import { OwedRecord } from "../../schema/Live.ts"
import { identityOf } from "../../schema/Outcome.ts"
import { storedText } from "../../schema/StoredText.ts"
import { recordOwed } from "../internal/owedGauges.ts"
import * as ProcessIdentity from "../capabilities/ProcessIdentity.ts"
import { StateRoot } from "../capabilities/StateRoot.ts"
import { delayAfter, RetryBackoff } from "./RetryBackoff.ts"
import { layout } from "../city/CityRoot.ts"

/**
 * The folder of the records, relative to the root.
 * @since 0.1.0
 * @category constants
 */
export const reloadsDir = layout.reloads

/**
 * An endpoint, by its two names.
 * @since 0.1.0
 * @category models
 */
export interface EndpointKey {
  /** The peer's personality. */
  readonly personality: string
  /** The runtime. */
  readonly runtime: string
}

/**
 * Is a reload owed by this record?
 * @since 0.1.0
 * @category guards
 */
export const isOwed = (record: OwedRecord): boolean => record.requested > record.applied

/**
 * Is anything (a reload or a removal) owed?
 * @since 0.1.0
 * @category guards
 */
export const owesWork = (record: OwedRecord): boolean => isOwed(record) || record.removal !== undefined

/**
 * Is the record's next attempt due at `now` (epoch milliseconds)? A record that never failed is.
 * @since 0.1.0
 * @category guards
 */
export const isDue = (record: OwedRecord, now: number): boolean =>
  record.next_attempt_at === undefined || Date.parse(record.next_attempt_at) <= now

/** The record without its backoff. */
const withoutBackoff = ({ attempts: _attempts, next_attempt_at: _next, ...rest }: OwedRecord): OwedRecord => rest

/**
 * The pure transitions of a record; the service below makes each one durable.
 * @since 0.1.0
 * @category constructors
 */
export const transitions = {
  empty: (key: EndpointKey, at: string): OwedRecord => ({
    schema: 1,
    personality: key.personality,
    runtime: key.runtime,
    requested: 0,
    applied: 0,
    reason: "",
    updated_at: at
  }),
  request: (record: OwedRecord, reason: string, at: string, capability?: string): OwedRecord => {
    const { capability: _previous, ...rest } = withoutBackoff(record)
    return {
      ...rest,
      requested: record.requested + 1,
      reason,
      ...(capability === undefined ? {} : { capability }),
      updated_at: at
    }
  },
  /**
   * Claims an owed reload for the process `self`; `None` when nothing is owed or a live other
   * process holds it (`alive` says whether the holder still runs).
   */
  claim: (
    record: OwedRecord,
    self: ProcessIdentityT,
    at: string,
    alive: (holder: ProcessIdentityT) => boolean
  ): Option.Option<OwedRecord> => {
    if (!isOwed(record)) return Option.none()
    const held = record.claim
    if (held !== undefined && held.pid !== self.pid && alive({ pid: held.pid, start: held.start ?? null })) return Option.none()
    return Option.some({ ...record, claim: { pid: self.pid, start: self.start, target: record.requested, at }, updated_at: at })
  },
  complete: (record: OwedRecord, target: number, at: string): OwedRecord => {
    const { claim: _claim, last_error: _error, ...rest } = withoutBackoff(record)
    return { ...rest, applied: Math.max(record.applied, target), updated_at: at }
  },
  /** A failed attempt: the claim goes, one more failure counts, the next attempt is due at `next`. */
  release: (record: OwedRecord, error: string, at: string, next: string): OwedRecord => {
    const { claim: _claim, ...rest } = record
    return { ...rest, last_error: error, attempts: (record.attempts ?? 0) + 1, next_attempt_at: next, updated_at: at }
  },
  settle: (record: OwedRecord, at: string): OwedRecord => {
    const { claim: _claim, ...rest } = withoutBackoff(record)
    return { ...rest, applied: record.requested, updated_at: at }
  }
}

type Errors = StateError | RootLockBusy | RootNotFound

/**
 * The durable owed-work store.
 * @since 0.1.0
 * @category tags
 */
export class Reloads extends Context.Tag("effect-city/Reloads")<
  Reloads,
  {
    /** Owes each endpoint one more reload (one lock for the batch). */
    readonly request: (
      keys: ReadonlyArray<EndpointKey>,
      reason: string,
      capability?: string
    ) => Effect.Effect<ReadonlyArray<OwedRecord>, Errors>
    /** Owes the endpoint its removal after its current Turn (`force`: killed at once by its host). */
    readonly requestRemoval: (key: EndpointKey, force?: boolean) => Effect.Effect<OwedRecord, Errors>
    /** Claims the owed reload for this process: the target sequence number, or `None`. */
    readonly claim: (key: EndpointKey) => Effect.Effect<Option.Option<number>, Errors>
    /** The reload up to `target` completed. */
    readonly complete: (key: EndpointKey, target: number) => Effect.Effect<void, Errors>
    /**
     * An attempt failed (a reload or an owed removal): the claim goes, the work stays owed, with
     * the error, one more failed attempt and the time of the next one; the record as written.
     */
    readonly release: (key: EndpointKey, error: string) => Effect.Effect<OwedRecord, Errors>
    /** Nothing to reload (asleep, stopped): every request counts as applied; a removal stays. */
    readonly settle: (key: EndpointKey) => Effect.Effect<void, Errors>
    /** The owed removal is done: the record goes. */
    readonly completeRemoval: (key: EndpointKey) => Effect.Effect<void, Errors>
    readonly get: (key: EndpointKey) => Effect.Effect<Option.Option<OwedRecord>, StateError>
    /** Every record of owed work (unreadable files are skipped here and reported by `invalid`). */
    readonly list: Effect.Effect<ReadonlyArray<OwedRecord>, StateError>
    /** Record files that cannot be read or decoded, with the reason. */
    readonly invalid: Effect.Effect<ReadonlyArray<{ readonly file: string; readonly rule: string }>, StateError>
  }
>() {}

const decode = Schema.decodeUnknownEither(Schema.parseJson(OwedRecord))

/**
 * Builds the owed-work store on the state root.
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Reloads["Type"], never, StateRoot | FileSystem.FileSystem> = Effect.gen(function*() {
  const state = yield* StateRoot
  const fs = yield* FileSystem.FileSystem
  const self = yield* ProcessIdentity.identify(process.pid)
  const backoff = yield* RetryBackoff
  // One lock holder per process at a time: the root lock is not re-entrant, and this spares
  // the retry loop when fibers of the same process contend.
  const mutex = yield* Effect.makeSemaphore(1)
  const file = (key: EndpointKey) => `${reloadsDir}/${identityOf(key.runtime, key.personality)}.json`
  const now = Effect.map(DateTime.now, DateTime.formatIso)

  const read = (key: EndpointKey) =>
    Effect.map(state.readText(file(key)), (text) =>
      Option.flatMap(text, (t) => Either.getRight(decode(t))))

  const write = (key: EndpointKey, record: OwedRecord) =>
    owesWork(record) || record.claim !== undefined ? state.writeJson(file(key), record) : state.remove(file(key))

  /** Read-modify-write of one record under the root lock; `change` returns `None` for "no write". */
  const updateWith = <A>(
    key: EndpointKey,
    change: (record: OwedRecord, at: DateTime.Utc) => Effect.Effect<readonly [Option.Option<OwedRecord>, A]>
  ) =>
    mutex.withPermits(1)(Effect.scoped(Effect.gen(function*() {
      yield* state.lock
      const at = yield* DateTime.now
      const current = Option.getOrElse(yield* read(key), () => transitions.empty(key, DateTime.formatIso(at)))
      const [next, result] = yield* change(current, at)
      if (Option.isSome(next)) yield* write(key, next.value)
      return result
    })))

  const update = <A>(key: EndpointKey, change: (record: OwedRecord, at: string) => readonly [Option.Option<OwedRecord>, A]) =>
    updateWith(key, (record, at) => Effect.succeed(change(record, DateTime.formatIso(at))))

  const request = (keys: ReadonlyArray<EndpointKey>, reason: string, capability?: string) =>
    keys.length === 0 ? Effect.succeed([]) : mutex.withPermits(1)(Effect.scoped(Effect.gen(function*() {
      yield* state.lock
      const at = yield* now
      return yield* Effect.forEach(keys, (key) =>
        Effect.gen(function*() {
          const current = Option.getOrElse(yield* read(key), () => transitions.empty(key, at))
          const next = transitions.request(current, reason, at, capability)
          yield* write(key, next)
          return next
        }))
    })))

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

  const completeRemoval = (key: EndpointKey) =>
    mutex.withPermits(1)(Effect.scoped(Effect.zipRight(state.lock, state.remove(file(key)))))

  const entries = Effect.map(state.list(reloadsDir), (names) => names.filter((n) => n.endsWith(".json")))

  // Every listing (the daemon lists at each pass) sets the owed-work gauges from the files, so they
  // hold across processes: a CLI verb owes, the daemon applies.
  const list = Effect.flatMap(entries, (names) =>
    Effect.tap(Effect.map(
      Effect.forEach(names, (name) =>
        Effect.map(state.readText(`${reloadsDir}/${name}`), (text) =>
          Option.flatMap(text, (t) => Either.getRight(decode(t))))),
      (records) => records.flatMap((r) => Option.isSome(r) ? [r.value] : [])
    ), (records) => recordOwed(records)))

  const invalid = Effect.flatMap(entries, (names) =>
    Effect.map(
      Effect.forEach(names, (name) =>
        Effect.map(state.readText(`${reloadsDir}/${name}`), (text) =>
          Option.flatMap(text, (t) => {
            const decoded = decode(t)
            return Either.isLeft(decoded)
              ? Option.some({ file: state.resolve(`${reloadsDir}/${name}`), rule: decoded.left.message })
              : Option.none()
          }))),
      (found) => found.flatMap((f) => Option.isSome(f) ? [f.value] : [])
    ))

  return Reloads.of({
    request,
    requestRemoval,
    claim,
    complete,
    release,
    settle,
    completeRemoval,
    get: read,
    list,
    invalid
  })
})

/**
 * The owed-work store as a layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(Reloads, make)
