/**
 * The body of the sweep workflow (Sweep.ts): the listing activity, one activity per endpoint
 * bounded by the call timeout, and the report.
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Activity from "@effect/workflow/Activity"
import { PersistenceError } from "@effect/cluster/ClusterError"
import { SqlError } from "@effect/sql/SqlError"
import { CapabilityError, StateRootError } from "../../../schema/CapabilityErrors.ts"
import { InvalidFile } from "../../../schema/FileErrors.ts"
import { isName, nameRule } from "../../../schema/Name.ts"
import { EndpointOutcome } from "../../../schema/Outcome.ts"
import { reportLine, verdictOf } from "../../capabilities/JointReport.ts"
import { FleetCalls, FleetEndpoint, type FleetRequest, type SweepVerb } from "../FleetCalls.ts"
import { ClusterError } from "../../../schema/Live.ts"
import { oneLine } from "../../../schema/OneLine.ts"
import { databaseWhy } from "./databaseWhy.ts"
import { occasionOf } from "./occasion.ts"

/**
 * How long a sweep waits for one call's answer: 60 s.
 * @since 0.1.0
 * @category internals
 */
export const defaultCallTimeout = Duration.seconds(60)

/**
 * How many calls a sweep makes at once.
 * @since 0.1.0
 * @category internals
 */
export const defaultConcurrency = 16

/**
 * The sweep's settings, checked and with their defaults.
 * @since 0.1.0
 * @category internals
 */
export interface Checked {
  /** Calls at once. */
  readonly concurrency: number
  /** How long one call may take. */
  readonly callTimeout: Duration.Duration
}

/**
 * Refuses a call timeout below 1 ms and a concurrency that is not a whole number of at least 1.
 * @since 0.1.0
 * @category internals
 */
export const checkSettings = (settings: {
  readonly concurrency?: number
  readonly callTimeout?: Duration.DurationInput
}): Effect.Effect<Checked, CapabilityError> => {
  const concurrency = settings.concurrency ?? defaultConcurrency
  if (!(Number.isInteger(concurrency) && concurrency >= 1)) {
    return Effect.fail(new CapabilityError({ reason: "InvalidJointSettings",
      setting: "sweep concurrency",
      value: String(concurrency),
      rule: `must be a whole number of at least 1 (calls made at once; default ${defaultConcurrency})`
    }))
  }
  const given = settings.callTimeout ?? defaultCallTimeout
  const callTimeout = Duration.decodeUnknown(given)
  const ms = Option.match(callTimeout, { onNone: () => Number.NaN, onSome: Duration.toMillis })
  if (Option.isNone(callTimeout) || !(ms >= 1)) {
    return Effect.fail(new CapabilityError({ reason: "InvalidJointSettings",
      setting: "sweep callTimeout",
      // A negative number decodes to 0: name what was given.
      value: typeof given === "number" || Number.isNaN(ms) ? `${String(given)} ms` : `${ms} ms`,
      rule: `must be at least 1 ms (how long a sweep waits for one host's answer; default ${
        Duration.toMillis(defaultCallTimeout)
      } ms)`
    }))
  }
  return Effect.succeed({ concurrency, callTimeout: callTimeout.value })
}

/**
 * Refuses a capability name that breaks the name rule and an empty revision, before a sweep runs.
 * @since 0.1.0
 * @category internals
 */
export const checkPayload = <P extends { readonly capability: string; readonly revision: string }>(
  payload: P
): Effect.Effect<P, CapabilityError> =>
  !isName(payload.capability)
    ? Effect.fail(new CapabilityError({ reason: "InvalidName", kind: "capability", value: payload.capability, rule: nameRule }))
    : payload.revision.length === 0
    ? Effect.fail(new CapabilityError({ reason: "InvalidName", kind: "revision", value: payload.revision, rule: "must not be empty" }))
    : Effect.succeed(payload)

const Listing = Schema.Struct({
  endpoints: Schema.Array(FleetEndpoint),
  invalid: Schema.Array(InvalidFile)
})

/** The activity that lists the capability's endpoints on every host, once per execution. */
const listing = (fleet: FleetCalls["Type"], capability: string) =>
  Activity.make({
    name: "endpoints",
    success: Listing,
    error: StateRootError,
    execute: fleet.endpoints(capability)
  })

const failedOutcome = (
  endpoint: FleetEndpoint,
  request: FleetRequest,
  ms: number,
  detail: string
): EndpointOutcome => ({
  capability: request.capability,
  personality: endpoint.personality,
  runtime: endpoint.runtime,
  occasion: occasionOf(request.verb),
  state: "failed",
  ms,
  detail
})

/**
 * One endpoint's call as an activity of its own: the host's answer, or `failed` naming the host
 * when it is unavailable or does not answer within the timeout. The call is disconnected, so the
 * timeout ends the wait even if the carrier's interruption takes time.
 */
const call = (fleet: FleetCalls["Type"], endpoint: FleetEndpoint, request: FleetRequest, timeout: Duration.Duration) =>
  Activity.make({
    name: `call/${endpoint.host}/${endpoint.runtime}/${endpoint.personality}`,
    success: EndpointOutcome,
    execute: Effect.gen(function*() {
      const start = yield* Clock.currentTimeMillis
      const elapsed = Effect.map(Clock.currentTimeMillis, (now) => now - start)
      return yield* fleet.call(endpoint, request).pipe(
        Effect.disconnect,
        Effect.timeoutOption(timeout),
        Effect.flatMap(Option.match({
          onSome: Effect.succeed,
          onNone: () =>
            Effect.map(elapsed, (ms) =>
              failedOutcome(
                endpoint,
                request,
                ms,
                `host ${endpoint.host} did not answer within ${Duration.toMillis(timeout)} ms (the sweep's callTimeout): ` +
                  "it is down or has no runner; the call may still run when it comes back"
              ))
        })),
        Effect.catchTag("ClusterError", (error: ClusterError) =>
          Effect.map(elapsed, (ms) => failedOutcome(endpoint, request, ms, error.message)))
      )
    })
  })

/**
 * The workflow's body: list the endpoints, call each (at most `concurrency` at once), report.
 * @since 0.1.0
 * @category internals
 */
export const sweep = (settings: Checked) =>
(payload: {
  readonly verb: SweepVerb
  readonly capability: string
  readonly revision: string
  readonly call_timeout_ms?: number | undefined
}) =>
  Effect.gen(function*() {
    const fleet = yield* FleetCalls
    const found = yield* listing(fleet, payload.capability)
    const request: FleetRequest = { verb: payload.verb, capability: payload.capability, revision: payload.revision }
    const timeout = payload.call_timeout_ms === undefined ? settings.callTimeout : Duration.millis(payload.call_timeout_ms)
    const outcomes = yield* Effect.forEach(
      found.endpoints,
      (endpoint) =>
        Effect.map(call(fleet, endpoint, request, timeout), (outcome) => ({
          host: endpoint.host,
          ...outcome
        })),
      { concurrency: settings.concurrency }
    )
    const report = verdictOf("sweep", { outcomes, invalid: [] }, found.invalid)
    const swept = { outcomes, invalid: report.invalid, verdict: report.verdict }
    yield* Effect.logInfo(`sweep ${payload.verb}/${payload.capability}/${payload.revision}: ${reportLine(swept)}`)
    return swept
  })

/** A defect that is the database's failure: `@effect/cluster`'s storage, or an `@effect/sql` query. */
const ofTheDatabase = (defect: unknown): defect is PersistenceError | SqlError =>
  defect instanceof PersistenceError || defect instanceof SqlError

/**
 * A sweep whose database fails while it is started or awaited (`@effect/cluster`'s workflow engine
 * makes that a defect, a `PersistenceError`) fails with `ClusterUnavailable` naming the sweep and
 * why. Only a cause whose every defect is the database's, with no failure and no interruption, is
 * mapped; every other defect stays one.
 * @since 0.1.0
 * @category internals
 */
export const databaseLost = (key: string) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | ClusterError, R> =>
  Effect.catchSomeCause(effect, (cause) => {
    const defects = Chunk.toReadonlyArray(Cause.defects(cause))
    const only = defects.length > 0 && defects.every(ofTheDatabase) && Chunk.isEmpty(Cause.failures(cause)) &&
      !Cause.isInterrupted(cause)
    return only
      ? Option.some(Effect.fail(
        new ClusterError({
          reason: "ClusterUnavailable",
          detail: oneLine(
            `the fleet's database failed during the sweep ${key} (${databaseWhy(defects[0])}); ` +
              "whether it started is not known: run it again once the database answers",
            300
          )
        })
      ))
      : Option.none()
  })
