/**
 * What a joint came to (docs/capability-plugin-lifecycle.md, "Joints (core-owned)",
 * failure handling): "At birth and remove, a failure is a loud warning and the
 * flow continues. A plugin hiccup never kills a birth or blocks a removal." and
 * "For the sweep verbs, failures are listed per endpoint and the exit code is
 * 1." The verdict is part of the report, so a service test reads the same policy
 * the CLI turns into an exit code.
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { InvalidFile } from "../../schema/FileErrors.ts"
import type { Occasion } from "../../schema/Occasion.ts"
import { EndpointOutcome } from "../../schema/Outcome.ts"
import type { Calls } from "./EndpointCalls.ts"
import type { CapabilityEndpoint } from "./EndpointRecords.ts"

/**
 * What a joint came to, for the operator and for the exit code: `ok` (every call ok, nothing to
 * report), `warned` (the joint completed; failed calls or invalid files are warnings: exit 0),
 * `failed` (a sweep with an endpoint that did not end ok, or that could not read a peer file: exit 1).
 * @since 0.1.0
 * @category models
 */
export type Verdict = "ok" | "warned" | "failed"

const counted = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`

/**
 * A joint's or a sweep's one-line text form: `failed: 3 endpoints: 1 failed, 2 ok; 1 invalid
 * file` (on a fleet, `on 2 hosts` after the endpoints).
 * @since 0.1.0
 * @category internals
 */
export const reportLine = (report: {
  readonly outcomes: ReadonlyArray<{ readonly state: string; readonly host?: string }>
  readonly invalid: ReadonlyArray<unknown>
  readonly verdict: Verdict
}): string => {
  const states = new Map<string, number>()
  for (const o of report.outcomes) states.set(o.state, (states.get(o.state) ?? 0) + 1)
  const hosts = new Set(report.outcomes.flatMap((o) => (o.host === undefined ? [] : [o.host])))
  const byState = [...states].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([state, n]) => `${n} ${state}`)
  return `${report.verdict}: ${counted(report.outcomes.length, "endpoint")}` +
    (hosts.size === 0 ? "" : ` on ${counted(hosts.size, "host")}`) +
    (byState.length === 0 ? "" : `: ${byState.join(", ")}`) +
    (report.invalid.length === 0 ? "" : `; ${counted(report.invalid.length, "invalid file")}`)
}

/**
 * What a joint did: each endpoint's outcome, every invalid file it met (to report loudly), and its
 * verdict. Encodes to plain JSON; its one-line text form is `Pretty.make(JointReport)`.
 * @since 0.1.0
 * @category schemas
 */
export const JointReport = Schema.Struct({
  /** Each endpoint's outcome. */
  outcomes: Schema.Array(EndpointOutcome),
  /** Every invalid file met, to report loudly. */
  invalid: Schema.Array(InvalidFile),
  /** What the joint came to, for the operator and the exit code. */
  verdict: Schema.Literal("ok", "warned", "failed")
}).annotations({ pretty: () => reportLine })
/**
 * What a joint did, as decoded.
 * @since 0.1.0
 * @category models
 */
export type JointReport = typeof JointReport.Type

/**
 * The report of a joint's calls: a `sweep` fails when a call failed or a peer file could not be
 * read (some endpoint was not attempted); a birth or removal (`joint`) only warns.
 * @since 0.1.0
 * @category constructors
 */
export const verdictOf = (policy: "sweep" | "joint", calls: Calls, invalid: ReadonlyArray<InvalidFile>): JointReport => {
  const all = [...invalid, ...calls.invalid]
  const failedCall = calls.outcomes.some((o) => o.state !== "ok")
  const verdict: Verdict = policy === "sweep" && (failedCall || all.some((e) => e._tag === "InvalidFile" && e.reason === "PeerFile"))
    ? "failed"
    : failedCall || all.length > 0
    ? "warned"
    : "ok"
  return { outcomes: calls.outcomes, invalid: all, verdict }
}

/**
 * The report with more invalid files met after its calls (records rewritten): at least a warning.
 * @since 0.1.0
 * @category constructors
 */
export const withInvalid = (report: JointReport, more: ReadonlyArray<InvalidFile>): JointReport =>
  more.length === 0 ? report : {
    ...report,
    invalid: [...report.invalid, ...more],
    verdict: report.verdict === "ok" ? "warned" : report.verdict
  }

/**
 * The endpoints a forced removal could not unprovision, as failed outcomes naming why.
 * @since 0.1.0
 * @category constructors
 */
export const notUnprovisioned = (keys: ReadonlyArray<CapabilityEndpoint>, occasion: Occasion, why: string) =>
  keys.map((k): EndpointOutcome => ({
    capability: k.capability,
    personality: k.personality,
    runtime: k.runtime,
    occasion,
    state: "failed",
    ms: 0,
    detail: `not unprovisioned: ${why}; its surfaces may remain`
  }))
