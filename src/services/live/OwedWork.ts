/**
 * The work owed to one endpoint, carried out (Applier.ts; Reloads.ts for the protocol):
 * - `reloadOwed`: at each Turn boundary claim the owed reload, reload, complete it and record the
 *   fingerprint of what the reload read; until nothing is owed. A failed reload releases the claim
 *   and stays owed with its error.
 * - `finishRemoval`: retire the endpoint at its boundary (or, forced, kill it), then the
 *   Provisioner's removal (unprovision, drop the runtime), then the record goes. A foreign endpoint
 *   is left alone. A removal the Provisioner refuses (the runtime became the default meanwhile) is
 *   dropped with a log line.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Provisioner } from "../capabilities/Provisioner.ts"
import type { EndpointHostShape, EndpointRef } from "./EndpointHost.ts"
import type { Fingerprints } from "./Fingerprints.ts"
import type { Reloads } from "./Reloads.ts"

/**
 * The per-endpoint steps of owed work, over the services they use.
 * @since 0.1.0
 * @category constructors
 */
export const makeOwedWork = (deps: {
  readonly host: EndpointHostShape
  readonly reloads: Reloads["Type"]
  readonly fingerprints: Fingerprints["Type"]
  readonly provisioner: Provisioner["Type"]
}) => {
  const { fingerprints, host, provisioner, reloads } = deps

  /** At each boundary: claim, reload, complete; until nothing is owed. `true` if a reload ran. */
  const reloadOwed = (ref: EndpointRef): Effect.Effect<boolean, string> =>
    Effect.gen(function*() {
      let reloaded = false
      for (;;) {
        const claim = reloads.claim(ref).pipe(Effect.mapError((e) => e.message))
        const result = yield* Effect.either(host.reload(ref, claim))
        if (result._tag === "Left") {
          const message = typeof result.left === "string" ? result.left : result.left.message
          yield* reloads.release(ref, message).pipe(Effect.ignore)
          return yield* Effect.fail(message)
        }
        const target = result.right
        if (Option.isNone(target)) return reloaded
        yield* reloads.complete(ref, target.value).pipe(Effect.mapError((e) => e.message))
        yield* fingerprints.record(ref).pipe(Effect.ignore)
        yield* Effect.logInfo("reload applied").pipe(Effect.annotateLogs({ sequence: target.value }))
        reloaded = true
      }
    }).pipe(Effect.annotateLogs({ endpoint: ref.identity }))

  const finishRemoval = (ref: EndpointRef, force: boolean) =>
    Effect.gen(function*() {
      if ((yield* host.status(ref)) === "foreign") return yield* Effect.logWarning("owed removal of a foreign endpoint left alone")
      yield* force ? host.kill(ref) : host.retire(ref)
      yield* provisioner.removeRuntime(ref.personality, ref.runtime).pipe(
        Effect.tapError((e) => Effect.logError(`owed removal dropped: ${e.message}`)),
        Effect.ignore
      )
      yield* reloads.completeRemoval(ref)
      yield* Effect.logInfo("owed removal applied")
    })

  return { reloadOwed, finishRemoval }
}
