/**
 * The `Capabilities` namespace: what a user of the capability part writes against, in one place.
 * `CapabilityServices.layer({ root })` provides the four services; the Schemas are the documents
 * they read and write (docs/capability-plugin-lifecycle.md, and docs/cli.md for the verbs on them).
 *
 * - Services: `Provisioner` (the joints: `register`, `sync`, `unregister`, peer birth, runtimes,
 *   `removePeer`), `Capabilities` (the declaration store), `Peers` (the peer store), `Listings`
 *   (the read-only views behind `city capability list` and `city peer list`).
 * - Documents: `Declaration` (`capabilities/<name>.json`), `Peer` (`peers/<personality>.json`),
 *   `HostConfig` (`host.json`).
 * - What a joint reports: `JointReport` (its `Pretty` line, docs/library.md "Reports"), each
 *   endpoint's `EndpointOutcome` (an `Outcome` of one call, on an `Occasion`), and the
 *   `EndpointRecord` of an endpoint's last call.
 *
 * The modules behind it (their stores' layers, the sub-Schemas of a declaration, the endpoint
 * records' file) are the house's, reached by path.
 * @since 0.1.0
 */

export { Capabilities } from "./services/capabilities/Capabilities.ts"
export { type CapabilityListing, Listings, type PeerListing } from "./services/capabilities/Listings.ts"
export { Peers } from "./services/capabilities/Peers.ts"
export {
  JointReport,
  type JointSettings,
  type NewPeer,
  Provisioner,
  type RemovalSettings
} from "./services/capabilities/Provisioner.ts"
export { Declaration } from "./schema/Declaration.ts"
export { HostConfig } from "./schema/HostConfig.ts"
export { Occasion } from "./schema/Occasion.ts"
export { EndpointOutcome, EndpointRecord, Outcome } from "./schema/Outcome.ts"
export { Peer } from "./schema/Peer.ts"
