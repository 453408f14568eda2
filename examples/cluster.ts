/**
 * One host's stores on SQL, over whichever `SqlClient` the application provides
 * (docs/cluster.md, "What this part provides").
 */
// #region readme
import { Effect, Layer } from "effect"
import { CapabilityServices } from "effect-city"
import { Reloads, SqlStores } from "effect-city/cluster"

// The stores of host web-01 (declarations, peers, owed work, the host table) on the database of
// the SqlClient layer the caller provides: the tables are created on first use. Its state root
// (host.json, the peers' private directories) comes from the capability services.
export const stores = (root: string) =>
  SqlStores.layer({ host: "web-01" }).pipe(Layer.provide(CapabilityServices.layer({ root })))

// The owed work of host web-01's endpoints.
export const owed = (root: string) =>
  Effect.flatMap(Reloads, (reloads) => reloads.list).pipe(Effect.provide(stores(root)))
// #endregion readme
