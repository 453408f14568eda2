/**
 * Endpoints as entities (docs/cluster.md, "Endpoints as entities"): the handlers on an in-memory
 * cluster (the memory message storage deduplicates by primary key as the SQL one does), then three
 * host runners over one SQLite file in one process, reached over loopback TCP: 200 endpoints spread
 * over them, resends deduplicated, a closed runner's shards taken over, nothing left unprocessed.
 *
 * `memoryCluster` is `TestRunner.layer`'s own composition with one change: the host's shard group
 * is assigned. `TestRunner.layer` provides ShardingConfig's defaults, whose only group is
 * `default`, and an endpoint's group is its host, so on it a Reload waits forever (tried: a 3 s
 * timeout expires).
 */
import { describe, expect, it } from "@effect/vitest"
import * as MessageStorage from "@effect/cluster/MessageStorage"
import * as RunnerHealth from "@effect/cluster/RunnerHealth"
import * as Runners from "@effect/cluster/Runners"
import * as RunnerStorage from "@effect/cluster/RunnerStorage"
import * as Sharding from "@effect/cluster/Sharding"
import * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as FileSystem from "@effect/platform/FileSystem"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import * as ClusterRunner from "../../src/services/cluster/ClusterRunner.ts"
import { EndpointEntity, entityIdOf } from "../../src/services/cluster/EndpointEntity.ts"
import type { FleetEndpoint } from "../../src/services/cluster/FleetCalls.ts"
import { HostWork } from "../../src/services/cluster/HostWork.ts"
// The handlers alone (the runner layer includes them, with a socket transport).
import { handlers as ClusterRunnerHandlers } from "../../src/services/cluster/internal/endpointHandlers.ts"
import type { EndpointKey } from "../../src/services/live/OwedRecords.ts"
import { freePort } from "../support/freePort.ts"

/** A host's work that records which runner drained which endpoint, and can hold a drain. */
const recorder = (runner: string, seen: Ref.Ref<ReadonlyArray<readonly [string, string]>>, hold?: Deferred.Deferred<void>) =>
  Layer.succeed(HostWork, {
    drain: (key: EndpointKey) =>
      Ref.update(seen, (all) => [...all, [runner, `${key.runtime}/${key.personality}`] as const]).pipe(
        Effect.zipRight(hold === undefined ? Effect.void : Deferred.await(hold)),
        Effect.as({ state: "applied" as const })
      ),
    provision: (key, call) =>
      Effect.succeed({
        capability: call.capability,
        personality: key.personality,
        runtime: key.runtime,
        occasion: call.verb === "unregister" ? "off-all" as const : "sweep-on" as const,
        state: "ok" as const,
        ms: 1
      })
  })

const memoryCluster = Sharding.layer.pipe(
  Layer.provideMerge(Runners.layerNoop),
  Layer.provideMerge(MessageStorage.layerMemory),
  Layer.provide([RunnerStorage.layerMemory, RunnerHealth.layerNoop]),
  Layer.provide(ShardingConfig.layer({ availableShardGroups: ["web-01"], assignedShardGroups: ["web-01"] }))
)

const alice: FleetEndpoint = { host: "web-01", runtime: "claude", personality: "alice" }

describe("the endpoint entity, in memory", () => {
  it.scopedLive("a Reload drains the endpoint on its host; a resend with the same id runs once; a Provision answers the outcome", () =>
    Effect.gen(function*() {
      const seen = yield* Ref.make<ReadonlyArray<readonly [string, string]>>([])
      const context = yield* Layer.build(
        Layer.provideMerge(ClusterRunnerHandlers, memoryCluster).pipe(Layer.provide(recorder("only", seen)))
      )
      const client = yield* EndpointEntity.client.pipe(Effect.provide(context))
      const endpoint = client(entityIdOf(alice))
      expect(yield* endpoint.Reload({ id: "r-1", reason: "sync" })).toEqual({ state: "applied" })
      expect(yield* endpoint.Reload({ id: "r-1", reason: "sync" })).toEqual({ state: "applied" })
      expect(yield* Ref.get(seen)).toEqual([["only", "claude/alice"]])
      yield* endpoint.Reload({ id: "r-2", reason: "sync" })
      expect((yield* Ref.get(seen)).length).toBe(2)
      const outcome = yield* endpoint.Provision({ verb: "sync", capability: "scribe", revision: "3" })
      expect(outcome).toMatchObject({ capability: "scribe", personality: "alice", runtime: "claude", state: "ok" })
    }))
})

describe("three host runners over one SQLite file", () => {
  it.live("200 endpoints spread, resends deduplicated, a closed runner's shards taken over, nothing left unprocessed", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const sqlite = yield* Layer.build(SqliteClient.layer({ filename: `${dir}/fleet.db` }))
      const seen = yield* Ref.make<ReadonlyArray<readonly [string, string]>>([])
      const runners: Array<Scope.CloseableScope> = []
      for (const name of ["r1", "r2", "r3"]) {
        const port = yield* freePort
        const scope = yield* Scope.make()
        runners.push(scope)
        yield* Layer.buildWithScope(
          ClusterRunner.layer({
            host: "web-01",
            address: { host: "127.0.0.1", port },
            
            lockExpiration: "6 seconds",
            healthCheckInterval: "1 second"
          }).pipe(Layer.provide(recorder(name, seen)), Layer.provide(Layer.succeedContext(sqlite))),
          scope
        )
      }
      const client = yield* Layer.build(ClusterRunner.clientLayer.pipe(Layer.provide(Layer.succeedContext(sqlite))))
      const send = yield* EndpointEntity.client.pipe(Effect.provide(client))
      const endpoints = Array.from({ length: 200 }, (_, i): FleetEndpoint => ({ ...alice, personality: `p${i}` }))
      const sendAll = (round: string) =>
        Effect.forEach(endpoints, (e) => send(entityIdOf(e)).Reload({ id: `${round}-${e.personality}`, reason: round }), {
          concurrency: 20
        })

      yield* sendAll("one")
      const first = yield* Ref.get(seen)
      expect(first).toHaveLength(200)
      const byRunner = new Set(first.map(([runner]) => runner))
      expect(byRunner.size).toBeGreaterThanOrEqual(2)

      // The same ids again: deduplicated, nothing runs.
      yield* sendAll("one")
      expect(yield* Ref.get(seen)).toHaveLength(200)

      // r2 stops: its shards are released and taken by r1 and r3.
      yield* Scope.close(runners[1]!, Exit.void)
      yield* sendAll("two")
      const second = (yield* Ref.get(seen)).slice(200)
      expect(second).toHaveLength(200)
      expect(second.every(([runner]) => runner !== "r2")).toBe(true)

      const sql = yield* Effect.provide(SqlClient.SqlClient, sqlite)
      const unprocessed = yield* sql<{ readonly n: number }>`SELECT COUNT(*) AS n FROM ${
        sql(`${ClusterRunner.tablePrefix}_messages`)
      } WHERE processed = 0`
      expect(Number(unprocessed[0]!.n)).toBe(0)
      for (const scope of [runners[0]!, runners[2]!]) yield* Scope.close(scope, Exit.void)
    }).pipe(Effect.scoped, Effect.provide(NodeFileSystem.layer)), { timeout: 120_000 })
})
