/**
 * The peer store on SQL: the `Peers` service (capabilities/Peers.ts) over any `@effect/sql`
 * `SqlClient`, for hosts that share one database (docs/cluster.md, "Capability, peer and host
 * stores on SQL").
 *
 * A peer belongs to its host (its cwd and private directories are on that machine): one row per
 * (host, personality) in `city_peers`, its `peer` column the `Peer` as JSON text, written by
 * encoding through the Schema and read by the file store's own `validate`. Each host's store
 * (`layer({ host })`) sees and changes its own rows only: two hosts may each have a peer `alice`.
 * `purge` and `purgeRuntime` remove the peer's private directories on this host's disk as the
 * file store does (the same function), then, for `purge`, the row.
 *
 * Decisions where the spec is silent:
 * - a row that does not decode is an `InvalidFile` (`PeerFile`) whose `file` is
 *   `city_peers (<host>, <personality>)` (what `file(personality)` returns): `scan` and `fleet`
 *   report it beside the valid ones, `get` fails with it; `exists` is true for it;
 * - `scan` is in personality order, `fleet` in (host, personality) order, by code units;
 * - a database failure is a `StateError` naming the table row and the operation.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Migrator from "@effect/sql/Migrator"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { StateRootError } from "../../schema/CapabilityErrors.ts"
import type { InvalidFile } from "../../schema/FileErrors.ts"
import type { Peer } from "../../schema/Peer.ts"
import type * as DocumentStore from "../capabilities/DocumentStore.ts"
import { Peers } from "../capabilities/Peers.ts"
import type { RuntimeProfiles } from "../capabilities/RuntimeProfiles.ts"
import type { StateRoot } from "../root/StateRoot.ts"
import * as internal from "./internal/sqlPeers.ts"
import { migrate } from "./Migrations.ts"

/**
 * The table of peers: one row per (host, personality).
 * @since 0.1.0
 * @category constants
 */
export const table: string = internal.table

/**
 * A peer of the fleet and the host it belongs to.
 * @since 0.1.0
 * @category models
 */
export interface FleetPeer {
  /** The host whose row it is. */
  readonly host: string
  /** The peer, decoded. */
  readonly peer: Peer
}

/**
 * Every host's peers, valid or not, in (host, personality) order.
 * @since 0.1.0
 * @category getters
 */
export const fleet: Effect.Effect<DocumentStore.Scan<FleetPeer, InvalidFile>, StateRootError, SqlClient.SqlClient> =
  internal.fleet

/**
 * Builds the peer store of the host `host` on the `SqlClient` (the table must exist: see
 * `Migrations.migrate`); private directories are removed under this host's state root.
 * @since 0.1.0
 * @category constructors
 */
export const make: (host: string) => Effect.Effect<
  Peers["Type"],
  never,
  SqlClient.SqlClient | StateRoot | RuntimeProfiles
> = internal.make

/**
 * The peer store of one host on the `SqlClient` as a layer: runs the migrations, then serves
 * `Peers` for `options.host` (a `Name`: docs/cluster.md, "Hosts").
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: { readonly host: string }): Layer.Layer<
  Peers,
  Migrator.MigrationError | SqlError,
  SqlClient.SqlClient | StateRoot | RuntimeProfiles
> => Layer.effect(Peers, Effect.zipRight(migrate, make(options.host)))
