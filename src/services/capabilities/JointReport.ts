/**
 * What a joint came to (docs/capability-plugin-lifecycle.md, "Joints (core-owned)",
 * failure handling): "At birth and remove, a failure is a loud warning and the
 * flow continues. A plugin hiccup never kills a birth or blocks a removal." and
 * "For the sweep verbs, failures are listed per endpoint and the exit code is
 * 1." The verdict is part of the report, so a service test reads the same policy
 * the CLI turns into an exit code.
 * @since 0.1.0
 */
import type { InvalidFile } from "../../schema/FileErrors.ts"
import type { Occasion } from "../../schema/Occasion.ts"
import type { EndpointOutcome } from "../../schema/Outcome.ts"
import type { Calls } from "./EndpointCalls.ts"
import type { EndpointKey } from "./EndpointRecords.ts"

/**
 * What a joint came to, for the operator and for the exit code: `ok` (every call ok, nothing to
 * report), `warned` (the joint completed; failed calls or invalid files are warnings: exit 0),
 * `failed` (a sweep with an endpoint that did not end ok, or that could not read a peer file: exit 1).
 * @since 0.1.0
 * @category models
 */
export type Verdict = "ok" | "warned" | "failed"

/**
 * What a joint did: each endpoint's outcome, every invalid file it met (to report loudly), and its verdict.
 * @since 0.1.0
 * @category models
 */
export interface JointReport {
  /** Each endpoint's outcome. */
  readonly outcomes: ReadonlyArray<EndpointOutcome>
  /** Every invalid file met, to report loudly. */
  readonly invalid: ReadonlyArray<InvalidFile>
  /** What the joint came to, for the operator and the exit code. */
  readonly verdict: Verdict
}

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
export const notUnprovisioned = (keys: ReadonlyArray<EndpointKey>, occasion: Occasion, why: string) =>
  keys.map((k): EndpointOutcome => ({
    capability: k.capability,
    personality: k.personality,
    runtime: k.runtime,
    occasion,
    state: "failed",
    ms: 0,
    detail: `not unprovisioned: ${why}; its surfaces may remain`
  }))
