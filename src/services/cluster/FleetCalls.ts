/**
 * The calls a sweep across hosts makes (docs/cluster.md, "Sweeps across hosts"): which endpoints a
 * capability has on every host, and one provisioning call carried to an endpoint's host, which runs
 * it as it runs a call on one host (docs/capability-plugin-lifecycle.md, "Joints (core-owned)") and
 * answers with the outcome it recorded.
 *
 * The sweep (`Sweep`) is built against this Tag only; the endpoint entities of `@effect/cluster`
 * (the calls) and the SQL stores of capabilities, peers and hosts (the listing) implement it.
 *
 * Decisions where the spec is silent:
 * - the listing is the shared database's, so it names the endpoints of hosts that are down too:
 *   a sweep reports them (`failed`), it never leaves them out;
 * - `call` fails with `HostUnavailable` when the carrier knows at once that the host cannot be
 *   reached; a host that does not answer is bounded by the sweep's `callTimeout`, not here.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { StateRootError } from "../../schema/CapabilityErrors.ts"
import type { InvalidFile } from "../../schema/FileErrors.ts"
import type { ClusterError } from "../../schema/Live.ts"
import { Name } from "../../schema/Name.ts"
import type { EndpointOutcome } from "../../schema/Outcome.ts"

/**
 * One endpoint of a capability on one host: the host its runtime's files live on, the runtime and
 * the peer's personality.
 * @since 0.1.0
 * @category schemas
 */
export const FleetEndpoint = Schema.Struct({
  host: Name,
  runtime: Name,
  personality: Name
})
/**
 * One endpoint of a capability on one host, as decoded.
 * @since 0.1.0
 * @category models
 */
export type FleetEndpoint = typeof FleetEndpoint.Type

/**
 * The verbs that sweep every endpoint of a capability: `register` and `sync` provision
 * (`sweep-on`), `unregister` unprovisions (`off-all`).
 * @since 0.1.0
 * @category schemas
 */
export const SweepVerb = Schema.Literal("register", "sync", "unregister")
/**
 * A verb that sweeps every endpoint of a capability.
 * @since 0.1.0
 * @category models
 */
export type SweepVerb = typeof SweepVerb.Type

/**
 * The revision of a capability's declaration, as the capability store gives it (a counter or a
 * digest): a sweep only compares it, and a new one is a new sweep.
 * @since 0.1.0
 * @category schemas
 */
export const Revision = Schema.String.pipe(
  Schema.minLength(1, { message: () => "must be a revision of at least one character" })
)

/**
 * One provisioning call to carry to an endpoint's host.
 * @since 0.1.0
 * @category models
 */
export interface FleetRequest {
  /** The sweep verb the call belongs to (its occasion: `sweep-on`, or `off-all` for `unregister`). */
  readonly verb: SweepVerb
  /** The capability's name. */
  readonly capability: string
  /** The revision of the declaration the call runs. */
  readonly revision: string
}

/**
 * The endpoints of a capability across hosts, and the call to one endpoint's host. Implemented by
 * the endpoint entities and the SQL stores; a sweep needs nothing else.
 * @since 0.1.0
 * @category tags
 */
export class FleetCalls extends Context.Tag("effect-city/cluster/FleetCalls")<
  FleetCalls,
  {
    /**
     * Every host's endpoints of the capability, from the shared database, hosts that are down
     * included, in host, personality then runtime order; and every invalid file (peer file,
     * declaration) met while listing them.
     */
    readonly endpoints: (capability: string) => Effect.Effect<
      { readonly endpoints: ReadonlyArray<FleetEndpoint>; readonly invalid: ReadonlyArray<InvalidFile> },
      StateRootError
    >
    /**
     * The endpoint's host runs the provisioning call (provision for `register` and `sync`,
     * unprovision for `unregister`) and answers with the outcome it recorded.
     */
    readonly call: (endpoint: FleetEndpoint, request: FleetRequest) => Effect.Effect<EndpointOutcome, ClusterError>
  }
>() {}
