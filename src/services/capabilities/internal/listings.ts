/**
 * The read-only views' implementation (Listings.ts): every declaration with its endpoints and
 * their last recorded call, every peer, and every invalid file met.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import { Capabilities } from "../Capabilities.ts"
import { endpointsOf } from "../EndpointCalls.ts"
import { EndpointRecords } from "../EndpointRecords.ts"
import { Peers } from "../Peers.ts"
import { RuntimeProfiles } from "../RuntimeProfiles.ts"
import { StateRoot } from "../../root/StateRoot.ts"

/**
 * Makes the overview on the stores.
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const state = yield* StateRoot
  const profiles = yield* RuntimeProfiles
  const declarations = yield* Capabilities
  const peersStore = yield* Peers
  const records = yield* EndpointRecords

  const capabilities = Effect.gen(function*() {
    yield* state.require
    const found = yield* declarations.scan
    const peers = yield* peersStore.scan
    const views = yield* Effect.forEach(found.valid, (declaration) =>
      Effect.map(records.get(declaration.capability), (recorded) => ({
        view: {
          declaration,
          endpoints: endpointsOf(declaration, peers.valid, profiles.isAgent).map((e) => ({
            personality: e.peer.personality,
            runtime: e.runtime,
            last: recorded.last(e.peer.personality, e.runtime)
          }))
        },
        invalid: recorded.invalid
      })))
    const invalidRecords = views.flatMap((v) => v.invalid._tag === "Some" ? [v.invalid.value] : [])
    return {
      capabilities: views.map((v) => v.view),
      invalid: [...found.invalid, ...peers.invalid, ...invalidRecords]
    }
  })

  const peers = Effect.zipRight(
    state.require,
    Effect.map(peersStore.scan, (scan) => ({ peers: scan.valid, invalid: scan.invalid }))
  )

  return { capabilities, peers }
})

