/**
 * The retention of processed messages (docs/cluster.md, "Retention"), on SQLite and PostgreSQL
 * with a real runner:
 * `prune` deletes the processed messages made before its bound, with their replies, and nothing
 * else; a message not yet processed stays; a resend after its message was pruned runs again (the
 * horizon of deduplication).
 */
import { describe, expect, inject, it } from "@effect/vitest"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Redacted from "effect/Redacted"
import { freshDatabase } from "../../support/pgDatabase.ts"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as FileSystem from "@effect/platform/FileSystem"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as ClusterSchema from "@effect/cluster/ClusterSchema"
import * as Entity from "@effect/cluster/Entity"
import * as Rpc from "@effect/rpc/Rpc"
import * as Schema from "effect/Schema"
import * as ClusterRetention from "../../../src/services/cluster/ClusterRetention.ts"
import * as ClusterRunner from "../../../src/services/cluster/ClusterRunner.ts"
import { tablePrefix } from "../../../src/services/cluster/internal/runnerDefaults.ts"
import { HostWork } from "../../../src/services/cluster/HostWork.ts"
import { freePort } from "../../support/freePort.ts"

/**
 * A persisted message with a primary key, to an entity of host web-01's shard group: what retention
 * prunes. (The endpoint entity's one message, `Provision`, is not persisted.)
 */
const Note = Rpc.make("Note", { payload: { id: Schema.String }, primaryKey: ({ id }) => id }).annotate(ClusterSchema.Persisted, true)
const Probe = Entity.make("RetentionProbe", [Note]).annotate(ClusterSchema.ShardGroup, () => "web-01")

const databases = [
  {
    name: "SQLite",
    client: Effect.flatMap(FileSystem.FileSystem, (fs) => fs.makeTempDirectoryScoped()).pipe(
      Effect.map((dir): Layer.Layer<SqlClient.SqlClient> => Layer.orDie(SqliteClient.layer({ filename: `${dir}/fleet.db` })))
    )
  },
  {
    name: "PostgreSQL",
    client: Effect.map(
      freshDatabase(inject("postgresUrl")),
      (url): Layer.Layer<SqlClient.SqlClient> => Layer.orDie(PgClient.layer({ url: Redacted.make(url) }))
    )
  }
]

describe.each(databases)("on $name", (database) => {
it.live("prune deletes the processed messages before its bound with their replies; later ones stay; a resend after it runs again", () =>
  Effect.gen(function*() {
    const sqlite = yield* Layer.build(yield* database.client)
    const drained = yield* Ref.make(0)
    const work = Layer.succeed(HostWork, { provision: () => Effect.die("not used") })
    const probe = Probe.toLayer(Probe.of({ Note: () => Ref.update(drained, (n) => n + 1) }))
    const port = yield* freePort
    const runner = yield* Layer.build(
      ClusterRunner.layer({ host: "web-01", address: { host: "127.0.0.1", port } }).pipe(
        Layer.provide(work),
        Layer.provide(Layer.succeedContext(sqlite))
      )
    )
    yield* Layer.build(probe.pipe(Layer.provide(Layer.succeedContext(runner))))
    const client = yield* Layer.build(ClusterRunner.clientLayer.pipe(Layer.provide(Layer.succeedContext(sqlite))))
    const send = yield* Effect.provide(Probe.client, client)
    const endpoint = (i: number) => send(`p${i}`)
    yield* Effect.forEach([0, 1, 2, 3, 4], (i) => endpoint(i).Note({ id: "old" }))
    const bound = Date.now() + 1
    yield* Effect.sleep("5 millis")
    yield* Effect.forEach([5, 6], (i) => endpoint(i).Note({ id: "new" }))
    expect(yield* Ref.get(drained)).toBe(7)

    const sql = yield* Effect.provide(SqlClient.SqlClient, sqlite)
    const count = (table: string) =>
      Effect.map(sql<{ readonly n: number }>`SELECT COUNT(*) AS n FROM ${sql(`${tablePrefix}_${table}`)}`, (rows) =>
        Number(rows[0]!.n))
    const repliesBefore = yield* count("replies")
    expect(yield* ClusterRetention.prune(bound).pipe(Effect.provide(sqlite))).toBe(5)
    expect(yield* count("messages")).toBe(2)
    expect(yield* count("replies")).toBeLessThan(repliesBefore)
    expect(yield* ClusterRetention.prune(bound).pipe(Effect.provide(sqlite))).toBe(0)

    // Kept: a resend of a recent message is answered from it, nothing runs.
    yield* endpoint(5).Note({ id: "new" })
    expect(yield* Ref.get(drained)).toBe(7)
    // Pruned: a resend of an old one is a new message.
    yield* endpoint(0).Note({ id: "old" })
    expect(yield* Ref.get(drained)).toBe(8)
  }).pipe(Effect.scoped, Effect.provide(NodeFileSystem.layer)), { timeout: 60_000 })
})
