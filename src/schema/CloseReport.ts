/**
 * What one close of a City did, as a Schema that encodes to plain JSON and prints on one line
 * (docs/library.md, "Close runs once" and "Reports"): `city.close` succeeds with it, and
 * `CityCloseError` carries it. Exported once, as `City.CloseReport`.
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Schema from "effect/Schema"

/**
 * One cleanup failure of a close: what failed (`plugin <name>`, `workspace <id>`, `initialize of
 * <name>`) and its Cause.
 * @since 0.1.0
 * @category models
 */
export const CloseFailure = Schema.Struct({
  subject: Schema.String,
  /**
   * Encoded as its text (`Cause.pretty`, causes of errors included), so a report prints as plain
   * JSON; decoded back, that text is the message of a defect: a report read back is for reading.
   */
  cause: Schema.transform(Schema.String, Schema.CauseFromSelf({ error: Schema.Unknown, defect: Schema.Unknown }), {
    strict: true,
    decode: (text) => Cause.die(new Error(text)),
    encode: (cause) => Cause.pretty(cause, { renderErrorCause: true })
  })
})
/**
 * One cleanup failure of a close: what failed and its Cause.
 * @since 0.1.0
 * @category models
 */
export type CloseFailure = typeof CloseFailure.Type

/**
 * A plugin that close disposed: how its dispose ended and how long it took.
 * @since 0.1.0
 * @category models
 */
export const ClosedPlugin = Schema.Struct({
  plugin: Schema.String,
  /**
   * `disposed`; `failed` when a finalizer failed; `timed-out` when it was still running after
   * `disposeTimeout` (it goes on in the background). The failure is in the report's `failures`.
   */
  outcome: Schema.Literal("disposed", "failed", "timed-out"),
  /** From the start of its dispose to its end (`timed-out`: to when close stopped waiting for it); encoded in milliseconds. */
  duration: Schema.DurationFromMillis
})
/**
 * A plugin that close disposed: how its dispose ended and how long it took.
 * @since 0.1.0
 * @category models
 */
export type ClosedPlugin = typeof ClosedPlugin.Type

const counted = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`

const closeSummary = (report: {
  readonly sessions: ReadonlyArray<string>
  readonly interrupted: number
  readonly plugins: ReadonlyArray<{ readonly outcome: string }>
  readonly workspaces: ReadonlyArray<string>
  readonly failures: ReadonlyArray<{ readonly subject: string }>
  readonly duration: Duration.Duration
}): string => {
  const failed = report.failures.map((f) => f.subject)
  const timedOut = report.plugins.filter((p) => p.outcome === "timed-out").length
  return [
    `${counted(report.plugins.length, "plugin")} disposed` + (timedOut === 0 ? "" : ` (${timedOut} timed out)`),
    `${counted(failed.length, "cleanup failure")}` + (failed.length === 0 ? "" : ` (${failed.join(", ")})`),
    ...(report.sessions.length === 0 ? [] : [`${counted(report.sessions.length, "session")} stopped`]),
    ...(report.interrupted === 0 ? [] : [`${report.interrupted} interrupted`]),
    ...(report.workspaces.length === 0 ? [] : [`${counted(report.workspaces.length, "workspace")} released`]),
    `in ${Math.round(Duration.toMillis(report.duration))} ms`
  ].join(", ")
}

/**
 * What one close of a City did (docs/library.md, "Close runs once"): `city.close` succeeds with it,
 * and `CityCloseError` carries it when cleanups failed. A later close returns the same report.
 * @since 0.1.0
 * @category models
 */
export const CloseReport = Schema.Struct({
  /** The Sessions close stopped (those still open when it began), by id. */
  sessions: Schema.Array(Schema.String),
  /** How many Steps and `city.calls` calls were still running after `drainTimeout`, and interrupted. */
  interrupted: Schema.Number,
  /** How long close waited for running Steps and calls to finish (at most `drainTimeout`); encoded in milliseconds. */
  drain: Schema.DurationFromMillis,
  /** The plugins close disposed, wave by wave (dependents first), in the order each was handled. */
  plugins: Schema.Array(ClosedPlugin),
  /** The Workspaces close released, by id, in release order. */
  workspaces: Schema.Array(Schema.String),
  /** Every cleanup failure, in report order: empty when close succeeded. */
  failures: Schema.Array(CloseFailure),
  /** The whole close, from its start to its end; encoded in milliseconds. */
  duration: Schema.DurationFromMillis
}).annotations({
  // The one-line text form, read with `Pretty.make(CloseReport)` (docs/library.md, "Reports").
  pretty: () => (report) => closeSummary(report)
})
/**
 * What one close of a City did.
 * @since 0.1.0
 * @category models
 */
export type CloseReport = typeof CloseReport.Type
