/**
 * `HostWork` from a host's own services (docs/cluster.md, "Runners and clients"): a `Reload`
 * message drains the endpoint's owed work through the applier, as the host's owed-work worker
 * does; a `Provision` message runs the endpoint's provisioning call under the host's root lock,
 * records it as on one host, then converges the endpoint when the call ended `ok`.
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
import { StateRoot } from "../../capabilities/StateRoot.ts"
import { Applier } from "../../live/Applier.ts"
import { makeRefs } from "../../live/Endpoints.ts"
import { type EndpointKey, owesWork, Reloads } from "../../live/Reloads.ts"
import type { ReloadResult } from "../EndpointEntity.ts"
import { type FleetRequest, occasionOf } from "../FleetCalls.ts"

/**
 * The host's side of its endpoints' messages.
 * @since 0.1.0
 * @category internals
 */
export const make = Effect.gen(function*() {
  const applier = yield* Applier
  const reloads = yield* Reloads
  const calls = yield* EndpointCalls
  const capabilities = yield* Capabilities
  const peers = yield* Peers
  const state = yield* StateRoot
  const refs = makeRefs(yield* RuntimeProfiles, peers, state)

  const owed = (key: EndpointKey) =>
    Effect.map(Effect.option(reloads.get(key)), (record) => Option.filter(Option.flatten(record), owesWork))

  const drain = (key: EndpointKey): Effect.Effect<ReloadResult> =>
    Effect.gen(function*() {
      if (Option.isNone(yield* owed(key))) return { state: "none" as const }
      yield* applier.drain(key)
      const after = yield* owed(key)
      return Option.match(after, {
        onNone: () => ({ state: "applied" as const }),
        onSome: (record) => ({ state: "failed" as const, detail: record.last_error ?? "still owed" })
      })
    })

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
      const ref = yield* refs.resolve(key)
      if (Option.isNone(ref)) return outcome
      const [applied] = yield* applier.converge([ref.value], `${request.verb} ${request.capability}`, request.capability)
      return applied === undefined ? outcome : { ...outcome, application: applied.application }
    }).pipe(Effect.catchAll((error) => Effect.succeed(failed(key, request, error.message))))

  return { drain, provision }
})
