/**
 * Running the calls of a joint (docs/capability-plugin-lifecycle.md, "Joints
 * (core-owned)"): which endpoints a declaration has, and one call per endpoint
 * with bounded concurrency, each logged ("Every call is logged to
 * `lifecycle.log` as `ev=capability-provision capability=<name>
 * identity=<runtime>-<peer> occasion=… state=…`") and recorded as that
 * endpoint's last call.
 *
 * An endpoint "is one `(peer, runtime)` pair where the runtime is: declared by
 * the peer; hostable as an agent by this core; listed in the declaration's
 * `runtimes`".
 *
 * Decisions where the spec is silent:
 * - commands run with the state root as their working directory (the peer's cwd
 *   is passed as `{cwd}`), so a call never depends on where the operator stood;
 * - a runtime with a private directory gets it created (0700, `StateRoot.makeDirectory`)
 *   before each call; if it cannot be created the call is `failed` before spawn, with the reason;
 * - each call is recorded soon after it ends (within 200 ms: a committer takes
 *   every outcome waiting, then waits that long, so calls ending close together
 *   share one write), so an interrupted joint (SIGTERM, `kill -9`) keeps what
 *   finished, and its log and records agree. A commit rewrites the capability's
 *   whole records file (for 200 endpoints about 2 ms of CPU with its log lines):
 *   at 50 ms it was a seventh of a sweep's own CPU, which on a machine busy with
 *   the commands themselves is their time too; a `city` killed with SIGKILL loses
 *   at most the last 200 ms of outcomes, whose calls the repair runs again. The
 *   order of the writes: the endpoints' records first, as every document is
 *   written (fsynced, renamed into place, the folder fsynced: a records file
 *   written without the fsyncs was left empty by a power loss in the
 *   crash-point tests, test/crash), then the calls' log lines, appended; when
 *   `run` returns, also on an interruption, what is left is written and the log
 *   is fsynced. The two are separate files: a crash in the instant between a
 *   record and its log line (or a power loss before the log's fsync) leaves the
 *   record without its line, never a logged call the records do not know
 *   (which a repair would run again);
 * - at most `concurrency` commands run at once (`Effect.forEach`): a call
 *   waiting for a place when the joint is interrupted never starts, and the
 *   running ones are ended as `CommandRunner` ends an interrupted call;
 * - the timeout is at least 1 ms and the concurrency at least 1
 *   (`InvalidJointSettings` otherwise): a zero timeout would fail every call
 *   before it could act.
 *
 * The pieces: one call (substitute, spawn, count, log, span) is internal/endpointCall.ts, the
 * batched recording of the outcomes internal/outcomeCommitter.ts; `run` here runs the calls.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { CapabilityError, type StateRootError } from "../../schema/CapabilityErrors.ts"
import type { Declaration } from "../../schema/Declaration.ts"
import type { InvalidFile } from "../../schema/FileErrors.ts"
import type { Occasion } from "../../schema/Occasion.ts"
import type { EndpointOutcome } from "../../schema/Outcome.ts"
import type { Peer } from "../../schema/Peer.ts"
import { isTracing } from "../internal/tracing.ts"
import type { CommandRunner } from "./CommandRunner.ts"
import { EndpointRecords } from "./EndpointRecords.ts"
import { makeCall } from "./internal/endpointCall.ts"
import { startCommitter } from "./internal/outcomeCommitter.ts"
import { LifecycleLog } from "./LifecycleLog.ts"
import type { RuntimeProfiles } from "./RuntimeProfiles.ts"
import type { StateRoot } from "../root/StateRoot.ts"

/**
 * One endpoint of one capability.
 * @since 0.1.0
 * @category models
 */
export interface Endpoint {
  /** The capability's declaration. */
  readonly declaration: Declaration
  /** The peer (personality) the endpoint belongs to. */
  readonly peer: Peer
  /** The runtime of the peer the endpoint is. */
  readonly runtime: string
}

/**
 * Per-call settings of a joint.
 * @since 0.1.0
 * @category models
 */
export interface JointSettings {
  /** Timeout per call (default 120 s); at least 1 ms. */
  readonly timeout?: Duration.DurationInput
  /** Calls run at once (default 4); an integer of at least 1. */
  readonly concurrency?: number
  /**
   * Called with the endpoints a set of calls is about to run and their occasion, before the
   * first starts (once per set: a joint may run more than one). With `onProgress` a caller knows
   * which calls never finished when the joint is interrupted (docs/cli.md, "Interrupted").
   */
  readonly onStart?: (endpoints: ReadonlyArray<Endpoint>, occasion: Occasion) => Effect.Effect<void>
  /** Called after each call with (done, total) and that call's outcome. */
  readonly onProgress?: (done: number, total: number, outcome: EndpointOutcome) => Effect.Effect<void>
}

/**
 * The endpoints of one declaration among the given peers, in personality then runtime order.
 * @since 0.1.0
 * @category utils
 */
export const endpointsOf = (
  declaration: Declaration,
  peers: ReadonlyArray<Peer>,
  isAgent: (runtime: string) => boolean
): ReadonlyArray<Endpoint> =>
  [...peers]
    .sort((a, b) => a.personality < b.personality ? -1 : a.personality > b.personality ? 1 : 0)
    .flatMap((peer) =>
      peer.runtimes
        .filter((runtime) => isAgent(runtime) && declaration.runtimes.includes(runtime))
        .map((runtime) => ({ declaration, peer, runtime }))
    )

/**
 * Refuses a timeout below 1 ms and a concurrency that is not an integer of at least 1.
 * @since 0.1.0
 * @category utils
 */
export const checkSettings = (settings: JointSettings = {}): Effect.Effect<void, CapabilityError> => {
  if (settings.timeout !== undefined) {
    const timeout = Duration.decodeUnknown(settings.timeout)
    const ms = Option.match(timeout, { onNone: () => Number.NaN, onSome: Duration.toMillis })
    if (!(ms >= 1)) {
      return Effect.fail(new CapabilityError({ reason: "InvalidJointSettings",
        setting: "timeout",
        // A negative number decodes to 0: name what was given.
        value: typeof settings.timeout === "number" || Number.isNaN(ms) ? `${String(settings.timeout)} ms` : `${ms} ms`,
        rule: "must be at least 1 ms: a call needs time to run (--timeout-ms takes milliseconds, default 120000)"
      }))
    }
  }
  const concurrency = settings.concurrency
  if (concurrency !== undefined && !(Number.isInteger(concurrency) && concurrency >= 1)) {
    return Effect.fail(new CapabilityError({ reason: "InvalidJointSettings",
      setting: "concurrency",
      value: String(concurrency),
      rule: "must be a whole number of at least 1 (calls run at once; default 4)"
    }))
  }
  return Effect.void
}

/**
 * What the calls of a joint came to: each endpoint's outcome, and any invalid records file met.
 * @since 0.1.0
 * @category models
 */
export interface Calls {
  /** Each endpoint's outcome, in the order of the endpoints. */
  readonly outcomes: ReadonlyArray<EndpointOutcome>
  /** The invalid records files met while recording the outcomes. */
  readonly invalid: ReadonlyArray<InvalidFile>
}

/**
 * Runs a joint's provisioning calls, at most `concurrency` at once, and records each outcome.
 * @since 0.1.0
 * @category tags
 */
export class EndpointCalls extends Context.Tag("effect-city/EndpointCalls")<
  EndpointCalls,
  {
    /**
     * One call per endpoint, `settings.concurrency` at a time, each logged; then each endpoint's
     * last call is recorded. Caller holds the root lock and has checked the settings.
     */
    readonly run: (
      endpoints: ReadonlyArray<Endpoint>,
      occasion: Occasion,
      settings?: JointSettings
    ) => Effect.Effect<Calls, StateRootError>
  }
>() {}

/**
 * Makes the endpoint calls on the state root, the host, the runner, the log and the records.
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<
  EndpointCalls["Type"],
  never,
  StateRoot | RuntimeProfiles | CommandRunner | LifecycleLog | EndpointRecords
> = Effect.gen(function*() {
  const call = yield* makeCall
  const log = yield* LifecycleLog
  const records = yield* EndpointRecords

  const run = (endpoints: ReadonlyArray<Endpoint>, occasion: Occasion, settings: JointSettings = {}) =>
    Effect.gen(function*() {
      const timeout = settings.timeout ?? Duration.seconds(120)
      const traced = yield* isTracing
      const total = endpoints.length
      let done = 0
      if (settings.onStart !== undefined) yield* settings.onStart(endpoints, occasion)
      const committer = yield* startCommitter(records, log)
      const outcomes = yield* Effect.forEach(
        endpoints,
        (endpoint) =>
          call(endpoint, occasion, timeout, traced).pipe(
            Effect.tap(committer.offer),
            Effect.tap((outcome) => {
              done++
              return settings.onProgress === undefined ? Effect.void : settings.onProgress(done, total, outcome)
            })
          ),
        // At most `concurrency` commands at once (an integer of at least 1: `checkSettings`).
        { concurrency: settings.concurrency ?? 4 }
      ).pipe(Effect.onExit((exit) => Exit.isSuccess(exit) ? Effect.void : Effect.ignore(committer.finish)))
      yield* committer.finish
      return { outcomes, invalid: committer.invalid() }
    })

  return EndpointCalls.of({ run })
})

/**
 * The endpoint calls as a Layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(EndpointCalls, make)
