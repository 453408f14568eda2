/**
 * The hosts of the fleet on SQL (docs/cluster.md, "Capability, peer and host stores on SQL"): each
 * host announces itself with its runtime profiles (its `host.json` as `RuntimeProfiles` read it)
 * when it starts and says it is still there from time to time; a fleet status and a sweep read
 * the table to know every host's runtimes (which are agents, which are channels, which have a
 * private directory) and when it was last seen.
 *
 * One row per host in `city_hosts`: `profiles` holds the host's `HostConfig` as JSON text, written
 * by encoding through the Schema and read by decoding through it; `started_at` and `seen_at` are
 * ISO-8601 UTC times, decoded through `Schema.DateTimeUtc`.
 *
 * Decisions where the spec is silent:
 * - the whole `HostConfig` is stored (agent and channel runtimes, profiles, redaction patterns,
 *   daemon settings): it is what the host runs on, and what another host needs to apply the same
 *   rules to it (docs/capability-plugin-lifecycle.md, "Declaration": no channel runtime as an
 *   endpoint);
 * - `announce` replaces the row: a host that starts again has a new `started_at`;
 * - `seen` of a host that has no row changes nothing and answers `false` (the host announces
 *   itself again); it never creates a row without profiles;
 * - a row that does not decode is an `InvalidFile` (`HostConfig`) whose `file` is
 *   `city_hosts (<host>)`, its field `profiles.<field>` for a rule inside the profiles, and it is
 *   reported by `list` beside the valid hosts, never dropped;
 * - a database failure is a `StateError` naming the table and the operation.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Migrator from "@effect/sql/Migrator"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { StateRootError } from "../../schema/CapabilityErrors.ts"
import type { InvalidFile } from "../../schema/FileErrors.ts"
import type { HostConfig } from "../../schema/HostConfig.ts"
import type * as DocumentStore from "../capabilities/DocumentStore.ts"
import * as internal from "./internal/sqlHosts.ts"
import type { HostEntry } from "./internal/sqlHosts.ts"
import { migrate } from "./Migrations.ts"

/**
 * The table of hosts: one row per host.
 * @since 0.1.0
 * @category constants
 */
export const table: string = internal.table

export type { HostEntry } from "./internal/sqlHosts.ts"

/**
 * The hosts of the fleet: announce this one, refresh it, list them all.
 * @since 0.1.0
 * @category tags
 */
export class Hosts extends Context.Tag("effect-city/Hosts")<
  Hosts,
  {
    /** Stores `host` with its profiles, its start and last sight now; replaces its previous row. */
    readonly announce: (host: string, profiles: HostConfig) => Effect.Effect<void, StateRootError>
    /** Sets the last sight of `host` to now; `false` when it has no row (announce it). */
    readonly seen: (host: string) => Effect.Effect<boolean, StateRootError>
    /** Every host, in name order, and every row that does not decode. */
    readonly list: Effect.Effect<DocumentStore.Scan<HostEntry, InvalidFile>, StateRootError>
  }
>() {}

/**
 * Builds the host table's service on the `SqlClient` (the table must exist: see `migrate`).
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Hosts["Type"], never, SqlClient.SqlClient> = internal.make

/**
 * The host table as a layer: runs the migrations, then serves `Hosts`.
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Hosts, Migrator.MigrationError | SqlError, SqlClient.SqlClient> = Layer.effect(
  Hosts,
  Effect.zipRight(migrate, make)
)
