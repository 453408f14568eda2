/**
 * Rendering for the `city` verbs: aligned tables by default, `--json` for
 * scripts, warnings on stderr, progress on a TTY, and the exit codes of the
 * issue: 0 success, 1 some endpoint failed (or the state root failed us),
 * 2 refused input.
 *
 * Decisions (also in the README):
 * - `--json` prints exactly one document on stdout for every verb and every outcome, the
 *   envelope `{ ok, verb, ... }` where `verb` is the whole command without `city`
 *   (`"capability register"`, `"peer list"`); a failure is `{ ok: false, verb, error: { _tag,
 *   message, ... } }`, bad usage included (`_tag: "UsageError"`).
 * - The progress line (stderr, a terminal, not `--json`) counts failures as they happen
 *   (`37/120 endpoints, 2 failed`); it is erased before the result is printed, and ended with
 *   a newline when the verb is interrupted (Ctrl-C), so the shell prompt starts on a fresh line.
 * - A sweep's table is followed by its failures, one line each, and the summary line last, so
 *   the end of the output says what went wrong without scrolling a long table.
 * @since 0.1.0
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import { refusedTags } from "../schema/CapabilityErrors.ts"
import type { EndpointOutcome } from "../schema/Outcome.ts"
import * as Duration from "effect/Duration"
import type { JointReport, JointSettings } from "../services/capabilities/Provisioner.ts"
import { Invocation, stderrColor } from "./invocation.ts"

/** An aligned table; empty cells print as `-`. */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const all = [header, ...rows].map((row) => row.map((cell) => cell === "" ? "-" : cell))
  const widths = header.map((_, i) => Math.max(...all.map((row) => (row[i] ?? "").length)))
  return all
    .map((row) => row.map((cell, i) => i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)).join("  "))
    .join("\n")
}

const oneLine = (text: string, max = 160): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > max ? `…${flat.slice(flat.length - max)}` : flat
}

export const outcomeRows = (outcomes: ReadonlyArray<EndpointOutcome>) =>
  outcomes.map((o) => [
    o.capability,
    o.identity,
    o.occasion,
    o.state,
    o.exit === undefined ? "" : String(o.exit),
    String(Math.round(o.ms)),
    oneLine(o.detail ?? "")
  ])

export const outcomeTable = (outcomes: ReadonlyArray<EndpointOutcome>): string =>
  table(["CAPABILITY", "ENDPOINT", "OCCASION", "STATE", "EXIT", "MS", "DETAIL"], outcomeRows(outcomes))

export const summarize = (outcomes: ReadonlyArray<EndpointOutcome>) => {
  const counts: Record<string, number> = {}
  for (const o of outcomes) counts[o.state] = (counts[o.state] ?? 0) + 1
  const failed = outcomes.length - (counts["ok"] ?? 0)
  return { total: outcomes.length, ok: counts["ok"] ?? 0, failed, byState: counts }
}

export const summaryLine = (outcomes: ReadonlyArray<EndpointOutcome>): string => {
  const s = summarize(outcomes)
  const parts = Object.entries(s.byState).sort().map(([state, n]) => `${n} ${state}`)
  return `${s.total} endpoint${s.total === 1 ? "" : "s"}${parts.length === 0 ? "" : `: ${parts.join(", ")}`}`
}

export const invalidJson = (report: Pick<JointReport, "invalid">) =>
  report.invalid.map((e) => ({ kind: e._tag, file: e.file, field: e.field, rule: e.rule, message: e.message }))

/** Every invalid file met, loudly on stderr. */
export const warnInvalid = (report: Pick<JointReport, "invalid">) =>
  Effect.forEach(report.invalid, (e) => Console.error(`city: warning: ${e.message}`), { discard: true })

/** Each failed call of a birth or remove, as a loud warning (the flow itself completed). */
export const warnFailures = (outcomes: ReadonlyArray<EndpointOutcome>) =>
  Effect.forEach(
    outcomes.filter((o) => o.state !== "ok"),
    (o) =>
      Console.error(
        `city: warning: capability ${o.capability} ${o.occasion} for ${o.identity}: ${o.state}` +
          `${o.exit === undefined ? "" : ` exit=${o.exit}`}${o.detail === undefined ? "" : `: ${oneLine(o.detail, 400)}`}`
      ),
    { discard: true }
  )

/** Ends the progress line if one is on screen: erased, or (`interrupted`) kept and ended. */
export const endProgress = (interrupted = false) =>
  Effect.gen(function*() {
    const invocation = yield* Invocation
    if (!(yield* Ref.getAndSet(invocation.progressShown, false))) return
    if (interrupted) return yield* invocation.writeStderr("\n")
    yield* invocation.writeStderr(stderrColor(invocation) ? "\r\u001b[K" : `\r${" ".repeat(60)}\r`)
  })

/**
 * Progress on a terminal (stderr), unless JSON was asked for: `  37/120 endpoints, 2 failed`,
 * rewritten in place after each call.
 */
export const progress = (json: boolean): Effect.Effect<JointSettings["onProgress"], never, Invocation> =>
  Effect.map(Invocation, (invocation) => {
    if (json || !invocation.stderrIsTTY) return undefined
    let failed = 0
    return (done: number, total: number, outcome?: EndpointOutcome) => {
      if (outcome !== undefined && outcome.state !== "ok") failed++
      const text = `\r  ${done}/${total} endpoints${failed === 0 ? "" : `, ${failed} failed`}`
      return Effect.zipRight(invocation.writeStderr(text), Ref.set(invocation.progressShown, true))
    }
  })

/** The envelope's `verb`: the whole command without `city`. */
export type VerbPath = string

export const printJson = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

export const setExitCode = (code: number) => Effect.flatMap(Invocation, (i) => Ref.set(i.exitCode, code))

/** Some endpoint did not end `ok` (exit 1). */
export const anyFailed = (outcomes: ReadonlyArray<EndpointOutcome>): boolean => outcomes.some((o) => o.state !== "ok")

interface Failure {
  readonly _tag: string
  readonly message: string
}

const isFailure = (u: unknown): u is Failure =>
  typeof u === "object" && u !== null && "_tag" in u && "message" in u &&
  typeof (u as Failure)._tag === "string" && typeof (u as Failure).message === "string"

/** A failure's fields for the JSON envelope (the facts, then its tag and message). */
const errorJson = (error: unknown, failure: Failure): Record<string, unknown> => ({
  ...(typeof error === "object" && error !== null ? { ...error } : {}),
  _tag: failure._tag,
  message: failure.message
})

/** Prints a failure (stderr, and the envelope on stdout with `--json`) and sets its exit code. */
export const reportFailure = (verb: VerbPath, json: boolean, error: unknown, code: number) =>
  Effect.gen(function*() {
    const failure = isFailure(error) ? error : { _tag: "Error", message: String(error) }
    yield* endProgress()
    yield* Console.error(`city: error: ${failure.message}`)
    if (json) yield* printJson({ ok: false, verb, error: errorJson(error, failure) })
    yield* setExitCode(code)
  })

/**
 * Runs a verb: a typed failure is printed (stderr, and as JSON on stdout with
 * `--json`) and mapped to exit 2 when it refuses input, else exit 1. When the verb is
 * interrupted (Ctrl-C) the progress line is ended first; the services' finalizers release the
 * lock and terminate the running commands.
 */
export const runVerb = <E, R>(
  verb: VerbPath,
  json: boolean,
  effect: Effect.Effect<void, E, R>
): Effect.Effect<void, never, R | Invocation> =>
  effect.pipe(
    Effect.zipLeft(endProgress()),
    Effect.catchAll((error) =>
      reportFailure(verb, json, error, isFailure(error) && (refusedTags.has(error._tag) || error._tag === "UsageError") ? 2 : 1)
    ),
    Effect.onInterrupt(() => endProgress(true))
  )

/** The settings of a verb that runs commands: per-call timeout, concurrency, TTY progress. */
export const settings = (json: boolean, timeoutMs: number, concurrency: number): Effect.Effect<JointSettings, never, Invocation> =>
  Effect.map(progress(json), (onProgress) => ({
    timeout: Duration.millis(timeoutMs),
    concurrency,
    ...(onProgress === undefined ? {} : { onProgress })
  }))

/** The failed calls, one line each: what the end of a sweep's output says. */
export const failureLines = (outcomes: ReadonlyArray<EndpointOutcome>): Array<string> =>
  outcomes.filter((o) => o.state !== "ok").map((o) =>
    `  ${o.capability} ${o.identity}: ${o.state}${o.exit === undefined ? "" : ` exit=${o.exit}`}` +
    `${o.detail === undefined || o.detail === "" ? "" : `: ${oneLine(o.detail, 200)}`}`
  )

/**
 * Renders a joint's report. A `sweep` (register, sync, unregister) exits 1 when an endpoint
 * failed or a peer file could not be read; a `joint` (birth, remove) always completes with exit 0
 * and prints each failed call as a loud warning.
 */
export const renderReport = (options: {
  readonly policy: "sweep" | "joint"
  readonly verb: VerbPath
  readonly json: boolean
  readonly report: JointReport
  readonly extra: Record<string, unknown>
  readonly headline: string
}) =>
  Effect.gen(function*() {
    const { extra, headline, json, policy, report, verb } = options
    const failed = policy === "sweep" &&
      (anyFailed(report.outcomes) || report.invalid.some((e) => e._tag === "InvalidPeerFile"))
    yield* endProgress()
    yield* warnInvalid(report)
    if (policy === "joint") yield* warnFailures(report.outcomes)
    if (json) {
      yield* printJson({
        ok: !failed,
        verb,
        ...extra,
        outcomes: report.outcomes,
        summary: summarize(report.outcomes),
        invalid: invalidJson(report)
      })
    } else {
      yield* Console.log(headline)
      if (report.outcomes.length > 0) yield* Console.log(outcomeTable(report.outcomes))
      const failures = failureLines(report.outcomes)
      if (policy === "sweep" && failures.length > 0) {
        yield* Console.log(`\nfailed (${failures.length} of ${report.outcomes.length}):\n${failures.join("\n")}`)
      }
      if (policy === "sweep" || report.outcomes.length > 0) yield* Console.log(`summary: ${summaryLine(report.outcomes)}`)
    }
    yield* setExitCode(failed ? 1 : 0)
  })
