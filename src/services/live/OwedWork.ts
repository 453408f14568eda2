/**
 * The work owed to one endpoint, carried out (Applier.ts; services/owed/Reloads.ts for the
 * protocol). The records are services/owed/'s; carrying them out drives an endpoint host, so this
 * module and internal/owedWorker.ts stay in live/ beside the hosts (owed/ sits below live/):
 * - `reloadOwed`: at each Turn boundary claim the owed reload, reload, complete it and record the
 *   fingerprint of what the reload read; until nothing is owed.
 * - `finishRemoval`: retire the endpoint at its boundary (or, forced, kill it), then the
 *   Provisioner's removal (unprovision, drop the runtime), then the record goes. A foreign endpoint
 *   is left alone. A removal the Provisioner refuses (the runtime became the default meanwhile) is
 *   dropped with a log line.
 * - `failed`: an attempt that failed (the host could not reload, retire or kill the endpoint, or
 *   tell its state) releases the claim and stays owed, with its error and the next attempt of its
 *   backoff (docs/live-application.md, "Failed owed work: the backoff"); it fails with
 *   `EndpointError` (reason `OwedWorkFailed`), whose message is the one log line of that attempt.
 * - `recordApplied`: a reload that ran but whose completion the store could not write (a database
 *   restarting, a full disk) is remembered by this process, its claim kept, and written before
 *   anything else is done for that endpoint: the claim is this process's own, so without that the
 *   next pass would claim it again and run the same reload twice (docs/cluster.md, "Owed reloads:
 *   one path"). A process that ends first leaves the claim of a dead process: the next one applies
 *   the reload again, the one case where a request is applied twice.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { EndpointError } from "../../schema/Live.ts"
import { identityOf } from "../../schema/Outcome.ts"
import { oneLine } from "../../schema/OneLine.ts"
import type { Provisioner } from "../capabilities/Provisioner.ts"
import type { EndpointHostShape, EndpointRef } from "./EndpointHost.ts"
import type { Fingerprints } from "./Fingerprints.ts"
import type { EndpointKey, Reloads } from "../owed/Reloads.ts"

/**
 * The per-endpoint steps of owed work, over the services they use.
 * @since 0.1.0
 * @category constructors
 */
export const makeOwedWork = (deps: {
  readonly endpointHost: EndpointHostShape
  readonly reloads: Reloads["Type"]
  readonly fingerprints: Fingerprints["Type"]
  readonly provisioner: Provisioner["Type"]
}) => {
  const { fingerprints, endpointHost, provisioner, reloads } = deps

  /** Records a failed attempt of `work` (its backoff) and fails with it. */
  const failed = (ref: EndpointRef, work: "reload" | "removal", detail: string): Effect.Effect<never, EndpointError> =>
    reloads.release(ref, detail).pipe(
      Effect.matchEffect({
        onFailure: (e) => new EndpointError({ reason: "OwedWorkFailed", identity: ref.identity, work, detail, unrecorded: e.message }),
        onSuccess: (record) =>
          new EndpointError({
            reason: "OwedWorkFailed",
            identity: ref.identity,
            work,
            detail,
            ...(record.attempts === undefined ? {} : { attempts: record.attempts }),
            ...(record.next_attempt_at === undefined ? {} : { next_attempt_at: record.next_attempt_at })
          })
      })
    )

  /** The target of each reload that ran but is not recorded as complete yet, by endpoint. */
  const applied = new Map<string, number>()

  /**
   * Writes the completion of a reload that ran, if one is waiting for its record and the record
   * still holds this process's claim of it (another process may have settled or removed it since).
   */
  const recordApplied = (key: EndpointKey) =>
    Effect.suspend(() => {
      const identity = identityOf(key.runtime, key.personality)
      const target = applied.get(identity)
      if (target === undefined) return Effect.void
      const forget = Effect.sync(() => void applied.delete(identity))
      return Effect.flatMap(reloads.get(key), (record) => {
        const claim = Option.flatMap(record, (r) => Option.fromNullable(r.claim))
        const ours = Option.isSome(claim) && claim.value.pid === process.pid && claim.value.target === target
        return Effect.zipRight(ours ? reloads.complete(key, target) : Effect.void, forget)
      })
    })

  /** At each boundary: claim, reload, complete; until nothing is owed. `true` if a reload ran. */
  const reloadOwed = (ref: EndpointRef) =>
    Effect.gen(function*() {
      let reloaded = false
      yield* recordApplied(ref)
      for (;;) {
        const claim = reloads.claim(ref).pipe(Effect.mapError((e) => e.message))
        const result = yield* Effect.either(endpointHost.reload(ref, claim))
        if (result._tag === "Left") {
          return yield* failed(ref, "reload", typeof result.left === "string" ? result.left : result.left.message)
        }
        const target = result.right
        if (Option.isNone(target)) return reloaded
        applied.set(ref.identity, target.value)
        const recorded = yield* Effect.either(
          Effect.tap(reloads.complete(ref, target.value), () => Effect.sync(() => void applied.delete(ref.identity)))
        )
        yield* fingerprints.record(ref).pipe(Effect.ignore)
        if (recorded._tag === "Left") {
          // Applied: what is owed after it waits until its record is written (`recordApplied`).
          yield* Effect.logWarning(
            `reload applied but not recorded: ${oneLine(recorded.left.message, 300)}; ` +
              "its record is written before anything else is done for this endpoint, and it is not run again"
          ).pipe(Effect.annotateLogs({ sequence: target.value }))
          return true
        }
        yield* Effect.logInfo("reload applied").pipe(Effect.annotateLogs({ sequence: target.value }))
        reloaded = true
      }
    }).pipe(Effect.annotateLogs({ endpoint: ref.identity }))

  const finishRemoval = (ref: EndpointRef, force: boolean) =>
    Effect.gen(function*() {
      if ((yield* endpointHost.status(ref)) === "foreign") return yield* Effect.logWarning("owed removal of a foreign endpoint left alone")
      yield* force ? endpointHost.kill(ref) : endpointHost.retire(ref)
      yield* provisioner.removeRuntime(ref.personality, ref.runtime).pipe(
        Effect.tapError((e) => Effect.logError(`owed removal dropped: ${e.message}`)),
        Effect.ignore
      )
      yield* reloads.completeRemoval(ref)
      yield* Effect.logInfo("owed removal applied")
    }).pipe(Effect.catchTag("EndpointError", (e) => failed(ref, "removal", e.message)))

  return { reloadOwed, recordApplied, finishRemoval, failed }
}
