/**
 * Rendering for the `city` verbs: aligned tables by default, `--json` for
 * scripts, warnings on stderr, progress on a TTY, and the exit codes of the
 * issue: 0 success, 1 some endpoint failed (or the state root failed us),
 * 2 refused input.
 * @since 0.1.0
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { refusedTags } from "../schema/CapabilityErrors.ts"
import type { EndpointOutcome } from "../schema/Outcome.ts"
import * as Duration from "effect/Duration"
import type { JointReport, JointSettings } from "../services/capabilities/Provisioner.ts"

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

/** Progress on a TTY (stderr), unless JSON was asked for. */
export const progress = (json: boolean): JointSettings["onProgress"] =>
  !json && process.stderr.isTTY
    ? (done, total) =>
      Effect.sync(() => {
        process.stderr.write(`\r  ${done}/${total} endpoints${done === total ? "\r\u001b[K" : ""}`)
      })
    : undefined

export const printJson = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

export const setExitCode = (code: number) => Effect.sync(() => {
  process.exitCode = code
})

/** Some endpoint did not end `ok` (exit 1). */
export const anyFailed = (outcomes: ReadonlyArray<EndpointOutcome>): boolean => outcomes.some((o) => o.state !== "ok")

interface Failure {
  readonly _tag: string
  readonly message: string
}

const isFailure = (u: unknown): u is Failure =>
  typeof u === "object" && u !== null && "_tag" in u && "message" in u &&
  typeof (u as Failure)._tag === "string" && typeof (u as Failure).message === "string"

/**
 * Runs a verb: a typed failure is printed (stderr, and as JSON on stdout with
 * `--json`) and mapped to exit 2 when it refuses input, else exit 1.
 */
export const runVerb = <E, R>(json: boolean, verb: Effect.Effect<void, E, R>): Effect.Effect<void, never, R> =>
  verb.pipe(
    Effect.catchAll((error) =>
      Effect.gen(function*() {
        const failure = isFailure(error) ? error : { _tag: "Error", message: String(error) }
        const code = refusedTags.has(failure._tag) ? 2 : 1
        yield* Console.error(`city: error: ${failure.message}`)
        if (json) yield* printJson({ ok: false, error: { ...(error as object), _tag: failure._tag, message: failure.message } })
        yield* setExitCode(code)
      })
    )
  )

/** The settings of a verb that runs commands: per-call timeout, concurrency, TTY progress. */
export const settings = (json: boolean, timeoutMs: number, concurrency: number): JointSettings => {
  const onProgress = progress(json)
  return {
    timeout: Duration.millis(timeoutMs),
    concurrency,
    ...(onProgress === undefined ? {} : { onProgress })
  }
}

/**
 * Renders a joint's report. A `sweep` (register, sync, unregister) exits 1 when an endpoint
 * failed or a peer file could not be read; a `joint` (birth, remove) always completes with exit 0
 * and prints each failed call as a loud warning.
 */
export const renderReport = (options: {
  readonly policy: "sweep" | "joint"
  readonly verb: string
  readonly json: boolean
  readonly report: JointReport
  readonly extra: Record<string, unknown>
  readonly headline: string
}) =>
  Effect.gen(function*() {
    const { extra, headline, json, policy, report, verb } = options
    const failed = policy === "sweep" &&
      (anyFailed(report.outcomes) || report.invalid.some((e) => e._tag === "InvalidPeerFile"))
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
      if (policy === "sweep" || report.outcomes.length > 0) yield* Console.log(`summary: ${summaryLine(report.outcomes)}`)
    }
    yield* setExitCode(failed ? 1 : 0)
  })
