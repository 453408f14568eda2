/**
 * `effect-city/cluster`: the stores of a City on `@effect/sql`, for hosts that share one database
 * (docs/cluster.md). Nothing else in the package loads this entry point or the modules it reaches
 * (`@effect/cluster`, `@effect/sql`, `@effect/workflow`, `@effect/rpc`): a City on one host runs on
 * its files without them.
 *
 * - `SqlReloads`: the owed-reload store (the `Reloads` service) over any `SqlClient`, its table created by
 *   `@effect/sql`'s `Migrator`.
 *
 * ```ts
 * import { SqlReloads } from "effect-city/cluster"
 * ```
 * @module
 * @since 0.1.0
 */

/**
 * The owed-reload store on SQL: the `Reloads` service over any `SqlClient`.
 * @since 0.1.0
 */
export * as SqlReloads from "./services/cluster/SqlReloads.ts"
/**
 * The owed-work store's Tag, which `SqlReloads.layer` provides (a City on one host provides it from
 * its files), and an endpoint's key in it.
 * @since 0.1.0
 */
export { type EndpointKey, Reloads } from "./services/live/Reloads.ts"
