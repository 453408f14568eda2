/**
 * A host's stores on the shared database, split as the binary provides them (docs/cluster.md, "A
 * host in the fleet"): the declaration and peer stores to the capability services, the owed-work
 * store to the live services. A user composes them as one layer, `SqlStores.layer`.
 * @since 0.1.0
 */
import * as Layer from "effect/Layer"
import * as SqlCapabilities from "../SqlCapabilities.ts"
import * as SqlPeers from "../SqlPeers.ts"
import * as SqlReloads from "../SqlReloads.ts"

/**
 * The declaration store and the host's peer store on the shared database.
 * @since 0.1.0
 * @category internals
 */
export const stores = (host: string) => Layer.merge(SqlCapabilities.layer, SqlPeers.layer({ host }))

/**
 * The host's owed-work store on the shared database.
 * @since 0.1.0
 * @category internals
 */
export const reloads = (host: string) => SqlReloads.layer({ host })
