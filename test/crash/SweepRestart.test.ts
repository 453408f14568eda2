/**
 * A sweep survives the death of the runner running it (docs/cluster.md, "Sweeps across hosts"):
 * on `@effect/cluster`'s workflow engine over a message store both runners share, a runner closed
 * mid-sweep leaves the calls that answered recorded; the next runner resumes the sweep and calls
 * again only the endpoints that had not answered.
 */
import { expect, it } from "@effect/vitest"
import * as ClusterWorkflowEngine from "@effect/cluster/ClusterWorkflowEngine"
import * as MessageStorage from "@effect/cluster/MessageStorage"
import * as RunnerHealth from "@effect/cluster/RunnerHealth"
import * as Runners from "@effect/cluster/Runners"
import * as RunnerStorage from "@effect/cluster/RunnerStorage"
import * as Sharding from "@effect/cluster/Sharding"
import * as ShardingConfig from "@effect/cluster/ShardingConfig"
import { fleetGroup } from "../../src/services/cluster/internal/runnerDefaults.ts"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import type { EndpointOutcome } from "../../src/schema/Outcome.ts"
import { FleetCalls, type FleetEndpoint } from "../../src/services/cluster/FleetCalls.ts"
import * as Sweep from "../../src/services/cluster/Sweep.ts"

const endpoints: ReadonlyArray<FleetEndpoint> = ["web-01", "web-02", "web-03"].flatMap((host) => [
  { host, runtime: "claude", personality: "alice" },
  { host, runtime: "codex", personality: "bob" }
])
const idOf = (e: FleetEndpoint) => `${e.host}/${e.runtime}/${e.personality}`

it.scopedLive("a runner closed mid-sweep: the next runner resumes it and calls only the endpoints that had not answered", () =>
  Effect.gen(function*() {
    const calls = yield* Ref.make<ReadonlyArray<string>>([])
    const listings = yield* Ref.make(0)
    const answered = yield* Ref.make(0)
    const fourAnswered = yield* Deferred.make<void>()
    const web02Answers = yield* Ref.make(false)
    const fleet = FleetCalls.of({
      endpoints: () => Effect.as(Ref.update(listings, (n) => n + 1), { endpoints, invalid: [] }),
      call: (endpoint, request) =>
        Effect.gen(function*() {
          yield* Ref.update(calls, (all) => [...all, idOf(endpoint)])
          if (endpoint.host === "web-02" && !(yield* Ref.get(web02Answers))) return yield* Effect.never
          const n = yield* Ref.updateAndGet(answered, (k) => k + 1)
          if (n === 4) yield* Deferred.succeed(fourAnswered, undefined)
          const outcome: EndpointOutcome = {
            capability: request.capability,
            personality: endpoint.personality,
            runtime: endpoint.runtime,
            occasion: "sweep-on",
            state: "ok",
            ms: 1
          }
          return outcome
        })
    })
    // What both runners share: the message store (the database, in the cluster).
    const shared = yield* Layer.build(MessageStorage.MemoryDriver.Default)
    const runner = Sweep.layer({ callTimeout: "1 hour" }).pipe(
      Layer.provideMerge(ClusterWorkflowEngine.layer),
      Layer.provide(Layer.succeed(FleetCalls, fleet)),
      Layer.provideMerge(Sharding.layer),
      Layer.provide(Runners.layerNoop),
      Layer.provide(Layer.effect(MessageStorage.MessageStorage, Effect.map(MessageStorage.MemoryDriver, (d) => d.storage))),
      Layer.provide([RunnerStorage.layerMemory, RunnerHealth.layerNoop]),
      Layer.provide(ShardingConfig.layer({
        // The sweeps' shard group, as a host's runner serves it (`fleetGroup`).
        availableShardGroups: ["default", fleetGroup],
        assignedShardGroups: ["default", fleetGroup],
        entityMessagePollInterval: "50 millis",
        entityTerminationTimeout: "100 millis"
      })),
      Layer.provide(Layer.succeedContext(shared))
    )
    const payload = { verb: "register", capability: "search", revision: "1" } as const

    const first = yield* Scope.make()
    const engine1 = yield* Layer.buildWithScope(runner, first)
    yield* Sweep.CapabilitySweep.execute(payload, { discard: true }).pipe(Effect.provide(engine1))
    yield* Deferred.await(fourAnswered)
    yield* Scope.close(first, Exit.void)
    const beforeRestart = yield* Ref.get(calls)
    expect(beforeRestart.length).toBe(6)

    yield* Ref.set(web02Answers, true)
    const report = yield* Sweep.run(payload).pipe(Effect.provide(runner), Effect.scoped)
    expect(report.verdict).toBe("ok")
    const all = yield* Ref.get(calls)
    expect(all.slice(6).sort()).toEqual(["web-02/claude/alice", "web-02/codex/bob"])
    expect(yield* Ref.get(listings)).toBe(1)
    expect(report.outcomes.map((o) => `${o.host}/${o.runtime}/${o.personality}:${o.state}`)).toEqual(
      endpoints.map((e) => `${idOf(e)}:ok`)
    )
  }), 30_000)
