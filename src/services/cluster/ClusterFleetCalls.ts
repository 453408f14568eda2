/**
 * `FleetCalls` on the cluster (docs/cluster.md, "Sweeps across hosts"): the endpoints of a
 * capability listed from the SQL stores, the calls carried by the endpoint entities.
 *
 * `endpoints(capability)` reads the declaration (`Capabilities`: `SqlCapabilities.layer`), every
 * host's peers (`SqlPeers.fleet`) and every host's stored `host.json` (`Hosts.list`: `SqlHosts`),
 * then applies to each host the rule of one host (`endpointsOf`, capabilities/EndpointCalls.ts)
 * with that host's own profiles: an endpoint is (host, peer, runtime) where the peer declares the
 * runtime, the declaration lists it, and the host runs it as an agent. `call(endpoint, request)`
 * sends `Provision` to the endpoint's entity (EndpointEntity.ts), whose shard group is its host,
 * and answers the outcome that host recorded.
 *
 * Decisions where the spec is silent:
 * - the declaration is read and judged by the caller's own store (its host's rule, as `register`
 *   judged it there); each host's endpoints are judged by that host's profiles, so a runtime that
 *   is a channel on one host is an endpoint on none of its peers there;
 * - an invalid declaration lists no endpoint and is reported in `invalid`; so are invalid peer and
 *   host rows (a host whose row is invalid lists no endpoint), and a host that has peers but no
 *   row (it never announced itself: its profiles are unknown) is reported as `city_hosts (<host>)`
 *   missing. The sweep's verdict is then `failed`;
 * - a capability with no declaration is a `StateError` (`cannot read city_capabilities (<name>):
 *   no declaration`): the caller stores it before the sweep, so its absence is a broken sweep,
 *   not an empty one;
 * - a send that fails (`MailboxFull`, `AlreadyProcessingMessage`, a persistence error, a defect
 *   of the transport) is `HostUnavailable` naming the host and the reason in one line. A host
 *   with no runner, or whose runner cannot be reached, is not among them: `@effect/cluster`
 *   retries such a send (`EntityNotAssignedToRunner`, `RunnerUnavailable`) every
 *   `sendRetryInterval` (100 ms) with no end, so the sweep's `callTimeout` is what bounds it;
 * - an interrupted call stays an interruption (the sweep's timeout), never `HostUnavailable`.
 * @since 0.1.0
 */
import type * as Sharding from "@effect/cluster/Sharding"
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Layer from "effect/Layer"
import type { Capabilities } from "../capabilities/Capabilities.ts"
import { FleetCalls } from "./FleetCalls.ts"
import * as internal from "./internal/clusterFleetCalls.ts"
import type { Hosts } from "./SqlHosts.ts"

/**
 * `FleetCalls` over the SQL stores (`SqlCapabilities.layer` for `Capabilities`, `SqlHosts.layer`
 * for `Hosts`, the `SqlClient` for the fleet's peers) and `Sharding` (a host's runner or a client:
 * `ClusterRunner`).
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<FleetCalls, never, Capabilities | Hosts | SqlClient.SqlClient | Sharding.Sharding> = Layer
  .effect(FleetCalls, internal.make)
