/**
 * One call of a joint (EndpointCalls.ts): substitute the declared command for the endpoint, create
 * its private directory, spawn it (or refuse before spawn), then count and log the outcome
 * (docs/capability-plugin-lifecycle.md, "Joints (core-owned)": "Every call is logged to
 * `lifecycle.log`"), as a `city.provision` span when a tracer is installed. The outcome's detail
 * is redacted here (the host's `redact`, schema/Redaction.ts), before anything stores or prints it.
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type { Declaration } from "../../../schema/Declaration.ts"
import type { Occasion } from "../../../schema/Occasion.ts"
import { type EndpointOutcome, identityOf, type Outcome } from "../../../schema/Outcome.ts"
import type { Peer } from "../../../schema/Peer.ts"
import { unsafeProvisioned } from "../../internal/counters.ts"
import { spans } from "../../Observability.ts"
import { buildArgv, CommandRunner, type Substitutions } from "../CommandRunner.ts"
import { LifecycleLog } from "../LifecycleLog.ts"
import { RuntimeProfiles } from "../RuntimeProfiles.ts"
import { StateRoot } from "../../root/StateRoot.ts"

/** An endpoint, as EndpointCalls.ts names it: one (peer, runtime) of a declaration. */
interface Endpoint {
  readonly declaration: Declaration
  readonly peer: Peer
  readonly runtime: string
}

/** Which of the declaration's two commands an occasion runs: `birth` and `sweep-on` run `provision`. */
const commandOf = (occasion: Occasion): "provision" | "unprovision" =>
  occasion === "birth" || occasion === "sweep-on" ? "provision" : "unprovision"

/**
 * Makes the call of one endpoint on the state root, the host, the runner and the log.
 * @since 0.1.0
 * @category constructors
 */
export const makeCall = Effect.gen(function*() {
  const state = yield* StateRoot
  const profiles = yield* RuntimeProfiles
  const runner = yield* CommandRunner
  const log = yield* LifecycleLog

  /** One call's outcome: substitute, create the private directory, spawn (or refuse before spawn). */
  const attempt = (
    endpoint: Endpoint,
    occasion: Occasion,
    timeout: Duration.DurationInput
  ): Effect.Effect<Outcome> => {
    const { declaration, peer, runtime } = endpoint
    const privateFolder = profiles.privateDir(runtime, peer.personality)
    const privateDir = Option.map(privateFolder, state.resolve)
    const values: Substitutions = {
      personality: peer.personality,
      runtime,
      cwd: peer.cwd,
      occasion,
      ...(Option.isSome(privateDir) ? { privateDir: privateDir.value } : {})
    }
    const argv = buildArgv(declaration[commandOf(occasion)], values)
    if (Either.isLeft(argv)) {
      return Effect.succeed({
        state: "failed",
        ms: 0,
        detail: `{${argv.left}} is not available: runtime ${runtime} has no private directory; refused before spawn`
      })
    }
    const [command, ...args] = argv.right
    const spawned = runner.run({
      command,
      args,
      cwd: state.root,
      privateDir,
      timeout,
      endpoint: `${declaration.capability} ${identityOf(runtime, peer.personality)}`,
      identity: identityOf(runtime, peer.personality),
      rootLocked: true
    })
    if (Option.isNone(privateFolder) || Option.isNone(privateDir)) return spawned
    return Effect.flatMap(Effect.either(state.makeDirectory(privateFolder.value)), (made) =>
      Either.isLeft(made)
        ? Effect.succeed({
          state: "failed",
          ms: 0,
          detail: `cannot create the private directory ${privateDir.value}: ${made.left.detail}; refused before spawn`
        })
        : spawned)
  }

  /** Counts and logs one call's outcome; the endpoint's outcome. */
  const settle = (endpoint: Endpoint, occasion: Occasion, produced: Outcome, now: number): Effect.Effect<EndpointOutcome> => {
    const { declaration, peer, runtime } = endpoint
    // The one point where a provisioning command's stderr becomes text: secrets are redacted
    // before the record, the log, the printed table or `--json` see it (schema/Redaction.ts).
    const outcome = produced.detail === undefined ? produced : { ...produced, detail: profiles.redact(produced.detail) }
    // unsafe: `settle` is a plain function over a settled outcome; the counter is updated in it.
    unsafeProvisioned(outcome.state, occasion)
    const result: EndpointOutcome = {
      capability: declaration.capability,
      personality: peer.personality,
      runtime,
      occasion,
      ...outcome
    }
    return Effect.as(
      log.enqueue([
        ["ts", new Date(now).toISOString()],
        ["ev", "capability-provision"],
        ["capability", declaration.capability],
        ["identity", identityOf(runtime, peer.personality)],
        ["occasion", occasion],
        ["state", outcome.state],
        ["exit", outcome.exit],
        ["ms", Math.round(outcome.ms)],
        ["detail", outcome.detail]
      ]),
      result
    )
  }

  /**
   * One call, counted and logged. `traced`: a tracer is installed, so the call is a
   * `city.provision` span with its `outcome` (under Effect's default tracer, which exports
   * nothing, the span is left out: a sweep makes hundreds).
   */
  const call = (
    endpoint: Endpoint,
    occasion: Occasion,
    timeout: Duration.DurationInput,
    traced: boolean
  ) => {
    const settled = Effect.flatMap(attempt(endpoint, occasion, timeout), (outcome) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => settle(endpoint, occasion, outcome, now)))
    if (!traced) return settled
    return settled.pipe(
      Effect.tap((outcome) => Effect.annotateCurrentSpan("outcome", outcome.state)),
      Effect.withSpan(spans.provision, {
        attributes: {
          capability: endpoint.declaration.capability,
          endpoint: identityOf(endpoint.runtime, endpoint.peer.personality),
          occasion
        },
        // One per call of a sweep: the stack trace would point into the sweep, and costs an Error.
        captureStackTrace: false
      })
    )
  }

  return call
})
