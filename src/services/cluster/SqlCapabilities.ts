/**
 * The declaration store on SQL: the `Capabilities` service (capabilities/Capabilities.ts) over any
 * `@effect/sql` `SqlClient`, for hosts that share one database (docs/cluster.md, "Capability, peer
 * and host stores on SQL").
 *
 * A capability is registered once for the fleet: one row per capability in `city_capabilities`, no
 * host column, its `declaration` column the `Declaration` as JSON text, written by encoding through
 * the Schema and read by the file store's own `validate` (the Schema, "equals the name", and the
 * host rule: no runtime this host knows as a channel runtime). `readFile`, the input of `register`,
 * is the file store's: a declaration file on this host's disk, read through the one reader.
 *
 * Decisions where the spec is silent:
 * - every `store` raises the row's `revision` by one (the first is 1), even when the declaration
 *   is unchanged: a `register` is a new revision, and a sweep is keyed by it (`revision`);
 * - `remove` deletes the row but not the name's last revision (`city_capability_revisions`): a
 *   capability registered again goes on from it, so a revision never repeats, nor the sweep keyed
 *   by it;
 * - a row that does not decode is an `InvalidFile` (`Declaration`) whose `file` is
 *   `city_capabilities (<name>)` (what `file(name)` returns): `scan` reports it beside the valid
 *   ones, `get` fails with it, as an invalid file is on one host;
 * - `scan` is in name order by code units, as the file store lists its folder;
 * - a database failure is a `StateError` naming the table row and the operation.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Path from "@effect/platform/Path"
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Migrator from "@effect/sql/Migrator"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { StateRootError } from "../../schema/CapabilityErrors.ts"
import { Capabilities } from "../capabilities/Capabilities.ts"
import type { RuntimeProfiles } from "../capabilities/RuntimeProfiles.ts"
import * as internal from "./internal/sqlCapabilities.ts"
import { migrate } from "./Migrations.ts"

/**
 * The table of declarations: one row per capability, fleet-wide.
 * @since 0.1.0
 * @category constants
 */
export const table: string = internal.table

/**
 * The revision of the stored declaration of `name` (1 for the first `store`, one more for each
 * next); `None` when there is none.
 * @since 0.1.0
 * @category getters
 */
export const revision: (name: string) => Effect.Effect<Option.Option<number>, StateRootError, SqlClient.SqlClient> =
  internal.revision

/**
 * Builds the declaration store on the `SqlClient` (the table must exist: see `Migrations.migrate`),
 * on this host's runtime profiles.
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<
  Capabilities["Type"],
  never,
  SqlClient.SqlClient | RuntimeProfiles | FileSystem.FileSystem | Path.Path
> = internal.make

/**
 * The declaration store on the `SqlClient` as a layer: runs the migrations, then serves
 * `Capabilities`.
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<
  Capabilities,
  Migrator.MigrationError | SqlError,
  SqlClient.SqlClient | RuntimeProfiles | FileSystem.FileSystem | Path.Path
> = Layer.effect(Capabilities, Effect.zipRight(migrate, make))
