/**
 * The endpoint entity's handler (docs/cluster.md, "Endpoints as entities"): each message is handed
 * to the host's own services through `HostWork`, one message of an endpoint at a time.
 * @since 0.1.0
 */
import * as Entity from "@effect/cluster/Entity"
import * as Effect from "effect/Effect"
import { EndpointEntity, endpointOf, keyOf } from "../EndpointEntity.ts"
import { HostWork } from "../HostWork.ts"

/**
 * The handler as a layer: registers the entity with `Sharding`.
 * @since 0.1.0
 * @category internals
 */
export const handlers = EndpointEntity.toLayer(
  Effect.gen(function*() {
    const work = yield* HostWork
    const key = keyOf(endpointOf((yield* Entity.CurrentAddress).entityId))
    return EndpointEntity.of({
      Provision: ({ payload }) => work.provision(key, payload)
    })
  }),
  { concurrency: 1 }
)
