/**
 * An endpoint as an `@effect/cluster` entity (docs/cluster.md, "Endpoints as entities"): one
 * entity per (host, runtime, personality), whose shard group is its host, so its messages are
 * handled by a runner of that host only, where the runtime's files live.
 *
 Its one message, `Provision`, not persisted: one provisioning call of a sweep (`register`,
 * `sync`, `unregister`) for this endpoint, answered with the outcome its host recorded. Not
 * persisted because a sweep waits for it with a deadline: a host that is down makes the endpoint
 * `failed` then, rather than running the call later behind the operator's back.
 *
 * Owed reloads are not messages: they travel one way, the host's owed-work store and its claim
 * (docs/cluster.md, "Owed reloads: one path").
 *
 * The entity id is `<host>/<runtime>/<personality>`: the three are `Name`s, which hold no `/`.
 * @since 0.1.0
 */
import * as Entity from "@effect/cluster/Entity"
import * as ClusterSchema from "@effect/cluster/ClusterSchema"
import * as Rpc from "@effect/rpc/Rpc"
import { Name } from "../../schema/Name.ts"
import { EndpointOutcome } from "../../schema/Outcome.ts"
import type { EndpointKey } from "../owed/OwedRecords.ts"
import { type FleetEndpoint, Revision, SweepVerb } from "./FleetCalls.ts"

/**
 * One provisioning call of a sweep.
 * @since 0.1.0
 * @category schemas
 */
export const Provision = Rpc.make("Provision", {
  payload: { verb: SweepVerb, capability: Name, revision: Revision },
  success: EndpointOutcome
})

/** The separator of an entity id's three parts. */
const separator = "/"

/**
 * The entity id of an endpoint.
 * @since 0.1.0
 * @category constructors
 */
export const entityIdOf = (endpoint: FleetEndpoint): string =>
  [endpoint.host, endpoint.runtime, endpoint.personality].join(separator)

/**
 * The endpoint an entity id names (ids this module made: three `Name`s).
 * @since 0.1.0
 * @category utils
 */
export const endpointOf = (entityId: string): FleetEndpoint => {
  const [host = "", runtime = "", personality = ""] = entityId.split(separator)
  return { host, runtime, personality }
}

/**
 * The host's own key of an endpoint (its stores are per host).
 * @since 0.1.0
 * @category utils
 */
export const keyOf = (endpoint: FleetEndpoint): EndpointKey => ({
  runtime: endpoint.runtime,
  personality: endpoint.personality
})

/**
 * The endpoint entity: its shard group is its host.
 * @since 0.1.0
 * @category schemas
 */
export const EndpointEntity = Entity.make("CityEndpoint", [Provision]).annotate(
  ClusterSchema.ShardGroup,
  (entityId) => endpointOf(entityId).host
)
