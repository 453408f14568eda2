/**
 * A capability's sweep across hosts as a durable workflow (docs/cluster.md, "Sweeps across
 * hosts"), on `@effect/workflow`'s memory engine with a scripted `FleetCalls` (the endpoint
 * entities and SQL stores are the other half of the cluster mode): each endpoint called once, a
 * host that hangs or is unavailable makes its endpoints `failed` naming the host (after the call
 * timeout, driven by TestClock), the same sweep of the same revision runs once, a new revision
 * runs again. The engine's database failing (a defect of the engine's) is `ClusterUnavailable`; any
 * other defect stays one.
 *
 * The memory engine keeps its executions in the layer, so it cannot show a sweep surviving a
 * restart: test/crash/SweepRestart.test.ts shows that on the cluster engine.
 */
import { describe, expect, it } from "@effect/vitest"
import * as WorkflowEngine from "@effect/workflow/WorkflowEngine"
import { PersistenceError } from "@effect/cluster/ClusterError"
import { SqlError } from "@effect/sql/SqlError"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Exit from "effect/Exit"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as TestClock from "effect/TestClock"
import * as Faults from "../../../src/schema/Faults.ts"
import { InvalidFile } from "../../../src/schema/FileErrors.ts"
import type { EndpointOutcome } from "../../../src/schema/Outcome.ts"
import { FleetCalls, type FleetEndpoint, type FleetRequest } from "../../../src/services/cluster/FleetCalls.ts"
import { ClusterError } from "../../../src/schema/Live.ts"
import * as Sweep from "../../../src/services/cluster/Sweep.ts"

const hosts = ["web-01", "web-02", "web-03"]
const endpoints: ReadonlyArray<FleetEndpoint> = hosts.flatMap((host) => [
  { host, runtime: "claude", personality: "alice" },
  { host, runtime: "codex", personality: "bob" }
])
const idOf = (e: FleetEndpoint) => `${e.host}/${e.runtime}/${e.personality}`

interface Script {
  /** Hosts whose calls never answer. */
  readonly hang?: ReadonlyArray<string>
  /** Hosts the carrier cannot reach. */
  readonly unavailable?: ReadonlyArray<string>
  /** Hosts that run the call and record it failed. */
  readonly failing?: ReadonlyArray<string>
  /** Invalid files the listing meets. */
  readonly invalid?: ReadonlyArray<InvalidFile>
}

/** A scripted FleetCalls recording every call, and a wait for the first `n` calls to start. */
const scripted = (script: Script = {}) =>
  Effect.gen(function*() {
    const calls = yield* Ref.make<ReadonlyArray<{ readonly endpoint: string; readonly request: FleetRequest }>>([])
    const waiting = yield* Ref.make<ReadonlyArray<readonly [number, Deferred.Deferred<void>]>>([])
    const started = (n: number) =>
      Effect.gen(function*() {
        const done = yield* Deferred.make<void>()
        yield* Ref.update(waiting, (all) => [...all, [n, done] as const])
        if ((yield* Ref.get(calls)).length >= n) yield* Deferred.succeed(done, undefined)
        yield* Deferred.await(done)
      })
    const fleet = FleetCalls.of({
      endpoints: () => Effect.succeed({ endpoints, invalid: script.invalid ?? [] }),
      call: (endpoint, request) =>
        Effect.gen(function*() {
          const now = yield* Ref.updateAndGet(calls, (all) => [...all, { endpoint: idOf(endpoint), request }])
          for (const [n, done] of yield* Ref.get(waiting)) {
            if (now.length >= n) yield* Deferred.succeed(done, undefined)
          }
          if (script.hang?.includes(endpoint.host)) return yield* Effect.never
          if (script.unavailable?.includes(endpoint.host)) {
            return yield* new ClusterError({ reason: "HostUnavailable", host: endpoint.host, detail: "no runner serves its shard group" })
          }
          const failed = script.failing?.includes(endpoint.host) === true
          const outcome: EndpointOutcome = {
            capability: request.capability,
            personality: endpoint.personality,
            runtime: endpoint.runtime,
            occasion: request.verb === "unregister" ? "off-all" : "sweep-on",
            state: failed ? "failed" : "ok",
            ms: 5,
            ...(failed ? { exit: 3, detail: "provision: disk full" } : {})
          }
          return outcome
        })
    })
    return { calls, started, layer: Layer.succeed(FleetCalls, fleet) }
  })

const engine = (fleet: Layer.Layer<FleetCalls>, settings?: Sweep.SweepSettings) =>
  Sweep.layer(settings).pipe(Layer.provideMerge(WorkflowEngine.layerMemory), Layer.provide(fleet))

const register = { verb: "register", capability: "search", revision: "7" } as const

describe("Sweep", () => {
  it.effect("every host answers: each endpoint called once, its outcome with its host, verdict ok", () =>
    Effect.gen(function*() {
      const fake = yield* scripted()
      const report = yield* Sweep.run(register).pipe(Effect.provide(engine(fake.layer)))
      expect(report.verdict).toBe("ok")
      expect(report.outcomes.map((o) => `${o.host}/${o.runtime}/${o.personality}:${o.state}`)).toEqual(
        endpoints.map((e) => `${idOf(e)}:ok`)
      )
      const calls = yield* Ref.get(fake.calls)
      expect(calls.map((c) => c.endpoint).sort()).toEqual(endpoints.map(idOf).sort())
      expect(calls.every((c) => c.request.verb === "register" && c.request.revision === "7")).toBe(true)
    }))

  it.effect("a host that never answers: its endpoints failed after the 60 s call timeout, naming the host; the others ok; verdict failed", () =>
    Effect.gen(function*() {
      const fake = yield* scripted({ hang: ["web-02"] })
      yield* Effect.gen(function*() {
        const fiber = yield* Effect.fork(Sweep.run(register))
        yield* fake.started(endpoints.length)
        yield* TestClock.adjust("59 seconds")
        expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
        yield* TestClock.adjust("1 second")
        const report = yield* Fiber.join(fiber)
        expect(report.verdict).toBe("failed")
        for (const o of report.outcomes) {
          if (o.host === "web-02") {
            expect(o.state).toBe("failed")
            expect(o.occasion).toBe("sweep-on")
            expect(o.ms).toBe(60_000)
            expect(o.detail).toMatch(/^host web-02 did not answer within 60000 ms \(the sweep's callTimeout\)/)
          } else {
            expect(o.state).toBe("ok")
          }
        }
        expect(report.outcomes.filter((o) => o.state === "failed")).toHaveLength(2)
      }).pipe(Effect.provide(engine(fake.layer)))
    }))

  it.effect("the call timeout is a setting: 5 s", () =>
    Effect.gen(function*() {
      const fake = yield* scripted({ hang: ["web-01", "web-02", "web-03"] })
      yield* Effect.gen(function*() {
        const fiber = yield* Effect.fork(Sweep.run(register))
        yield* fake.started(endpoints.length)
        yield* TestClock.adjust("5 seconds")
        const report = yield* Fiber.join(fiber)
        expect(report.outcomes.map((o) => o.detail)).toEqual(
          endpoints.map((e) => expect.stringContaining(`host ${e.host} did not answer within 5000 ms`))
        )
      }).pipe(Effect.provide(engine(fake.layer, { callTimeout: "5 seconds" })))
    }))

  it.effect("at most `concurrency` calls at once, each endpoint its own activity (none answered from another's record)", () =>
    Effect.gen(function*() {
      const fake = yield* scripted({ hang: ["web-01", "web-02", "web-03"] })
      const startedCount = Effect.map(Ref.get(fake.calls), (calls) => calls.length)
      yield* Effect.gen(function*() {
        const fiber = yield* Effect.fork(Sweep.run(register))
        for (const round of [2, 4, 6]) {
          yield* fake.started(round)
          expect(yield* startedCount).toBe(round)
          yield* TestClock.adjust("5 seconds")
        }
        const report = yield* Fiber.join(fiber)
        expect(report.outcomes.map((o) => `${o.host}/${o.runtime}/${o.personality}:${o.state}`)).toEqual(
          endpoints.map((e) => `${idOf(e)}:failed`)
        )
      }).pipe(Effect.provide(engine(fake.layer, { callTimeout: "5 seconds", concurrency: 2 })))
      expect((yield* Ref.get(fake.calls)).map((c) => c.endpoint)).toEqual(endpoints.map(idOf))
    }))

  it.effect("the same sweep of the same revision runs once: two callers at once and one after get its report", () =>
    Effect.gen(function*() {
      const fake = yield* scripted()
      const [first, second, third] = yield* Effect.gen(function*() {
        const [a, b] = yield* Effect.all([Sweep.run(register), Sweep.run(register)], { concurrency: "unbounded" })
        const c = yield* Sweep.run(register)
        return [a, b, c] as const
      }).pipe(Effect.provide(engine(fake.layer)))
      expect((yield* Ref.get(fake.calls)).length).toBe(endpoints.length)
      expect(second).toEqual(first)
      expect(third).toEqual(first)
    }))

  it.effect("a new revision, or another verb of the same revision, runs its calls again", () =>
    Effect.gen(function*() {
      const fake = yield* scripted()
      yield* Effect.gen(function*() {
        yield* Sweep.run(register)
        yield* Sweep.run({ ...register, revision: "8" })
        yield* Sweep.run({ ...register, verb: "sync", revision: "8" })
      }).pipe(Effect.provide(engine(fake.layer)))
      const calls = yield* Ref.get(fake.calls)
      expect(calls.map((c) => `${c.request.verb}/${c.request.revision}`)).toEqual([
        ...endpoints.map(() => "register/7"),
        ...endpoints.map(() => "register/8"),
        ...endpoints.map(() => "sync/8")
      ])
    }))

  it.effect("a host that cannot be reached (HostUnavailable): its endpoints failed at once, naming the host and why", () =>
    Effect.gen(function*() {
      const fake = yield* scripted({ unavailable: ["web-03"] })
      const report = yield* Sweep.run({ ...register, verb: "unregister" }).pipe(Effect.provide(engine(fake.layer)))
      expect(report.verdict).toBe("failed")
      expect(report.outcomes.filter((o) => o.host === "web-03")).toEqual([
        expect.objectContaining({
          state: "failed",
          occasion: "off-all",
          detail: "host web-03 unavailable: no runner serves its shard group"
        }),
        expect.objectContaining({ state: "failed", occasion: "off-all" })
      ])
      expect(report.outcomes.filter((o) => o.state === "ok")).toHaveLength(4)
    }))

  it.effect("a host that ran the call and recorded it failed: reported as the host recorded it, verdict failed", () =>
    Effect.gen(function*() {
      const fake = yield* scripted({ failing: ["web-01"] })
      const report = yield* Sweep.run(register).pipe(Effect.provide(engine(fake.layer)))
      expect(report.verdict).toBe("failed")
      expect(report.outcomes[0]).toEqual({
        host: "web-01",
        capability: "search",
        personality: "alice",
        runtime: "claude",
        occasion: "sweep-on",
        state: "failed",
        exit: 3,
        ms: 5,
        detail: "provision: disk full"
      })
    }))

  it.effect("a peer file the listing could not read fails the sweep (some endpoint was not attempted)", () =>
    Effect.gen(function*() {
      const unreadable = new InvalidFile({ reason: "PeerFile", file: "peers/carol.json", ...Faults.one("cwd", "is missing") })
      const fake = yield* scripted({ invalid: [unreadable] })
      const report = yield* Sweep.run(register).pipe(Effect.provide(engine(fake.layer)))
      expect(report.verdict).toBe("failed")
      expect(report.invalid).toEqual([unreadable])
      expect(report.outcomes.every((o) => o.state === "ok")).toBe(true)
    }))

  it.effect("settings and payloads out of range are refused, naming the setting or the field", () =>
    Effect.gen(function*() {
      const fake = yield* scripted()
      const timeout = yield* Effect.flip(Layer.build(engine(fake.layer, { callTimeout: 0 })).pipe(Effect.scoped))
      expect(timeout.message).toBe(
        "invalid sweep callTimeout 0 ms: must be at least 1 ms (how long a sweep waits for one host's answer; default 60000 ms)"
      )
      const concurrency = yield* Effect.flip(Layer.build(engine(fake.layer, { concurrency: 0 })).pipe(Effect.scoped))
      expect(concurrency.message).toMatch(/^invalid sweep concurrency 0: must be a whole number of at least 1/)
      const name = yield* Effect.flip(
        Sweep.run({ ...register, capability: "../x" }).pipe(Effect.provide(engine(fake.layer)))
      )
      expect(name).toMatchObject({ _tag: "CapabilityError", reason: "InvalidName" })
      expect(name.message).toMatch(/^invalid capability "\.\.\/x": must be/)
      expect((yield* Ref.get(fake.calls)).length).toBe(0)
    }))

  it.effect("the engine's database failing is ClusterUnavailable naming the sweep and why; any other defect stays a defect", () =>
    Effect.gen(function*() {
      // An engine whose every execution dies with `defect`, as the cluster engine dies with the
      // PersistenceError of a request it could not write.
      const dying = (defect: unknown) =>
        Layer.effect(
          WorkflowEngine.WorkflowEngine,
          Effect.map(WorkflowEngine.WorkflowEngine, (memory) => ({ ...memory, execute: () => Effect.die(defect) }))
        ).pipe(Layer.provide(WorkflowEngine.layerMemory))
      const lost = new SqlError({ message: "Connection error", cause: new Error("Connection terminated unexpectedly") })
      for (const defect of [new PersistenceError({ cause: lost }), lost]) {
        const error = yield* Effect.flip(Sweep.run(register).pipe(Effect.provide(dying(defect))))
        expect(error).toMatchObject({ _tag: "ClusterError", reason: "ClusterUnavailable" })
        expect(error.message).toBe(
          "the cluster cannot be used: the fleet's database failed during the sweep register/search/7 " +
            "(Connection error: Connection terminated unexpectedly); whether it started is not known: run it again once the database answers"
        )
      }
      // A bug stays a defect, and so does a database failure beside one.
      const bug = new TypeError("x is undefined")
      const exit = yield* Effect.exit(Sweep.run(register).pipe(Effect.provide(dying(bug))))
      const defectsOf = (exit: Exit.Exit<unknown, unknown>) => Exit.isFailure(exit) ? Chunk.toReadonlyArray(Cause.defects(exit.cause)) : []
      const named = (d: unknown) => d instanceof SqlError ? "lost" : d instanceof TypeError ? d.message : d
      expect(defectsOf(exit).map(named)).toEqual(["x is undefined"])
      const both = Layer.effect(
        WorkflowEngine.WorkflowEngine,
        Effect.map(WorkflowEngine.WorkflowEngine, (memory) => ({
          ...memory,
          execute: () => Effect.failCause(Cause.parallel(Cause.die(lost), Cause.die(bug)))
        }))
      ).pipe(Layer.provide(WorkflowEngine.layerMemory))
      const mixed = yield* Effect.exit(Sweep.run(register).pipe(Effect.provide(both)))
      expect(defectsOf(mixed).map(named)).toEqual(["lost", "x is undefined"])
    }))
})
