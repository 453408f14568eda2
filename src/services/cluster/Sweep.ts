/**
 * A capability's sweep across hosts as a durable workflow (docs/cluster.md, "Sweeps across
 * hosts"): `register` and `sync` provision every endpoint of the capability on every host
 * (`sweep-on`), `unregister` unprovisions them (`off-all`), "failures are listed per endpoint and
 * the exit code is 1" (docs/capability-plugin-lifecycle.md, "Joints (core-owned)").
 *
 * `CapabilitySweep` is one `@effect/workflow` workflow whose execution is keyed by
 * `<verb>/<capability>/<revision>`: the same sweep of the same revision started twice (two
 * operators, a client that retries after a crash) runs once, and both callers get its report. Its
 * body is one activity that lists the endpoints (`FleetCalls.endpoints`), then one activity per
 * endpoint, named `call/<host>/<runtime>/<personality>` so that each is durable on its own: an
 * engine that resumes the workflow (after a runner's death, on the cluster engine) runs again only
 * the calls that had not answered.
 *
 * Decisions where the spec is silent:
 * - the workflow only carries the calls. `register` stores the declaration (and `unregister`
 *   deletes it after the sweep, whatever the calls did, as on one host) outside it: the caller
 *   stores the declaration, learns its revision, then runs the sweep of that revision;
 * - each call is bounded by `callTimeout` (default 60 s). A host that does not answer in time (no
 *   runner serves it, or it hangs) makes that endpoint `failed`, its detail naming the host and
 *   the timeout, and so does a `HostUnavailable` (naming the host and why): the sweep never waits
 *   for a host. A host that answers reports its endpoint as it recorded the call (`failed`,
 *   `timeout`, `not-executable` with its exit and detail), unchanged but for the host. Either way
 *   the verdict is `failed` (exit 1); the detail tells them apart;
 * - a call that timed out is abandoned, not withdrawn: the carrier may still deliver it when the
 *   host comes back, and the host's own record then says what it did;
 * - the timeout is the activity's own, not a durable clock: a sweep resumed by another runner
 *   gives each call that had not answered a whole `callTimeout` again;
 * - at most `concurrency` calls at once (default 16: the calls wait on other hosts, not on this
 *   machine);
 * - the report is the `JointReport` of one host with each outcome's host added, judged by the
 *   same `verdictOf` with the policy `sweep`;
 * - a sweep of a revision already swept returns that sweep's report: to run the calls again
 *   (`sync`, the repair), the caller starts the sweep of a new revision.
 * - the engine's database failing while the sweep is started or awaited (a defect of
 *   `@effect/cluster`'s engine, its `PersistenceError`) is `ClusterUnavailable` naming the sweep's
 *   key and why; any other defect stays one (docs/cluster.md, "Faults").
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as ClusterSchema from "@effect/cluster/ClusterSchema"
import * as Workflow from "@effect/workflow/Workflow"
import type { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import { type CapabilityError, StateRootError } from "../../schema/CapabilityErrors.ts"
import { InvalidFile } from "../../schema/FileErrors.ts"
import type { ClusterError } from "../../schema/Live.ts"
import { Name } from "../../schema/Name.ts"
import { fleetGroup } from "./internal/runnerDefaults.ts"
import { EndpointOutcome } from "../../schema/Outcome.ts"
import { reportLine, type Verdict } from "../capabilities/JointReport.ts"
import type { FleetCalls } from "./FleetCalls.ts"
import { Revision, SweepVerb } from "./FleetCalls.ts"
import * as internal from "./internal/sweep.ts"

/**
 * One endpoint's outcome in a sweep: the outcome its host recorded, with the host.
 * @since 0.1.0
 * @category schemas
 */
const SweepOutcome = Schema.Struct({
  host: Name,
  ...EndpointOutcome.fields
})
/**
 * One endpoint's outcome in a sweep, as decoded.
 * @since 0.1.0
 * @category models
 */
type SweepOutcome = typeof SweepOutcome.Type

/**
 * What a sweep came to: `ok`, `warned` or `failed` (`JointReport`'s `Verdict`).
 * @since 0.1.0
 * @category schemas
 */
const SweepVerdict: Schema.Schema<Verdict> = Schema.Literal("ok", "warned", "failed")

/**
 * What a sweep did: each endpoint's outcome with its host (in the order of the listing), every
 * invalid file met while listing the endpoints, and the verdict (`failed` when a call did not end
 * `ok` or a peer file could not be read: exit 1).
 * @since 0.1.0
 * @category schemas
 */
export const SweepReport = Schema.Struct({
  outcomes: Schema.Array(SweepOutcome),
  invalid: Schema.Array(InvalidFile),
  verdict: SweepVerdict
}).annotations({
  // The one-line text form, read with `Pretty.make(SweepReport)` (docs/library.md, "Reports").
  pretty: () => reportLine
})
/**
 * What a sweep did, as decoded.
 * @since 0.1.0
 * @category models
 */
export type SweepReport = typeof SweepReport.Type

/**
 * A sweep's payload: the verb, the capability's name and the revision of its declaration; and,
 * when the caller says so, how long each call's answer is waited for (milliseconds; else the
 * layer's `callTimeout`): a `city` verb passes its `--timeout-ms`. Not part of the key.
 * @since 0.1.0
 * @category schemas
 */
const SweepPayload = Schema.Struct({
  verb: SweepVerb,
  capability: Name,
  revision: Revision,
  call_timeout_ms: Schema.optional(Schema.Int.pipe(Schema.positive()))
})
/**
 * A sweep's payload, as decoded.
 * @since 0.1.0
 * @category models
 */
type SweepPayload = typeof SweepPayload.Type

/**
 * The key of a sweep's execution, `<verb>/<capability>/<revision>`: one execution per key.
 * @since 0.1.0
 * @category utils
 */
const idempotencyKey = (payload: SweepPayload): string =>
  `${payload.verb}/${payload.capability}/${payload.revision}`

/**
 * The workflow of a capability's sweep across hosts. Fails only when the endpoints cannot be
 * listed (`StateError`); every call's failure is an outcome in the report.
 * @since 0.1.0
 * @category constructors
 */
export const CapabilitySweep = Workflow.make({
  name: "effect-city/CapabilitySweep",
  payload: SweepPayload,
  idempotencyKey,
  success: SweepReport,
  error: StateRootError
}).annotate(ClusterSchema.ShardGroup, () => fleetGroup)

/**
 * Settings of the sweep workflow.
 * @since 0.1.0
 * @category models
 */
export interface SweepSettings {
  /** Calls made at once (default 16); a whole number of at least 1. */
  readonly concurrency?: number
  /**
   * How long one call may take before its endpoint is `failed` (default 60 s); at least 1 ms.
   * Longer than the hosts' own call timeout, so a host that answers is never cut short.
   */
  readonly callTimeout?: Duration.DurationInput
}

/**
 * Registers the sweep workflow with the engine, its calls made through `FleetCalls`. Fails with
 * `InvalidJointSettings` for a concurrency or a timeout out of range.
 * @since 0.1.0
 * @category layers
 */
export const layer = (settings: SweepSettings = {}): Layer.Layer<never, CapabilityError, FleetCalls | WorkflowEngine> =>
  Layer.unwrapEffect(Effect.map(internal.checkSettings(settings), (checked) => CapabilitySweep.toLayer(internal.sweep(checked))))

/**
 * Runs the sweep of a capability's revision (or joins the one already running, or returns the
 * report of the one that ran) and returns its report. A capability name that breaks the name
 * rule, or an empty revision, is refused (`InvalidName`) before anything runs. The engine's
 * database failing while the sweep is started or awaited is `ClusterUnavailable`, naming the sweep
 * and why (docs/cluster.md, "Faults"): the sweep may or may not have started, and running it again
 * once the database answers joins it or starts it.
 * @since 0.1.0
 * @category constructors
 */
export const run = (payload: {
  readonly verb: SweepVerb
  readonly capability: string
  readonly revision: string
  readonly call_timeout_ms?: number
}): Effect.Effect<SweepReport, StateRootError | CapabilityError | ClusterError, WorkflowEngine> =>
  Effect.flatMap(
    internal.checkPayload(payload),
    (checked) => CapabilitySweep.execute(checked).pipe(internal.databaseLost(idempotencyKey(checked)))
  )
