/**
 * `HostWork` from a host's own services (docs/cluster.md, "Runners and clients"): a `Provision`
 * message runs the endpoint's provisioning call under the host's root lock, records it as on one
 * host, then converges the endpoint when the call ended `ok` (a reload it owes is owed and applied
 * through the host's owed-work store, as every owed reload is: docs/cluster.md, "Owed reloads: one
 * path").
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { EndpointOutcome } from "../../../schema/Outcome.ts"
import { oneLine } from "../../../schema/OneLine.ts"
import { Capabilities } from "../../capabilities/Capabilities.ts"
import { EndpointCalls } from "../../capabilities/EndpointCalls.ts"
import { Peers } from "../../capabilities/Peers.ts"
import { RuntimeProfiles } from "../../capabilities/RuntimeProfiles.ts"
import { StateRoot } from "../../root/StateRoot.ts"
import { Applier } from "../../live/Applier.ts"
import { makeRefs } from "../../live/Endpoints.ts"
import type { EndpointKey } from "../../owed/Reloads.ts"
import type { FleetRequest } from "../FleetCalls.ts"
import { occasionOf } from "./occasion.ts"

/**
 * The host's side of its endpoints' messages.
 * @since 0.1.0
 * @category internals
 */
export const make = Effect.gen(function*() {
  const applier = yield* Applier
  const calls = yield* EndpointCalls
  const capabilities = yield* Capabilities
  const peers = yield* Peers
  const state = yield* StateRoot
  const refs = makeRefs(yield* RuntimeProfiles, peers, state)

  const failed = (key: EndpointKey, request: FleetRequest, detail: string): EndpointOutcome => ({
    capability: request.capability,
    personality: key.personality,
    runtime: key.runtime,
    occasion: occasionOf(request.verb),
    state: "failed",
    ms: 0,
    detail: oneLine(detail, 300)
  })

  const provision = (key: EndpointKey, request: FleetRequest): Effect.Effect<EndpointOutcome> =>
    Effect.gen(function*() {
      const outcome = yield* Effect.scoped(Effect.gen(function*() {
        yield* state.lock
        const declaration = yield* capabilities.get(request.capability)
        const peer = yield* peers.get(key.personality)
        const done = yield* calls.run([{ declaration, peer, runtime: key.runtime }], occasionOf(request.verb))
        return done.outcomes[0] ?? failed(key, request, "no call was made: the endpoint is not one of the capability's")
      }))
      if (outcome.state !== "ok") return outcome
      // The call ran and is recorded: what fails after it (reading the peer again, converging while
      // the database restarts) is the application's failure, never the call's.
      return yield* Effect.gen(function*() {
        const ref = yield* refs.resolve(key)
        if (Option.isNone(ref)) return outcome
        const [applied] = yield* applier.converge([ref.value], `${request.verb} ${request.capability}`, request.capability)
        return applied === undefined ? outcome : { ...outcome, application: applied.application }
      }).pipe(Effect.catchAll((error): Effect.Effect<EndpointOutcome> =>
        Effect.succeed({ ...outcome, application: "failed", application_detail: oneLine(error.message, 300) })
      ))
    }).pipe(Effect.catchAll((error) => Effect.succeed(failed(key, request, error.message))))

  return { provision }
})
