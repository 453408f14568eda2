/**
 * The stores of one host of a fleet on `@effect/sql`, as one layer over any `SqlClient`
 * (docs/cluster.md, "Capability, peer and host stores on SQL"): the declaration store
 * (`Capabilities`, fleet-wide, with revisions), the host's peer store (`Peers`), its owed-work
 * store (`Reloads`) and the fleet's host table (`Hosts`), each table created by the one migration
 * set, recorded in `city_migrations`, at build.
 *
 * Besides the `SqlClient` it needs a `FileSystem` and a `Path`, and for the declaration and peer
 * stores this host's `RuntimeProfiles` and `StateRoot`, which `CapabilityServices.layer` provides.
 * @since 0.1.0
 */
import * as Layer from "effect/Layer"
import * as SqlCapabilities from "./SqlCapabilities.ts"
import * as SqlHosts from "./SqlHosts.ts"
import * as SqlPeers from "./SqlPeers.ts"
import * as SqlReloads from "./SqlReloads.ts"

export { Hosts } from "./SqlHosts.ts"
export { revision } from "./SqlCapabilities.ts"
export { fleet } from "./SqlPeers.ts"

/**
 * The stores of the host `options.host` (a `Name`: docs/cluster.md, "Hosts") on the `SqlClient`:
 * `Capabilities`, `Peers` and `Reloads` of that host, and the fleet's `Hosts`. Another host's peers
 * and owed work are neither seen nor changed.
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: { readonly host: string }) =>
  Layer.mergeAll(SqlCapabilities.layer, SqlPeers.layer(options), SqlReloads.layer(options), SqlHosts.layer)
