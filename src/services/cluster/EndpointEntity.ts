/**
 * An endpoint as an `@effect/cluster` entity (docs/cluster.md, "Endpoints as entities"): one
 * entity per (host, runtime, personality), whose shard group is its host, so its messages are
 * handled by a runner of that host only, where the runtime's files live.
 *
 * Its messages:
 * - `Reload`, persisted, with a primary key: the sender first owes the reload in the host's
 *   owed-work store (durable before anything is sent), then sends one message with an id of its
 *   own; a retried send carries the same id and runs once. The handler drains the endpoint's owed
 *   work (live/Reloads.ts: a claim covers every request so far), one message at a time, so a
 *   reload requested while one runs is a new message queued behind it and causes exactly one more.
 *   The id is not the store's request number: that number starts again at 1 once nothing is owed,
 *   and a key must never repeat.
 * - `Provision`, not persisted: one provisioning call of a sweep (`register`, `sync`,
 *   `unregister`) for this endpoint, answered with the outcome its host recorded. Not persisted
 *   because a sweep waits for it with a deadline: a host that is down makes the endpoint `failed`
 *   then, rather than running the call later behind the operator's back.
 *
 * The entity id is `<host>/<runtime>/<personality>`: the three are `Name`s, which hold no `/`.
 * @since 0.1.0
 */
import * as Entity from "@effect/cluster/Entity"
import * as ClusterSchema from "@effect/cluster/ClusterSchema"
import * as Rpc from "@effect/rpc/Rpc"
import * as Schema from "effect/Schema"
import { Name } from "../../schema/Name.ts"
import { EndpointOutcome } from "../../schema/Outcome.ts"
import type { EndpointKey } from "../live/OwedRecords.ts"
import { type FleetEndpoint, Revision, SweepVerb } from "./FleetCalls.ts"

/**
 * What handling one `Reload` did: `applied` (the endpoint reloaded), `settled` (asleep or stopped:
 * its next launch reads the current surfaces), `none` (nothing was owed any more: an earlier
 * message's reload covered it), `failed` (the attempt failed; the reload stays owed with its
 * backoff, `detail` says why).
 * @since 0.1.0
 * @category schemas
 */
export const ReloadResult = Schema.Struct({
  state: Schema.Literal("applied", "settled", "none", "failed"),
  detail: Schema.optional(Schema.String)
})

/**
 * What handling one `Reload` did, as decoded.
 * @since 0.1.0
 * @category models
 */
export type ReloadResult = typeof ReloadResult.Type

/**
 * An owed reload, persisted, deduplicated by the sender's id for it: a retried send carries the
 * same id and runs once.
 * @since 0.1.0
 * @category schemas
 */
export const Reload = Rpc.make("Reload", {
  payload: { id: Schema.String, reason: Schema.String },
  success: ReloadResult,
  primaryKey: ({ id }) => id
}).annotate(ClusterSchema.Persisted, true)

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
export const EndpointEntity = Entity.make("CityEndpoint", [Reload, Provision]).annotate(
  ClusterSchema.ShardGroup,
  (entityId) => endpointOf(entityId).host
)
