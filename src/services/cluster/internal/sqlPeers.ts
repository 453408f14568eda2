/**
 * The SQL peer store's implementation (cluster/SqlPeers.ts holds the decisions): its table, the
 * row's locator, `make` of one host's store and the fleet read. The rules are the file store's
 * (capabilities/internal/peers.ts): a row is judged by the same `validate`, and a purge removes
 * the peer's private directories on this host's disk by the same `privateDirs`.
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Order from "effect/Order"
import * as Schema from "effect/Schema"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { StateRootError, CapabilityError } from "../../../schema/CapabilityErrors.ts"
import type { InvalidFile } from "../../../schema/FileErrors.ts"
import { Peer } from "../../../schema/Peer.ts"
import type * as DocumentStore from "../../capabilities/DocumentStore.ts"
import { privateDirs, validate } from "../../capabilities/internal/peers.ts"
import type { Peers } from "../../capabilities/Peers.ts"

/**
 * The table of peers: one row per (host, personality).
 * @since 0.1.0
 * @category internals
 */
export const table = "city_peers"

/**
 * Where the peer `personality` of `host` is stored, as errors and `file` name it.
 * @since 0.1.0
 * @category internals
 */
export const locator = (host: string, personality: string) => `${table} (${host}, ${personality})`

interface Row {
  readonly host: string
  readonly personality: string
  readonly peer: string
}

const encode = Schema.encode(Schema.parseJson(Peer))

const failed = (operation: string, path: string) => (error: SqlError) =>
  new StateRootError({ reason: "StateError", operation, path, detail: error.message, cause: error })

const decode = (row: Row) => validate(locator(row.host, row.personality), row.personality, row.peer)

// (host, personality) by code units, as the file store lists its folder (a collation may differ).
const byKey = Order.combine(
  Order.mapInput(Order.string, (row: Row) => row.host),
  Order.mapInput(Order.string, (row: Row) => row.personality)
)

const scanRows = <A>(rows: ReadonlyArray<Row>, valid: (row: Row, peer: Peer) => A) =>
  Effect.map(
    Effect.forEach(Arr.sort(rows, byKey), (row) => Effect.either(Effect.map(decode(row), (peer) => valid(row, peer)))),
    (found): DocumentStore.Scan<A, InvalidFile> => ({ valid: Arr.getRights(found), invalid: Arr.getLefts(found) })
  )

/**
 * Every host's peers, valid or not, in (host, personality) order.
 * @since 0.1.0
 * @category internals
 */
export const fleet: Effect.Effect<
  DocumentStore.Scan<{ readonly host: string; readonly peer: Peer }, InvalidFile>,
  StateRootError,
  SqlClient.SqlClient
> = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<Row>`SELECT host, personality, peer FROM ${sql(table)}`.pipe(
    Effect.mapError(failed("list", table)),
    Effect.flatMap((rows) => scanRows(rows, (row, peer) => ({ host: row.host, peer })))
  ))

/**
 * Builds the peer store of the host `host` on the `SqlClient` (the table must exist).
 * @since 0.1.0
 * @category internals
 */
export const make = (host: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const dirs = yield* privateDirs
    const file = (personality: string) => locator(host, personality)
    const select = (personality: string) =>
      sql<Row>`SELECT host, personality, peer FROM ${sql(table)} WHERE host = ${host} AND personality = ${personality}`.pipe(
        Effect.mapError(failed("read", file(personality)))
      )

    const get = (personality: string) =>
      Effect.flatMap(select(personality), (rows): Effect.Effect<Peer, CapabilityError | InvalidFile> =>
        rows[0] === undefined
          ? Effect.fail(new CapabilityError({ reason: "UnknownPeer", personality, file: file(personality) }))
          : decode(rows[0]))

    const exists = (personality: string) => Effect.map(select(personality), (rows) => rows.length > 0)

    const put = (peer: Peer) =>
      encode(peer).pipe(
        Effect.mapError((e) =>
          new StateRootError({ reason: "StateError", operation: "encode", path: file(peer.personality), detail: e.message, cause: e })
        ),
        Effect.flatMap((text) =>
          sql`INSERT INTO ${sql(table)} (host, personality, peer) VALUES (${host}, ${peer.personality}, ${text})
            ON CONFLICT (host, personality) DO UPDATE SET peer = excluded.peer`.pipe(
            Effect.mapError(failed("write", file(peer.personality)))
          )
        ),
        Effect.asVoid
      )

    // The private folders first, the row last, as the file store does with its file: a purge a
    // crash cut is done again while the row is there (PeerJoints.ts, removePeer).
    const purge = (personality: string) =>
      Effect.zipRight(
        dirs.purgeAll(personality),
        sql`DELETE FROM ${sql(table)} WHERE host = ${host} AND personality = ${personality}`.pipe(
          Effect.asVoid,
          Effect.mapError(failed("delete", file(personality)))
        )
      )

    const scan = sql<Row>`SELECT host, personality, peer FROM ${sql(table)} WHERE host = ${host}`.pipe(
      Effect.mapError(failed("list", `${table} (${host})`)),
      Effect.flatMap((rows) => scanRows(rows, (_, peer) => peer))
    )

    return { get, exists, put, purge, purgeRuntime: dirs.purgeRuntime, file, scan } satisfies Peers["Type"]
  })
