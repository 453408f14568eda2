/**
 * Endpoints as entities (docs/cluster.md, "Endpoints as entities"): the handler on an in-memory
 * cluster, then three host runners over one SQLite file in one process, reached over loopback TCP:
 * 200 endpoints' `Provision`s spread over them, a closed runner's shards taken over.
 *
 * `memoryCluster` is `TestRunner.layer`'s own composition with one change: the host's shard group
 * is assigned. `TestRunner.layer` provides ShardingConfig's defaults, whose only group is
 * `default`, and an endpoint's group is its host, so on it a message waits forever (tried: a 3 s
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
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as ClusterRunner from "../../../src/services/cluster/ClusterRunner.ts"
import { EndpointEntity, entityIdOf } from "../../../src/services/cluster/EndpointEntity.ts"
import type { FleetEndpoint } from "../../../src/services/cluster/FleetCalls.ts"
import { HostWork } from "../../../src/services/cluster/HostWork.ts"
// The handlers alone (the runner layer includes them, with a socket transport).
import { handlers as ClusterRunnerHandlers } from "../../../src/services/cluster/internal/endpointHandlers.ts"
import { freePort } from "../../support/freePort.ts"

/** A host's work that records which runner provisioned which endpoint, and answers `ok`. */
const recorder = (runner: string, seen: Ref.Ref<ReadonlyArray<readonly [string, string]>>) =>
  Layer.succeed(HostWork, {
    provision: (key, call) =>
      Ref.update(seen, (all) => [...all, [runner, `${key.runtime}/${key.personality}`] as const]).pipe(
        Effect.as({
          capability: call.capability,
          personality: key.personality,
          runtime: key.runtime,
          occasion: call.verb === "unregister" ? "off-all" as const : "sweep-on" as const,
          state: "ok" as const,
          ms: 1
        })
      )
  })

const memoryCluster = Sharding.layer.pipe(
  Layer.provideMerge(Runners.layerNoop),
  Layer.provideMerge(MessageStorage.layerMemory),
  Layer.provide([RunnerStorage.layerMemory, RunnerHealth.layerNoop]),
  Layer.provide(ShardingConfig.layer({ availableShardGroups: ["web-01"], assignedShardGroups: ["web-01"] }))
)

const alice: FleetEndpoint = { host: "web-01", runtime: "claude", personality: "alice" }

describe("the endpoint entity, in memory", () => {
  it.scopedLive("a Provision runs on the endpoint's host and answers the outcome it recorded", () =>
    Effect.gen(function*() {
      const seen = yield* Ref.make<ReadonlyArray<readonly [string, string]>>([])
      const context = yield* Layer.build(
        Layer.provideMerge(ClusterRunnerHandlers, memoryCluster).pipe(Layer.provide(recorder("only", seen)))
      )
      const client = yield* EndpointEntity.client.pipe(Effect.provide(context))
      const endpoint = client(entityIdOf(alice))
      const outcome = yield* endpoint.Provision({ verb: "sync", capability: "scribe", revision: "3" })
      expect(outcome).toMatchObject({ capability: "scribe", personality: "alice", runtime: "claude", state: "ok" })
      expect(yield* Ref.get(seen)).toEqual([["only", "claude/alice"]])
    }))
})

describe("three host runners over one SQLite file", () => {
  it.live("200 endpoints spread, a closed runner's shards taken over", () =>
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
      // A Provision is not persisted: one sent to a runner that has just stopped fails in its
      // transport (a defect of the socket: EPIPE), and it is sent again, as a caller would: at
      // most 40 tries, 250 ms apart, while the client learns the new owners (every 3 s).
      const sendAll = (round: string) =>
        Effect.forEach(endpoints, (e) =>
          send(entityIdOf(e)).Provision({ verb: "sync", capability: "scribe", revision: round }).pipe(
            Effect.sandbox,
            Effect.retry(Schedule.intersect(Schedule.recurs(40), Schedule.spaced("250 millis"))),
            Effect.unsandbox
          ), { concurrency: 20 })

      yield* sendAll("1")
      const first = yield* Ref.get(seen)
      expect(first).toHaveLength(200)
      const byRunner = new Set(first.map(([runner]) => runner))
      expect(byRunner.size).toBeGreaterThanOrEqual(2)

      // r2 stops: its shards are released and taken by r1 and r3.
      yield* Scope.close(runners[1]!, Exit.void)
      yield* sendAll("2")
      const second = (yield* Ref.get(seen)).slice(200)
      expect(new Set(second.map(([, endpoint]) => endpoint)).size).toBe(200)
      expect(second.every(([runner]) => runner !== "r2")).toBe(true)
      for (const scope of [runners[0]!, runners[2]!]) yield* Scope.close(scope, Exit.void)
    }).pipe(Effect.scoped, Effect.provide(NodeFileSystem.layer)), { timeout: 120_000 })
})
