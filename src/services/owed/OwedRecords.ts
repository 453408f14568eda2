/**
 * Owed-work records as data (docs/live-application.md, "Owed work"): the record's folder, the
 * endpoint key, the transitions of the protocol (`request`, `claim`, `complete`, `release`,
 * `settle`, removals), what a look at a record file finds, and the record's decoder. The store
 * itself is `Reloads.ts`; reading and writing one record file is `OwedRecordFile.ts`.
 * @since 0.1.0
 */
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { ProcessIdentity as ProcessIdentityT } from "../../schema/ProcessRecord.ts"
import type { StateRootError } from "../../schema/CapabilityErrors.ts"
import { OwedRecord } from "../../schema/Live.ts"
import type { EndpointKey } from "../../schema/Outcome.ts"
import { layout } from "../root/CityRoot.ts"

/**
 * The folder of the records, relative to the root.
 * @since 0.1.0
 * @category constants
 */
export const reloadsDir = layout.reloads

/**
 * An endpoint, by its two names (schema/Outcome.ts).
 * @since 0.1.0
 * @category models
 */
export type { EndpointKey } from "../../schema/Outcome.ts"

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

/**
 * The failures of a change to a record.
 * @since 0.1.0
 * @category models
 */
export type Errors = StateRootError

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

/**
 * What reading one record file found.
 * @since 0.1.0
 * @category models
 */
export type Loaded =
  | { readonly _tag: "Absent" }
  | { readonly _tag: "Valid"; readonly record: OwedRecord }
  | { readonly _tag: "Invalid"; readonly invalid: InvalidOwedRecord }

/**
 * A record's text decoded (JSON, then the Schema).
 * @since 0.1.0
 * @category utils
 */
export const decode = Schema.decodeUnknownEither(Schema.parseJson(OwedRecord))
