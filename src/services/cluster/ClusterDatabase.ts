/**
 * The fleet's shared database from its URL (docs/cluster.md, "Setup"): `postgres://…` or
 * `postgresql://…` through `@effect/sql-pg`, `sqlite:<file>` through `@effect/sql-sqlite-node`.
 * Each driver is an optional peer of the package, loaded only when its URL is given: a missing one
 * is a `ClusterUnavailable` saying which package to install.
 *
 * SQLite serves one process only (shared between processes it reports `database is locked`): a
 * host whose runner is alone, and tests. Several hosts need PostgreSQL.
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { ClusterError } from "../../schema/Live.ts"
import { oneLine } from "../../schema/OneLine.ts"

/**
 * A database the URL names.
 * @since 0.1.0
 * @category models
 */
export type Target =
  | { readonly _tag: "Pg"; readonly url: Redacted.Redacted<string> }
  | { readonly _tag: "Sqlite"; readonly filename: string }

/**
 * The database of a URL, or the rule it breaks (one line, the URL's password never in it).
 * @since 0.1.0
 * @category constructors
 */
export const parse = (url: string): Either.Either<Target, string> => {
  if (/^postgres(ql)?:\/\//.test(url)) return Either.right({ _tag: "Pg", url: Redacted.make(url) })
  if (url.startsWith("sqlite:") && url.length > "sqlite:".length) {
    return Either.right({ _tag: "Sqlite", filename: url.slice("sqlite:".length) })
  }
  return Either.left("must be postgres://[user[:password]@]host[:port]/database or sqlite:<file>")
}

const unavailable = (what: string) => (cause: unknown) =>
  new ClusterError({ reason: "ClusterUnavailable", detail: oneLine(`${what}: ${cause instanceof Error ? cause.message : String(cause)}`, 300) })

/**
 * The `SqlClient` of the database, its driver loaded now.
 * @since 0.1.0
 * @category layers
 */
export const layer = (target: Target): Layer.Layer<SqlClient.SqlClient, ClusterError> =>
  target._tag === "Pg"
    ? Layer.unwrapEffect(Effect.map(
      Effect.tryPromise({
        try: () => import("@effect/sql-pg/PgClient"),
        catch: unavailable("the PostgreSQL driver is not installed (npm install @effect/sql-pg@~0.53.0)")
      }),
      (PgClient) =>
        Layer.mapError(PgClient.layer({ url: target.url }), unavailable("the PostgreSQL database cannot be reached"))
    ))
    : Layer.unwrapEffect(Effect.map(
      Effect.tryPromise({
        try: () => import("@effect/sql-sqlite-node/SqliteClient"),
        catch: unavailable("the SQLite driver is not installed (npm install @effect/sql-sqlite-node@~0.53.0)")
      }),
      (SqliteClient) =>
        Layer.mapError(
          SqliteClient.layer({ filename: target.filename }),
          unavailable(`the SQLite database ${target.filename} cannot be opened`)
        )
    ))

/**
 * Whether the database answers (a `SELECT 1`).
 * @since 0.1.0
 * @category utils
 */
export const check: Effect.Effect<void, ClusterError, SqlClient.SqlClient> = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => Effect.asVoid(Effect.mapError(sql`SELECT 1`, unavailable("the database does not answer")))
)
