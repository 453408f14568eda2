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
 * - a record that cannot be read or decoded (not UTF-8, over the cap, a FIFO, a directory, bad
 *   JSON, a broken rule) is a fact about that record, never a failure of the folder: `scan`
 *   reports it (file, field, rule on one line, by the formatter of every stored document,
 *   `schema/ParseIssue.ts`) beside the valid ones, and `get` fails with it. The next change of
 *   that endpoint's record (`recover`, which the daemon calls, or any request, claim or settle)
 *   replaces it with a record that owes a reload again (the one it stood for cannot be known, so
 *   it is owed rather than lost) and logs that once: the atomic write renames over it, and a
 *   directory in its place is set aside first (`StateRoot.ts`).
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
import { type RootLockBusy, type RootNotFound, StateError } from "../../schema/CapabilityErrors.ts"
import { OwedRecord } from "../../schema/Live.ts"
import { identityOf } from "../../schema/Outcome.ts"
import { documentIssue, fieldRuleLine } from "../../schema/ParseIssue.ts"
import { storedText } from "../../schema/StoredText.ts"
import { recordOwed } from "../internal/owedGauges.ts"
import * as ProcessIdentity from "../capabilities/ProcessIdentity.ts"
import { isRefused, refusedRule, StateRoot } from "../capabilities/StateRoot.ts"
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
 * An owed-work record file that cannot be read or decoded.
 * @since 0.1.0
 * @category models
 */
export interface InvalidOwedRecord {
  /** The absolute path of the file. */
  readonly file: string
  /** Its stem, `<runtime>-<personality>`: the endpoint(s) it may belong to. */
  readonly identity: string
  /** The field that breaks a rule; empty when the file as a whole is unusable. */
  readonly field: string
  /** The rule, on one line. */
  readonly rule: string
}

/**
 * What one look at the folder found: the valid records and the invalid files.
 * @since 0.1.0
 * @category models
 */
export interface OwedScan {
  /** The records that decoded, in file-name order. */
  readonly valid: ReadonlyArray<OwedRecord>
  /** One entry per file that did not. */
  readonly invalid: ReadonlyArray<InvalidOwedRecord>
}

/**
 * The endpoints whose identity is `identity` (`<runtime>-<personality>`; both names may hold a
 * `-`, so one identity can name several endpoints), as keys to look up.
 * @since 0.1.0
 * @category utils
 */
export const keysOfIdentity = (identity: string): ReadonlyArray<EndpointKey> =>
  [...identity].flatMap((char, i) =>
    char === "-" && i > 0 && i < identity.length - 1
      ? [{ runtime: identity.slice(0, i), personality: identity.slice(i + 1) }]
      : []
  )

/** What reading one record file found. */
type Loaded =
  | { readonly _tag: "Absent" }
  | { readonly _tag: "Valid"; readonly record: OwedRecord }
  | { readonly _tag: "Invalid"; readonly invalid: InvalidOwedRecord }

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
    /**
     * Replaces the endpoint's record if it cannot be read or decoded, with one that owes a reload
     * again (logged); `true` if it did. A valid or absent record is left as it is.
     */
    readonly recover: (key: EndpointKey) => Effect.Effect<boolean, Errors>
    /** The endpoint's record; `None` when there is none. Fails for a record that is invalid. */
    readonly get: (key: EndpointKey) => Effect.Effect<Option.Option<OwedRecord>, StateError>
    /** Every record of owed work (invalid files are left out here and reported by `scan`). */
    readonly list: Effect.Effect<ReadonlyArray<OwedRecord>, StateError>
    /** Every record, valid or not, one read each: the valid ones and the invalid files. */
    readonly scan: Effect.Effect<OwedScan, StateError>
    /** Record files that cannot be read or decoded, with the reason. */
    readonly invalid: Effect.Effect<ReadonlyArray<InvalidOwedRecord>, StateError>
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

  /** One record file, by its entry name: absent, valid, or invalid with its one-line reason. */
  const load = (name: string): Effect.Effect<Loaded, StateError> => {
    const at = `${reloadsDir}/${name}`
    const invalid = ({ field, rule }: { readonly field: string; readonly rule: string }): Loaded => ({
      _tag: "Invalid",
      invalid: { file: state.resolve(at), identity: name.slice(0, -".json".length), field, rule }
    })
    return state.readText(at).pipe(
      Effect.map((text): Loaded =>
        Option.match(text, {
          onNone: () => ({ _tag: "Absent" }),
          onSome: (t) =>
            Either.match(decode(t), {
              onLeft: (error) => invalid(documentIssue(error)),
              onRight: (record): Loaded => ({ _tag: "Valid", record })
            })
        })
      ),
      Effect.catchIf(isRefused, (e) => Effect.succeed(invalid({ field: "", rule: refusedRule(e) })))
    )
  }
  const nameOf = (key: EndpointKey) => `${identityOf(key.runtime, key.personality)}.json`

  const read = (key: EndpointKey): Effect.Effect<Option.Option<OwedRecord>, StateError> =>
    Effect.flatMap(load(nameOf(key)), (loaded) =>
      loaded._tag === "Absent"
        ? Effect.succeed(Option.none())
        : loaded._tag === "Valid"
        ? Effect.succeed(Option.some(loaded.record))
        : Effect.fail(
          new StateError({ operation: "read", path: loaded.invalid.file, detail: fieldRuleLine(loaded.invalid) })
        ))

  const write = (key: EndpointKey, record: OwedRecord) =>
    owesWork(record) || record.claim !== undefined ? state.writeJson(file(key), record) : state.remove(file(key))

  /**
   * The record to change, the root lock held: an invalid one is replaced at once by one that owes
   * a reload again (so nothing below removes what is in its place), and that is logged.
   */
  const current = (key: EndpointKey, at: string): Effect.Effect<readonly [OwedRecord, boolean], StateError> =>
    Effect.flatMap(load(nameOf(key)), (loaded): Effect.Effect<readonly [OwedRecord, boolean], StateError> => {
      if (loaded._tag === "Absent") return Effect.succeed([transitions.empty(key, at), false] as const)
      if (loaded._tag === "Valid") return Effect.succeed([loaded.record, false] as const)
      const reason = `owed again: its record could not be read (${fieldRuleLine(loaded.invalid)})`
      const again = transitions.request(transitions.empty(key, at), reason, at)
      return write(key, again).pipe(
        Effect.zipRight(Effect.logWarning(
          `owed-work record ${loaded.invalid.file} is invalid (${fieldRuleLine(loaded.invalid)}): ` +
            "replaced; the reload it may have stood for is owed again"
        ).pipe(Effect.annotateLogs({ endpoint: identityOf(key.runtime, key.personality) }))),
        Effect.as([again, true] as const satisfies readonly [OwedRecord, boolean])
      )
    })

  /** Read-modify-write of one record under the root lock; `change` returns `None` for "no write". */
  const updateWith = <A>(
    key: EndpointKey,
    change: (record: OwedRecord, at: DateTime.Utc) => Effect.Effect<readonly [Option.Option<OwedRecord>, A]>
  ) =>
    mutex.withPermits(1)(Effect.scoped(Effect.gen(function*() {
      yield* state.lock
      const at = yield* DateTime.now
      const [record] = yield* current(key, DateTime.formatIso(at))
      const [next, result] = yield* change(record, at)
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
          const [record] = yield* current(key, at)
          const next = transitions.request(record, reason, at, capability)
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

  const recover = (key: EndpointKey) =>
    mutex.withPermits(1)(Effect.scoped(Effect.gen(function*() {
      yield* state.lock
      const [, replaced] = yield* current(key, yield* now)
      return replaced
    })))

  const completeRemoval = (key: EndpointKey) =>
    mutex.withPermits(1)(Effect.scoped(Effect.zipRight(state.lock, state.remove(file(key)))))

  const entries = Effect.map(state.list(reloadsDir), (names) => names.filter((n) => n.endsWith(".json")))

  // Every listing (the daemon lists at each pass) sets the owed-work gauges from the files, so they
  // hold across processes: a CLI verb owes, the daemon applies.
  const scan = Effect.tap(
    Effect.map(
      Effect.flatMap(entries, (names) => Effect.forEach(names, load)),
      (found): OwedScan => ({
        valid: found.flatMap((f) => f._tag === "Valid" ? [f.record] : []),
        invalid: found.flatMap((f) => f._tag === "Invalid" ? [f.invalid] : [])
      })
    ),
    (found) => recordOwed(found.valid)
  )

  const list = Effect.map(scan, (found) => found.valid)

  const invalid = Effect.map(scan, (found) => found.invalid)

  return Reloads.of({
    request,
    requestRemoval,
    claim,
    complete,
    release,
    settle,
    completeRemoval,
    recover,
    get: read,
    list,
    scan,
    invalid
  })
})

/**
 * The owed-work store as a layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(Reloads, make)
