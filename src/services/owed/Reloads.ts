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
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as FileSystem from "@effect/platform/FileSystem"
import type { StateRootError } from "../../schema/CapabilityErrors.ts"
import { OwedRecord } from "../../schema/Live.ts"
import { StateRoot } from "../root/StateRoot.ts"
import { makeRecordFile } from "./OwedRecordFile.ts"
import { type EndpointKey, type Errors, type InvalidOwedRecord, type OwedScan, reloadsDir, transitions } from "./OwedRecords.ts"
import { makeOwedChanges } from "./OwedChanges.ts"

/**
 * The records as data (OwedRecords.ts): their folder, the endpoint key, the protocol's
 * transitions, what a look at the folder finds.
 * @since 0.1.0
 */
export {
  type EndpointKey,
  type InvalidOwedRecord,
  isDue,
  isOwed,
  keysOfIdentity,
  type OwedScan,
  owesWork,
  reloadsDir,
  transitions
} from "./OwedRecords.ts"

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
    readonly get: (key: EndpointKey) => Effect.Effect<Option.Option<OwedRecord>, StateRootError>
    /** Every record of owed work (invalid files are left out here and reported by `scan`). */
    readonly list: Effect.Effect<ReadonlyArray<OwedRecord>, StateRootError>
    /** Every record, valid or not, one read each: the valid ones and the invalid files. */
    readonly scan: Effect.Effect<OwedScan, StateRootError>
    /** Record files that cannot be read or decoded, with the reason. */
    readonly invalid: Effect.Effect<ReadonlyArray<InvalidOwedRecord>, StateRootError>
  }
>() {}


/**
 * Builds the owed-work store on the state root.
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Reloads["Type"], never, StateRoot | FileSystem.FileSystem> = Effect.gen(function*() {
  const state = yield* StateRoot
  // One lock holder per process at a time: the root lock is not re-entrant, and this spares
  // the retry loop when fibers of the same process contend.
  const mutex = yield* Effect.makeSemaphore(1)
  const now = Effect.map(DateTime.now, DateTime.formatIso)

  const { current, file, load, read, write } = makeRecordFile(state)

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

  const entries = Effect.map(state.list(reloadsDir), (names) => names.filter((n) => n.endsWith(".json")))
  const owed = yield* makeOwedChanges({ updateWith, loadAll: Effect.flatMap(entries, (names) => Effect.forEach(names, load)) })

  const recover = (key: EndpointKey) =>
    mutex.withPermits(1)(Effect.scoped(Effect.gen(function*() {
      yield* state.lock
      const [, replaced] = yield* current(key, yield* now)
      return replaced
    })))

  const completeRemoval = (key: EndpointKey) =>
    mutex.withPermits(1)(Effect.scoped(Effect.zipRight(state.lock, state.remove(file(key)))))

  return Reloads.of({ ...owed, request, completeRemoval, recover, get: read })
})

/**
 * The owed-work store as a layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(Reloads, make)
