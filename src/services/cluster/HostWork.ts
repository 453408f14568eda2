/**
 * What an endpoint entity's handler asks of its host (docs/cluster.md, "Endpoints as entities"):
 * the host's own services do the work, the cluster only carries the message to the right host. A
 * host runner provides it from its provisioner and applier; tests provide a recorder.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { EndpointOutcome } from "../../schema/Outcome.ts"
import type { EndpointKey } from "../owed/OwedRecords.ts"
import type { FleetRequest } from "./FleetCalls.ts"

/**
 * The host's side of an endpoint's messages.
 * @since 0.1.0
 * @category tags
 */
export class HostWork extends Context.Tag("effect-city/cluster/HostWork")<
  HostWork,
  {
    /** Runs the provisioning call for the endpoint on this host: the outcome it recorded. */
    readonly provision: (key: EndpointKey, call: FleetRequest) => Effect.Effect<EndpointOutcome>
  }
>() {}
