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
import type { CapabilityFailure } from "../schema/CapabilityErrors.ts"
import { exitCodeOf } from "../schema/ExitPolicy.ts"
import { moreLine } from "../schema/Faults.ts"
import type { InvalidFile } from "../schema/FileErrors.ts"
import type { ClusterError, DaemonError } from "../schema/Live.ts"
import type { EndpointOutcome } from "../schema/Outcome.ts"
import type { JointReport, JointSettings } from "../services/capabilities/Provisioner.ts"
import { type Calls, Invocation, type PlannedCall, setExitCode } from "./invocation.ts"
import type * as Json from "./jsonOutput.ts"
import * as JsonValues from "./jsonValues.ts"
import type { UsageError } from "./options.ts"
import { endProgress, errorLines, escapeControl, oneLine, printFailure, printJson, safe } from "./print.ts"

export { endProgress, errorLines, escapeControl, oneLine, printFailure, printJson, safe }


/** An aligned table; empty cells print as `-`; control characters in cells are escaped. */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const all = [header, ...rows].map((row) =>
    row.map((cell) => cell === "" ? "-" : escapeControl(cell.replace(/[\r\n\t]+/g, " ")))
  )
  const widths = header.map((_, i) => Math.max(...all.map((row) => (row[i] ?? "").length)))
  return all
    .map((row) => row.map((cell, i) => i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)).join("  "))
    .join("\n")
}


/**
 * One call's outcome as a report prints it: on a fleet, a sweep's outcome carries its host
 * (docs/cluster.md, "Verbs on a fleet"), and the table and the failure lines name it.
 */
export type ReportOutcome = EndpointOutcome & { readonly host?: string }

/** A joint's report as the verbs print it: its outcomes may carry their host (a sweep on a fleet). */
export type PrintedReport = Omit<JointReport, "outcomes"> & { readonly outcomes: ReadonlyArray<ReportOutcome> }

/** Whether the outcomes are a fleet's: each names its host. */
const onHosts = (outcomes: ReadonlyArray<ReportOutcome>) => outcomes.some((o) => o.host !== undefined)

export const outcomeRows = (outcomes: ReadonlyArray<ReportOutcome>) =>
  outcomes.map((o) => [
    ...(onHosts(outcomes) ? [o.host ?? ""] : []),
    o.capability,
    o.personality,
    o.runtime,
    o.occasion,
    o.state,
    o.application ?? "",
    o.exit === undefined ? "" : String(o.exit),
    String(Math.round(o.ms)),
    oneLine([o.detail, o.application_detail].filter((d) => d !== undefined).join("; "))
  ])

export const outcomeTable = (outcomes: ReadonlyArray<ReportOutcome>): string =>
  table(
    [...(onHosts(outcomes) ? ["HOST"] : []), "CAPABILITY", "PEER", "RUNTIME", "OCCASION", "STATE", "APPLICATION", "EXIT", "MS", "DETAIL"],
    outcomeRows(outcomes)
  )

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

/** An invalid file's faults as table rows, `[field, rule]`, one per fault, then the count of the others. */
export const faultRows = (e: InvalidFile): ReadonlyArray<readonly [string, string]> => [
  ...e.faults.map(({ field, rule }) => [field, rule] as const),
  ...(e.moreFaults > 0 ? [["", moreLine(e.moreFaults)] as const] : [])
]

/** Every invalid file met, loudly on stderr: a line per fault. */
export const warnInvalid = (report: { readonly invalid: ReadonlyArray<InvalidFile> }) =>
  Effect.forEach(report.invalid.flatMap(errorLines), (line) => Console.error(`city: warning: ${oneLine(line, 1000)}`), { discard: true })


/** Each failed call of a birth or remove, as a loud warning (the flow itself completed). */
export const warnFailures = (outcomes: ReadonlyArray<EndpointOutcome>) =>
  Effect.forEach(
    outcomes.filter((o) => o.state !== "ok"),
    (o) =>
      Console.error(
        safe`city: warning: capability ${o.capability} ${o.occasion} for peer ${o.personality} runtime ${o.runtime}: ${o.state}` +
          `${o.exit === undefined ? "" : ` exit=${o.exit}`}${o.detail === undefined ? "" : `: ${oneLine(o.detail, 400)}`}`
      ),
    { discard: true }
  )



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


/** A verb's success document, `{ ok, verb, ... }`, its shape the verb's Schema (`jsonOutput.ts`). */
export const printDocument = <V extends Json.DocumentVerb>(verb: V, body: Json.Body<V>) => {
  const { ok, ...rest } = body as { readonly ok: boolean }
  return printJson({ ok, verb, ...rest })
}


export { setExitCode }

/** What a verb can fail with: a capability error, bad usage, no status page; each one classified by the exit policy (`ExitPolicy.ts`). */
export type VerbError = CapabilityFailure | UsageError | DaemonError | ClusterError

/** Prints a failure (stderr, and the envelope on stdout with `--json`) and sets its exit code. */
export const reportFailure = (verb: VerbPath, json: boolean, error: VerbError) =>
  Effect.gen(function*() {
    yield* endProgress()
    yield* Effect.forEach(errorLines(error), (line) => Console.error(`city: error: ${oneLine(line, 2000)}`), { discard: true })
    if (json) yield* printFailure(verb, error)
    yield* setExitCode(exitCodeOf(error))
  })

/**
 * Runs a verb: a typed failure is printed as one line on stderr (and as JSON on stdout with
 * `--json`) and sets the exit code of its tag (`ExitPolicy.ts`): 2 when it refuses input, else 1. Every error
 * a verb can fail with must be classified there (`VerbError`), so a new one cannot slip through. When
 * the verb is interrupted (Ctrl-C, SIGTERM) the services' finalizers release the lock and
 * terminate the running commands; then the progress line is ended and the verb says what
 * finished and what was interrupted (`reportInterrupted`).
 */
export const runVerb = <E extends VerbError, R>(
  verb: VerbPath,
  json: boolean,
  effect: Effect.Effect<void, E, R>
): Effect.Effect<void, never, R | Invocation> =>
  effect.pipe(
    Effect.zipLeft(endProgress()),
    Effect.catchAll((error: VerbError) => reportFailure(verb, json, error)),
    Effect.onInterrupt(() => reportInterrupted(verb, json))
  )

/**
 * The settings of a verb that runs commands: per-call timeout, concurrency, TTY progress, and the
 * record of its calls (`Invocation.calls`) that an interruption reports.
 */
export const settings = (json: boolean, timeoutMs: number, concurrency: number): Effect.Effect<JointSettings, never, Invocation> =>
  Effect.map(Effect.zip(progress(json), Invocation), ([onProgress, invocation]): JointSettings => ({
    // A number is milliseconds; passed as given so that a negative one is named in the refusal.
    timeout: timeoutMs,
    concurrency,
    onStart: (endpoints, occasion) =>
      Ref.update(invocation.calls, (calls) => ({
        ...calls,
        planned: [
          ...calls.planned,
          ...endpoints.map((e) => ({ capability: e.declaration.capability, personality: e.peer.personality, runtime: e.runtime, occasion }))
        ]
      })),
    onProgress: (done, total, outcome) =>
      Effect.zipRight(
        Ref.update(invocation.calls, (calls) => ({ ...calls, finished: [...calls.finished, outcome] })),
        onProgress === undefined ? Effect.void : onProgress(done, total, outcome)
      )
  }))

/** The planned calls that did not finish: each planned call not matched by a finished outcome. */
const unfinished = (calls: Calls): ReadonlyArray<PlannedCall> => {
  const key = (c: PlannedCall) => `${c.capability}\u0000${c.personality}\u0000${c.runtime}\u0000${c.occasion}`
  const done = new Map<string, number>()
  for (const o of calls.finished) done.set(key(o), (done.get(key(o)) ?? 0) + 1)
  return calls.planned.filter((c) => {
    const left = done.get(key(c)) ?? 0
    if (left === 0) return true
    done.set(key(c), left - 1)
    return false
  })
}

/**
 * What an interrupted verb says, once its finalizers have run (the commands ended, the lock
 * released): one line on stderr, `city: interrupted: capability sync: 1 of 2 endpoints done, 1
 * interrupted`, and with `--json` its document on stdout, `{ ok: false, verb, error: { _tag:
 * "Interrupted", message }, outcomes, summary }`: the finished calls' outcomes, then each call that
 * did not finish as `interrupted` (a verb that ran no call has the envelope alone).
 */
export const reportInterrupted = (verb: VerbPath, json: boolean) =>
  Effect.gen(function*() {
    yield* endProgress(true)
    const calls = yield* Ref.get((yield* Invocation).calls)
    const left = unfinished(calls)
    const total = calls.planned.length
    const counts = total === 0 ? "" : `: ${total - left.length} of ${total} endpoint${total === 1 ? "" : "s"} done, ${left.length} interrupted`
    yield* Console.error(safe`city: interrupted: ${verb}${counts}`)
    if (!json) return
    const error = { _tag: "Interrupted", message: `interrupted${counts}` }
    if (total === 0) return yield* printJson({ ok: false, verb, error })
    const finished = calls.finished.map(JsonValues.outcomeJson)
    const interrupted = left.map((c): typeof Json.InterruptedOutcome.Type => ({
      capability: c.capability,
      peer: c.personality,
      runtime: c.runtime,
      occasion: c.occasion,
      state: "interrupted"
    }))
    const { byState, ...counted } = summarize(calls.finished)
    const document: typeof Json.Interrupted.Type = {
      ok: false,
      verb,
      error,
      outcomes: [...finished, ...interrupted],
      summary: {
        total,
        ok: counted.ok,
        failed: total - counted.ok,
        by_state: left.length === 0 ? byState : { ...byState, interrupted: left.length }
      }
    }
    yield* printJson(document)
  })

/** The failed calls, one line each: what the end of a sweep's output says. */
export const failureLines = (outcomes: ReadonlyArray<ReportOutcome>): Array<string> =>
  outcomes.filter((o) => o.state !== "ok").map((o) =>
    safe`  ${o.capability} peer ${o.personality} runtime ${o.runtime}${o.host === undefined ? "" : safe` on host ${o.host}`}: ` +
    safe`${o.state}${o.exit === undefined ? "" : ` exit=${o.exit}`}` +
    `${o.detail === undefined || o.detail === "" ? "" : `: ${oneLine(o.detail, 200)}`}`
  )

/** The verbs that run a joint and render its report. */
export type JointVerb =
  | "capability register"
  | "capability sync"
  | "capability unregister"
  | "peer create"
  | "peer init"
  | "peer add-runtime"
  | "peer default-runtime"
  | "peer remove"
  | "peer remove-runtime"

/** A joint verb's own fields of its document. */
export type Extra<V extends JointVerb> = Omit<Json.Body<V>, keyof JointFields>

/** The fields every joint's document has. */
interface JointFields {
  readonly ok: boolean
  readonly verdict: JointReport["verdict"]
  readonly outcomes: ReadonlyArray<typeof Json.Outcome.Type>
  readonly summary: typeof Json.SweepSummary.Type | typeof Json.Summary.Type
  readonly invalid: ReadonlyArray<typeof Json.Invalid.Type>
}

/**
 * Renders a joint's report; its `verdict` decides the exit code (`failed`: 1, else 0). A `sweep`
 * (register, sync, unregister) lists every outcome, then its failures (each failed endpoint and
 * each peer file it could not read), then the summary, which counts both; a `joint` (birth,
 * remove) prints each failed call as a loud warning.
 */
export const renderReport = <V extends JointVerb>(options: {
  readonly policy: "sweep" | "joint"
  readonly verb: V
  readonly json: boolean
  readonly report: PrintedReport
  /** The verb's own fields of its document. */
  readonly extra: Extra<V>
  readonly headline: string
}) =>
  Effect.gen(function*() {
    const { extra, headline, json, policy, report, verb } = options
    const failed = report.verdict === "failed"
    // A sweep could not attempt the endpoints of a peer file it could not read: a failure too.
    const unreadable = policy === "sweep" ? report.invalid.filter((e) => e._tag === "InvalidFile" && e.reason === "PeerFile") : []
    yield* endProgress()
    yield* warnInvalid(report)
    if (policy === "joint") yield* warnFailures(report.outcomes)
    if (json) {
      const { byState, ...counts } = summarize(report.outcomes)
      const fields: JointFields = {
        ok: !failed,
        verdict: report.verdict,
        outcomes: report.outcomes.map(JsonValues.outcomeJson),
        summary: { ...counts, by_state: byState, ...(policy === "sweep" ? { unreadable_peer_files: unreadable.length } : {}) },
        invalid: JsonValues.invalidJson(report.invalid)
      }
      // The verb's own fields after the verdict, as the glossary lists them.
      const { ok, verdict, ...rest } = fields
      yield* printDocument(verb, { ok, verdict, ...extra, ...rest } as unknown as Json.Body<V>)
    } else {
      yield* Console.log(headline)
      if (report.outcomes.length > 0) yield* Console.log(outcomeTable(report.outcomes))
      const failedCalls = failureLines(report.outcomes)
      // An unreadable peer file: a line per fault, the last one saying what it cost.
      const failures = [
        ...failedCalls,
        ...unreadable.flatMap((e) =>
          errorLines(e).map((line, i, lines) =>
            `  ${oneLine(line, 400)}${i === lines.length - 1 ? ": its endpoints were not attempted" : ""}`
          )
        )
      ]
      if (policy === "sweep" && failures.length > 0) {
        const files = unreadable.length === 0 ? "" : `, ${unreadable.length} unreadable peer file(s)`
        const calls = failedCalls.length
        yield* Console.log(`\nfailed (${calls} of ${report.outcomes.length}${files}):\n${failures.join("\n")}`)
      }
      if (policy === "sweep" || report.outcomes.length > 0) {
        const files = unreadable.length === 0 ? "" : `; ${unreadable.length} unreadable peer file(s), not attempted`
        yield* Console.log(`summary: ${summaryLine(report.outcomes)}${files}`)
      }
    }
    yield* setExitCode(failed ? 1 : 0)
  })
