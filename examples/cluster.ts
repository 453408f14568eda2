/**
 * The owed-reload store on SQL, over whichever `SqlClient` the application provides
 * (docs/cluster.md, "What this part provides").
 */
// #region readme
import { Effect } from "effect"
import { Reloads, SqlReloads } from "effect-city/cluster"

// The owed work of host web-01's endpoints, from the database of the SqlClient layer the caller
// provides (with a FileSystem): the table is created on first use.
export const owed = Effect.flatMap(Reloads, (reloads) => reloads.list).pipe(
  Effect.provide(SqlReloads.layer({ host: "web-01" }))
)
// #endregion readme
