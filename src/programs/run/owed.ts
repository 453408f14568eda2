/**
 * Owed work and the daemon that carries it out, as the verbs show them (docs/live-application.md):
 * whether a daemon runs on the root, the sentence a verb prints when it leaves `pending` work, and
 * the owed reloads and removals of `city capability list` and `city status`. An endpoint whose
 * owed work failed shows its backoff ("Failed owed work: the backoff"): `failing (attempt N, next
 * at <ISO time>)` and the last reason on one line; in `--json`, `attempts`, `next_attempt_at`,
 * `last_error`. A record file that cannot be read or decoded is an `INVALID` row of the owed table
 * (and a warning; `InvalidOwedRecord` in `--json`'s `invalid`), never a failure of the verb.
 * @since 0.1.0
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { OwedRecord } from "../../schema/Live.ts"
import { identityOf } from "../../schema/Outcome.ts"
import { fieldRuleLine } from "../../schema/ParseIssue.ts"
import * as DaemonLock from "../../services/live/DaemonLock.ts"
import { isOwed, Reloads } from "../../services/owed/Reloads.ts"
import type * as Json from "../jsonOutput.ts"
import * as JsonValues from "../jsonValues.ts"
import * as Out from "../output.ts"

/** `{ running, pid }` of this root's daemon. */
export const daemonInfo = Effect.map(DaemonLock.running, (r) => ({
  running: Option.isSome(r),
  pid: Option.getOrNull(Option.map(r, (x) => x.pid))
}))

/** The sentence a verb prints when it leaves `pending` work. */
export const pendingSentence = (count: number, daemon: { readonly running: boolean; readonly pid: number | null }) =>
  `${count} endpoint(s) pending: ` + (daemon.running
    ? `the city daemon (pid ${daemon.pid}) applies them after their current Turn`
    : "no city daemon is running on this root to carry them out; the work is recorded and done when `city daemon` starts")

/** Prints the pending sentence (stderr) when `count > 0`. */
export const notePending = (count: number, json: boolean) =>
  Effect.gen(function*() {
    const daemon = yield* daemonInfo
    if (count > 0 && !json) yield* Console.log(pendingSentence(count, daemon))
    return daemon
  })

const owedJson = (r: OwedRecord): typeof Json.Owed.Type => ({
  ...JsonValues.endpointJson(r.runtime, r.personality),
  reload: isOwed(r) ? { requested: r.requested, applied: r.applied, reason: r.reason } : null,
  removal: r.removal ?? null,
  last_error: r.last_error ?? null,
  attempts: r.attempts ?? 0,
  next_attempt_at: r.next_attempt_at ?? null,
  updated_at: r.updated_at
})

/** `failing (attempt N, next at <time>)` for work whose last attempt failed, else empty. */
const failing = (r: OwedRecord) =>
  r.attempts === undefined || r.attempts === 0 ? "" : `failing (attempt ${r.attempts}, next at ${r.next_attempt_at ?? "now"})`

/** Owed work, as JSON and as table rows. */
export const owedWork = Effect.gen(function*() {
  const reloads = yield* Reloads
  const records = yield* reloads.list
  const invalid = yield* reloads.invalid
  const daemon = yield* daemonInfo
  return {
    daemon,
    json: records.map(owedJson),
    invalid,
    invalidJson: invalid.map((i): typeof Json.Invalid.Type => ({
      kind: "InvalidOwedRecord",
      file: i.file,
      field: i.field,
      rule: i.rule,
      message: `invalid owed-work record ${i.file}: ${fieldRuleLine(i)}`
    })),
    rows: [
      ...records.map((r) => [
        identityOf(r.runtime, r.personality),
        isOwed(r) ? `reload (${r.applied}/${r.requested})` : "",
        r.removal === undefined ? "" : "removal",
        failing(r),
        r.last_error === undefined ? "" : Out.oneLine(r.last_error, 200),
        r.updated_at
      ]),
      // A record that cannot be read: its row names the file and the reason (the next change of
      // that endpoint's record replaces it, owing a reload again: Reloads.ts).
      ...invalid.map((i) => [i.identity, "INVALID", "", "", Out.oneLine(`${i.file}: ${fieldRuleLine(i)}`, 400), ""])
    ]
  }
})

/** Each invalid owed-work record, loudly on stderr. */
export const warnOwed = (owed: Effect.Effect.Success<typeof owedWork>) =>
  Effect.forEach(owed.invalidJson, (i) => Console.error(Out.safe`city: warning: ${i.message}`), { discard: true })

/**
 * Prints the owed-work section of a human-readable listing; `daemonLine` replaces the line that
 * says whether the daemon runs (`city status` says `frozen`).
 */
export const printOwed = (owed: Effect.Effect.Success<typeof owedWork>, daemonLine?: string) =>
  Effect.gen(function*() {
  yield* warnOwed(owed)
  yield* Console.log(
    owed.rows.length === 0
      ? "no owed reloads or removals"
      : Out.table(["OWED ENDPOINT", "RELOAD", "REMOVAL", "RETRY", "LAST ERROR", "UPDATED"], owed.rows)
  )
  yield* Console.log(daemonLine ?? (owed.daemon.running ? `daemon: running (pid ${owed.daemon.pid})` : "daemon: not running"))
  })

