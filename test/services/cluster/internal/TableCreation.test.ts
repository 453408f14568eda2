/**
 * Table creation on an empty PostgreSQL database, one run at a time (docs/cluster.md, "Setup"):
 * hosts that start at once each create every table of the fleet (our migrations, and
 * `@effect/cluster`'s when its storage is built); PostgreSQL's `CREATE TABLE IF NOT EXISTS` run
 * by two sessions at once fails in one of them (`duplicate key … pg_type_typname_nsp_index`), so
 * each creation holds the fleet's table-creation lock. Here eight clients, each with a pool of its
 * own as a process would have, build everything that creates tables at the same moment, on each of
 * three fresh databases: all of them succeed. (Without the lock, most runs see some fail.)
 */
import { describe, expect, inject, it } from "@effect/vitest"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as ClusterRunner from "../../../../src/services/cluster/ClusterRunner.ts"
import * as FleetStatus from "../../../../src/services/cluster/FleetStatus.ts"
import * as Migrations from "../../../../src/services/cluster/Migrations.ts"
import { freshDatabase } from "../../../support/pgDatabase.ts"

describe("table creation on PostgreSQL", () => {
  it.scopedLive("eight clients creating every table of an empty database at once all succeed (three databases)", () =>
    Effect.forEach([1, 2, 3], () =>
      Effect.gen(function*() {
        const url = yield* freshDatabase(inject("postgresUrl"))
        const everything = Layer.mergeAll(ClusterRunner.clientLayer, FleetStatus.runners, Layer.effectDiscard(Migrations.migrate))
        const builds = yield* Effect.forEach(
          Array.from({ length: 8 }, () => PgClient.layer({ url: Redacted.make(url) })),
          (pg) => Effect.exit(Effect.scoped(Layer.build(everything.pipe(Layer.provide(pg))))),
          { concurrency: "unbounded" }
        )
        expect(builds.filter(Exit.isFailure).map(String)).toEqual([])
        // And the tables are all there.
        const tables = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql<{ readonly name: string }>`SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'`).pipe(
            Effect.provide(PgClient.layer({ url: Redacted.make(url) }))
          )
        expect(tables.map((t) => t.name)).toEqual(expect.arrayContaining([
          "city_cluster_locks",
          "city_cluster_messages",
          "city_cluster_replies",
          "city_cluster_runners",
          "city_hosts",
          "city_migrations",
          "city_owed_reloads"
        ]))
      }), { discard: true }), 60_000)
})
