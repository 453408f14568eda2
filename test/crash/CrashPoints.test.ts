/**
 * Every crash point recovers (docs/design.md, "State and durability"): each scenario runs once to
 * count its mutating file-system calls, then once per call k on a fresh copy of its state root,
 * stopped after call k by the fault-injecting file system (FaultyFileSystem.ts), with and without
 * power loss. After each crash the root is recovered as the product does (a new process: fresh
 * services on the same folder, nothing of the dead one's memory) and checked against the
 * scenario's model: every document is its old or its new version (never torn, never missing, no
 * invalid file reported), and the root is usable (a write after it succeeds and reads back).
 *
 * Deterministic: the scenarios run under `TestClock` (`it.effect`; the property test provides
 * `TestContext`), so every timestamp written is the same in every run, and commands and endpoint
 * hosts are scripted; but the process journal's, which records a real `sleep` and waits for the
 * recovery to end it (live clock). A failure names the scenario, the crash
 * point (the call and its path) and the mode; `CITY_CRASH_POINT=<scenario>:<k>[:power]` runs that
 * one point alone. The property test's failure prints fast-check's seed and path;
 * `CITY_CRASH_SEED=<seed>` replays it.
 *
 * "Exactly once" (README, "Reliability"): an owed reload whose completion reached the disk is
 * never run again, a request that returned is never lost, and a reload cut between its run and
 * its completion's write is run again by the recovery (at least once, as the spec's idempotent
 * commands allow). The cut run and the recovery share this test's pid: a claim by the same pid is
 * taken over as a dead process's is (Reloads.ts), so the recovery sees what a daemon start sees.
 */
import { afterAll, describe, expect, it, vi } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as PlatformError from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as TestContext from "effect/TestContext"
import { type ChildProcess, spawn } from "node:child_process"
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Declaration } from "../../src/schema/Declaration.ts"
import { defaultHostConfig } from "../../src/schema/HostConfig.ts"
import type { Peer } from "../../src/schema/Peer.ts"
import * as Capabilities from "../../src/services/capabilities/Capabilities.ts"
import { CommandRunner } from "../../src/services/capabilities/CommandRunner.ts"
import * as EndpointCalls from "../../src/services/capabilities/EndpointCalls.ts"
import * as LifecycleLog from "../../src/services/capabilities/LifecycleLog.ts"
import * as EndpointRecords from "../../src/services/capabilities/EndpointRecords.ts"
import * as Peers from "../../src/services/capabilities/Peers.ts"
import * as ProcessIdentity from "../../src/services/capabilities/ProcessIdentity.ts"
import * as ProcessRecords from "../../src/services/capabilities/ProcessRecords.ts"
import * as Provisioner from "../../src/services/capabilities/Provisioner.ts"
import * as RootLock from "../../src/services/root/RootLock.ts"
import * as RestartRequests from "../../src/services/loader/RestartRequests.ts"
import * as CityRoot from "../../src/services/root/CityRoot.ts"
import * as Settings from "../../src/services/loader/Settings.ts"
import * as LiveApplication from "../../src/layers/LiveApplication.ts"
import { Applier } from "../../src/services/live/Applier.ts"
import { EndpointHost } from "../../src/services/live/EndpointHost.ts"
import * as Reloads from "../../src/services/owed/Reloads.ts"
import * as ScriptedHost from "../../src/services/live/ScriptedHost.ts"
import * as RuntimeProfiles from "../../src/services/capabilities/RuntimeProfiles.ts"
import * as StateRoot from "../../src/services/root/StateRoot.ts"
import { type FaultPlan, make as makeFaulty } from "./FaultyFileSystem.ts"
import { eventually } from "../fixtures.ts"

type Services =
  | StateRoot.StateRoot
  | RuntimeProfiles.RuntimeProfiles
  | Peers.Peers
  | Capabilities.Capabilities
  | EndpointRecords.EndpointRecords
  | LifecycleLog.LifecycleLog
  | EndpointCalls.EndpointCalls
  | ProcessRecords.ProcessRecords
  | Provisioner.Provisioner
  | RestartRequests.RestartRequests
  | FileSystem.FileSystem

/** The commands of the sweep scenario: bo's fails, the others succeed (no process is spawned). */
const scriptedRunner = Layer.succeed(CommandRunner, {
  run: (request) =>
    Effect.succeed(request.args.includes("bo") ? { state: "failed" as const, exit: 1, ms: 1, detail: "exit 1" } : { state: "ok" as const, exit: 0, ms: 1 })
})

/** The stores of one root on a given file system: what a `city` process builds at its start. */
const storesOn = (root: string, fs: FileSystem.FileSystem, records: ProcessRecords.ProcessRecordsOptions = {}): Layer.Layer<Services, unknown> => {
  const base = Layer.merge(Layer.succeed(FileSystem.FileSystem, fs), NodePath.layer)
  const state = StateRoot.layer({ root }).pipe(Layer.provideMerge(base))
  const host = Layer.merge(RuntimeProfiles.layer, ProcessRecords.layer(records)).pipe(Layer.provideMerge(state))
  // A small log, so that the scenarios rotate it (two old files kept).
  const log = LifecycleLog.layer({ maxBytes: 200, keep: 2 })
  const stores = Layer.mergeAll(Peers.layer, Capabilities.layer, EndpointRecords.layer, log, scriptedRunner, RestartRequests.layer).pipe(
    Layer.provideMerge(host)
  )
  return Provisioner.layer.pipe(Layer.provideMerge(EndpointCalls.layer.pipe(Layer.provideMerge(stores))), Layer.provideMerge(base))
}

const realFs = Effect.runSync(Effect.provide(FileSystem.FileSystem, NodeFileSystem.layer))

/** A scenario: a state root made by `setup`, an `act` that crash points cut, a `check` after recovery. */
interface Scenario<R = Services> {
  readonly name: string
  readonly setup: Effect.Effect<void, unknown, R>
  readonly act: Effect.Effect<void, unknown, R>
  /** What the operator runs after the crash (`city capability sync`, `peer remove` again); default none. */
  readonly repair?: Effect.Effect<void, unknown, R>
  /** On the recovered root: the model's check (throws, or fails, when it does not hold). */
  readonly check: Effect.Effect<void, unknown, R>
  /** Whether a power loss applies (default true; not where the machine's crash ends what is checked). */
  readonly powerLoss?: boolean
}

const peer = (personality: string, cwd: string): Peer => ({
  schema: 1,
  personality,
  cwd,
  runtimes: ["claude"],
  default_runtime: "claude"
}) as Peer

const declaration = (version: string, runtimes: ReadonlyArray<string> = ["claude"]): Declaration => ({
  schema: 1,
  capability: "notes",
  version,
  runtimes,
  provision: { command: "/bin/true", args: ["provision", "{personality}"] },
  unprovision: { command: "/bin/true", args: ["unprovision", "{personality}"] }
}) as unknown as Declaration

/** The peers store holds exactly one of `allowed` for `name` (`undefined`: no file), and no invalid file. */
const peerIsOneOf = (name: string, allowed: ReadonlyArray<string | undefined>) =>
  Effect.gen(function*() {
    const peers = yield* Peers.Peers
    const scan = yield* peers.scan
    expect(scan.invalid.map((e) => e.message)).toEqual([])
    const found = scan.valid.find((p) => p.personality === name)
    expect(allowed).toContain(found?.cwd)
  })

/** The root is usable: a new write goes through and reads back. */
const usable = Effect.gen(function*() {
  const peers = yield* Peers.Peers
  yield* peers.put(peer("after", "/after"))
  expect((yield* peers.get("after")).cwd).toBe("/after")
})

const scenarios: ReadonlyArray<Scenario> = [
  {
    name: "a peer file rewritten (peer default-runtime, add-runtime)",
    setup: Effect.flatMap(Peers.Peers, (peers) => peers.put(peer("ann", "/old"))),
    act: Effect.flatMap(Peers.Peers, (peers) => peers.put(peer("ann", "/new"))),
    check: peerIsOneOf("ann", ["/old", "/new"])
  },
  {
    name: "peer create, then peer remove",
    setup: Effect.void,
    act: Effect.flatMap(Peers.Peers, (peers) => Effect.zipRight(peers.put(peer("bo", "/bo")), peers.purge("bo"))),
    check: peerIsOneOf("bo", [undefined, "/bo"])
  },
  {
    name: "register over an older version of the declaration",
    setup: Effect.flatMap(Capabilities.Capabilities, (c) => c.store(declaration("1.0.0"))),
    act: Effect.flatMap(Capabilities.Capabilities, (c) => c.store(declaration("2.0.0"))),
    check: Effect.gen(function*() {
      const scan = yield* (yield* Capabilities.Capabilities).scan
      expect(scan.invalid.map((e) => e.message)).toEqual([])
      expect(scan.valid.map((d) => d.version)).toSatisfy((v: ReadonlyArray<string>) => v.length === 1 && ["1.0.0", "2.0.0"].includes(v[0]!))
    })
  },
  {
    name: "a sweep with a failure: each call recorded as it ends, then logged (EndpointCalls)",
    setup: Effect.void,
    act: Effect.gen(function*() {
      const calls = yield* EndpointCalls.EndpointCalls
      const profiles = yield* RuntimeProfiles.RuntimeProfiles
      const peers = ["ann", "bo", "cy"].map((name) => peer(name, `/${name}`))
      yield* calls.run(EndpointCalls.endpointsOf(declaration("1.0.0"), peers, profiles.isAgent), "sweep-on", { concurrency: 1 })
    }),
    check: Effect.gen(function*() {
      const got = yield* (yield* EndpointRecords.EndpointRecords).get("notes")
      expect(Option.getOrUndefined(Option.map(got.invalid, (e) => e.message))).toBeUndefined()
      const recorded = got.endpoints.map((e) => e.personality)
      // A prefix of the calls, in order, with their outcomes.
      expect([[], ["ann"], ["ann", "bo"], ["ann", "bo", "cy"]]).toContainEqual(recorded)
      expect(got.endpoints.map((e) => e.record.state)).toEqual(["ok", "failed", "ok"].slice(0, recorded.length))
      // The log and the records agree: every logged call is recorded (a record may lack its line).
      const state = yield* StateRoot.StateRoot
      const log = Option.getOrElse(yield* Effect.orElseSucceed(state.readText(CityRoot.layout.lifecycleLog), () => Option.none<string>()), () => "")
      const logged = log.split("\n").filter((l) => l !== "").map((l) => /identity=claude-(\w+)/.exec(l)?.[1])
      expect(logged.every((name) => name !== undefined && recorded.includes(name))).toBe(true)
    })
  },
  {
    name: "the lifecycle log appended across rotations",
    setup: Effect.void,
    act: Effect.gen(function*() {
      const log = yield* LifecycleLog.LifecycleLog
      for (let n = 0; n < 12; n++) {
        yield* log.enqueue([["ev", "test"], ["n", n], ["detail", "a line of the log"]])
        if (n % 3 === 2) yield* log.write
      }
      yield* log.flush
    }),
    check: Effect.gen(function*() {
      const state = yield* StateRoot.StateRoot
      const read = (file: string) =>
        Effect.map(Effect.orElseSucceed(state.readText(file), () => Option.none<string>()), Option.getOrElse(() => ""))
      const text = [
        yield* read(`${CityRoot.layout.lifecycleLog}.2`),
        yield* read(`${CityRoot.layout.lifecycleLog}.1`),
        yield* read(CityRoot.layout.lifecycleLog)
      ].join("")
      const lines = text.split("\n").filter((l) => l !== "")
      // Every line whole, and the lines kept a run of consecutive ones: a crash loses the newest
      // (and rotation the oldest beyond `keep`), never one in between, never one twice.
      const ns = lines.map((l) => Number(/^ev=test n=(\d+) detail="a line of the log"$/.exec(l)?.[1] ?? Number.NaN))
      expect(ns.every(Number.isInteger), lines.join("\n")).toBe(true)
      expect(ns.every((n, i) => i === 0 || n === ns[i - 1]! + 1), ns.join(",")).toBe(true)
    })
  }
]

/**
 * The root lock a crashed `city` left is stale after 10 s without a refresh (RootLock.ts): the
 * recovery is that later, so the lock folder's time is set 30 s back.
 */
const tenSecondsLater = (root: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => {
    const past = new Date(Date.now() - 30_000)
    return Effect.ignore(fs.utimes(join(root, ".lock"), past, past))
  })

/** A declaration file outside every root, for `register`. */
const declarationFile = (() => {
  const dir = mkdtempSync(join(tmpdir(), "city-crash-declaration-"))
  const file = join(dir, "notes.json")
  writeFileSync(file, JSON.stringify(declaration("2.0.0")))
  return file
})()

/** The records of `notes`, by personality, and the personalities the log names. */
const recordsAndLog = Effect.gen(function*() {
  const got = yield* (yield* EndpointRecords.EndpointRecords).get("notes")
  expect(Option.getOrUndefined(Option.map(got.invalid, (e) => e.message))).toBeUndefined()
  const state = yield* StateRoot.StateRoot
  const log = Option.getOrElse(yield* Effect.orElseSucceed(state.readText(CityRoot.layout.lifecycleLog), () => Option.none<string>()), () => "")
  const logged = log.split("\n").filter((l) => l !== "").map((l) => /identity=claude-(\w+)/.exec(l)?.[1] ?? "?")
  return { records: new Map(got.endpoints.map((e) => [e.personality, e.record.state])), logged }
})

/** `notes` for claude and codex, and a peer `name` with both, provisioned. */
const twoRuntimes = (name: string) =>
  Effect.gen(function*() {
    yield* (yield* Capabilities.Capabilities).store(declaration("1.0.0", ["claude", "codex"]))
    yield* (yield* Peers.Peers).put({ ...peer(name, tmpdir()), runtimes: ["claude", "codex"] } as Peer)
    yield* (yield* EndpointRecords.EndpointRecords).record(
      ["claude", "codex"].map((runtime) => ({ capability: "notes", personality: name, runtime, occasion: "birth", state: "ok", exit: 0, ms: 1 })),
      "2026-12-02T00:00:00.000Z"
    )
  })

const jointScenarios: ReadonlyArray<Scenario> = [
  {
    name: "register a capability over three peers, one failing, then the repair (capability sync)",
    setup: Effect.flatMap(Peers.Peers, (peers) => Effect.forEach(["ann", "bo", "cy"], (name) => peers.put(peer(name, tmpdir())))),
    act: Effect.asVoid(Effect.flatMap(Provisioner.Provisioner, (p) => p.register(declarationFile))),
    repair: Effect.gen(function*() {
      const p = yield* Provisioner.Provisioner
      const stored = yield* Effect.either((yield* Capabilities.Capabilities).get("notes"))
      // The declaration stored: sync it; not stored: the register did not happen, run it again.
      yield* stored._tag === "Right" ? p.sync("notes") : p.register(declarationFile)
    }),
    check: Effect.gen(function*() {
      const { logged, records } = yield* recordsAndLog
      expect([...records]).toEqual([["ann", "ok"], ["bo", "failed"], ["cy", "ok"]])
      // The log and the records agree: every logged call is recorded.
      expect(logged.filter((name) => !records.has(name))).toEqual([])
    })
  },
  {
    name: "peer create, then peer remove, then the repair (peer remove again)",
    setup: Effect.flatMap(Capabilities.Capabilities, (c) => c.store(declaration("1.0.0"))),
    act: Effect.gen(function*() {
      const p = yield* Provisioner.Provisioner
      yield* p.createPeer({ personality: "dee", cwd: tmpdir(), runtimes: ["claude"] })
      yield* p.removePeer("dee")
    }),
    repair: Effect.gen(function*() {
      // What an operator does when `peer remove` was cut: runs it again, if the peer is still there.
      if (yield* (yield* Peers.Peers).exists("dee")) yield* (yield* Provisioner.Provisioner).removePeer("dee")
    }),
    check: Effect.gen(function*() {
      const { records } = yield* recordsAndLog
      expect((yield* (yield* Peers.Peers).scan).valid.map((p) => p.personality)).toEqual([])
      // No record is left of an endpoint whose peer is gone.
      expect([...records.keys()]).toEqual([])
    })
  },
  {
    name: "a plugin generation restart requested (city plugins reload), then completed by the daemon",
    setup: Effect.void,
    act: Effect.gen(function*() {
      const requests = yield* RestartRequests.RestartRequests
      const record = yield* requests.request("skills changed")
      yield* requests.complete(record.requested)
    }),
    // A daemon's start builds the generation from disk and completes what is owed.
    repair: Effect.gen(function*() {
      const requests = yield* RestartRequests.RestartRequests
      const found = yield* requests.get
      if (Option.isSome(found) && RestartRequests.isOwed(found.value)) yield* requests.complete(found.value.requested)
    }),
    check: Effect.gen(function*() {
      const text = yield* (yield* StateRoot.StateRoot).readText(RestartRequests.restartFile)
      // Never torn (`get` would read a torn record as one owed request: the text itself is read).
      const record = Option.map(text, (t) => JSON.parse(t) as { requested: number; applied: number })
      expect(Option.match(record, { onNone: () => "none", onSome: (r) => `${r.requested}/${r.applied}` })).toMatch(/^(none|1\/1)$/)
    })
  },
  {
    name: "remove-runtime of a peer's second runtime, then the repair (remove-runtime again)",
    setup: twoRuntimes("eve"),
    act: Effect.asVoid(Effect.flatMap(Provisioner.Provisioner, (p) => p.removeRuntime("eve", "codex"))),
    repair: Effect.gen(function*() {
      const eve = yield* (yield* Peers.Peers).get("eve")
      if (eve.runtimes.includes("codex")) yield* (yield* Provisioner.Provisioner).removeRuntime("eve", "codex")
    }),
    check: Effect.gen(function*() {
      const got = yield* (yield* EndpointRecords.EndpointRecords).get("notes")
      expect(got.endpoints.map((e) => `${e.personality} ${e.runtime}`)).toEqual(["eve claude"])
      expect((yield* (yield* Peers.Peers).get("eve")).runtimes).toEqual(["claude"])
    })
  }
]

/** Runs `effect` on a fresh copy of `template` with the plan; what the faulty file system saw. */
const runCut = <R = Services>(
  template: string,
  scenario: Scenario<R>,
  plan: FaultPlan,
  layerOf: (root: string, fs: FileSystem.FileSystem) => Layer.Layer<R, unknown>
) =>
  Effect.gen(function*() {
    const root = mkdtempSync(join(tmpdir(), "city-crash-"))
    cpSync(template, root, { recursive: true })
    const faulty = makeFaulty(realFs, plan)
    const exit = yield* Effect.exit(Effect.scoped(Effect.provide(scenario.act, layerOf(root, faulty.fs))))
    faulty.settle()
    return { root, exit, faulty }
  })

/** Recovers `root` as a new process would and checks the model; rethrows naming the crash point. */
const recoverAndCheck = <R = Services>(
  scenario: Scenario<R>,
  root: string,
  point: string,
  layerOf: (root: string, fs: FileSystem.FileSystem) => Layer.Layer<R, unknown>
) =>
  Effect.scoped(Effect.provide(
    Effect.zipRight(Effect.zipRight(Effect.zipRight(tenSecondsLater(root), scenario.repair ?? Effect.void), scenario.check), usable),
    layerOf(root, realFs)
  )).pipe(
    Effect.catchAllCause((cause) =>
      Effect.dieMessage(`crash point failed: scenario "${scenario.name}", ${point}\n${Cause.pretty(cause)}\nreplay: CITY_CRASH_POINT='${scenario.name}:${point}'`)
    ),
    Effect.provide(NodeFileSystem.layer),
    Effect.ensuring(Effect.sync(() => rmSync(root, { recursive: true, force: true })))
  )

/** The peer files alone (the property test's thousand runs): the root, the default host, the store. */
const peersOn = (root: string, fs: FileSystem.FileSystem): Layer.Layer<Peers.Peers | StateRoot.StateRoot, unknown> => {
  const base = Layer.merge(Layer.succeed(FileSystem.FileSystem, fs), NodePath.layer)
  const state = StateRoot.layer({ root }).pipe(Layer.provideMerge(base))
  return Peers.layer.pipe(Layer.provideMerge(Layer.succeed(RuntimeProfiles.RuntimeProfiles, RuntimeProfiles.fromConfig(defaultHostConfig))), Layer.provideMerge(state))
}

/** The scripted endpoint host of one process (a test double: it counts the reloads it ran). */
class Scripted extends Context.Tag("test/crash/Scripted")<Scripted, ScriptedHost.ScriptedShape>() {}

/** Every Scripted host built, in order: a crash point's check reads the cut run's and the recovery's. */
const hostsBuilt: Array<ScriptedHost.ScriptedShape> = []

type Live = Services | Scripted | EndpointHost | Applier | Reloads.Reloads

const ann = "claude-ann"
const annKey: Reloads.EndpointKey = { personality: "ann", runtime: "claude" }

/** The live services of a process (the daemon's owed-work applier) over a Scripted host where ann is idle. */
const liveOn = (root: string, fs: FileSystem.FileSystem): Layer.Layer<Live, unknown> => {
  const scripted = Layer.effect(
    Scripted,
    Effect.tap(ScriptedHost.make, (s) => Effect.zipRight(Effect.sync(() => hostsBuilt.push(s)), s.set(ann, "idle")))
  )
  const host = Layer.effect(EndpointHost, Effect.map(Scripted, (s) => s.host))
  return LiveApplication.services.pipe(
    Layer.provideMerge(host),
    Layer.provideMerge(scripted),
    Layer.provideMerge(storesOn(root, fs))
  )
}

/** What the cut run got back, and what the recovery found on disk: the model's inputs. */
const owedReload = { requestReturned: false, owedAtRecovery: false }

const liveScenarios: ReadonlyArray<Scenario<Live>> = [
  {
    name: "an owed reload requested during a Turn, applied at its boundary, then the daemon's start",
    setup: Effect.gen(function*() {
      yield* (yield* Capabilities.Capabilities).store(declaration("1.0.0"))
      yield* (yield* Peers.Peers).put(peer("ann", tmpdir()))
    }),
    act: Effect.gen(function*() {
      owedReload.requestReturned = false
      const s = yield* Scripted
      yield* s.beginTurn(ann)
      yield* (yield* Reloads.Reloads).request([annKey], "surfaces changed", "notes")
      owedReload.requestReturned = true
      // The daemon drains the endpoint: the reload waits for the Turn's boundary.
      const drain = yield* Effect.fork((yield* Applier).drain(annKey))
      yield* s.endTurn(ann)
      yield* Fiber.join(drain)
    }),
    // A daemon start: its first pass claims every owed record, those a dead process claimed too.
    repair: Effect.gen(function*() {
      owedReload.owedAtRecovery = Option.exists(yield* (yield* Reloads.Reloads).get(annKey), Reloads.isOwed)
      yield* (yield* Applier).pass
    }),
    check: Effect.gen(function*() {
      const reloads = yield* Reloads.Reloads
      const cut = hostsBuilt.at(-2)!
      const recovered = hostsBuilt.at(-1)!
      expect(yield* reloads.invalid).toEqual([])
      // Nothing is owed any more, and nothing was lost: a request that returned was reloaded.
      expect(Option.exists(yield* reloads.get(annKey), Reloads.isOwed)).toBe(false)
      if (owedReload.requestReturned) expect(cut.reloads(ann) + recovered.reloads(ann)).toBeGreaterThanOrEqual(1)
      // Exactly once where the record says so: the recovery reloads only what the disk still owes
      // (a reload cut between its run and its completion's write is run again: at least once).
      expect(recovered.reloads(ann)).toBe(owedReload.owedAtRecovery ? 1 : 0)
      expect(cut.reloads(ann)).toBeLessThanOrEqual(1)
      // At the boundary: never while the Turn ran (the host's reload waits for endTurn).
      expect(cut.journal.filter((line) => line !== `reload ${ann}`)).toEqual([])
    })
  }
]

const fayCodex: Reloads.EndpointKey = { personality: "fay", runtime: "codex" }
/** Whether the cut run's removal request returned (then it is durable, and owed until applied). */
const owedRemoval = { requested: false }

/** remove-runtime of a busy endpoint: owed (pending), then applied at its Turn's boundary. */
const removalScenarios: ReadonlyArray<Scenario<Live>> = [
  {
    name: "remove-runtime of a busy endpoint: owed, applied at its Turn's boundary, then the daemon's start",
    setup: twoRuntimes("fay"),
    act: Effect.gen(function*() {
      const s = yield* Scripted
      owedRemoval.requested = false
      yield* s.beginTurn("codex-fay")
      // What `remove-runtime` records for a busy endpoint: the removal is owed (pending).
      yield* (yield* Reloads.Reloads).requestRemoval(fayCodex)
      owedRemoval.requested = true
      const drain = yield* Effect.fork((yield* Applier).drain(fayCodex))
      yield* s.endTurn("codex-fay")
      yield* Fiber.join(drain)
    }),
    repair: Effect.flatMap(Applier, (applier) => applier.pass),
    check: Effect.gen(function*() {
      const reloads = yield* Reloads.Reloads
      expect(yield* reloads.invalid).toEqual([])
      // Nothing owed any more; a removal that was requested is applied: the runtime is gone from
      // the peer and the records (one cut before the request was durable may leave it all as it was).
      expect(Option.isNone(yield* reloads.get(fayCodex))).toBe(true)
      const runtimes = (yield* (yield* Peers.Peers).get("fay")).runtimes
      const got = yield* (yield* EndpointRecords.EndpointRecords).get("notes")
      const recorded = got.endpoints.map((e) => `${e.personality} ${e.runtime}`)
      if (owedRemoval.requested || runtimes.length === 1) {
        expect(runtimes).toEqual(["claude"])
        expect(recorded).toEqual(["fay claude"])
      } else {
        expect(runtimes).toEqual(["claude", "codex"])
        expect(recorded).toEqual(["fay claude", "fay codex"])
      }
      // Retired at the boundary: never while its Turn ran.
      expect(hostsBuilt.at(-2)!.journal.filter((line) => line.startsWith("kill"))).toEqual([])
    })
  }
]

/** The text of `plugins.json` before and after the operator's edit. */
const settingsBefore = JSON.stringify({ enabled: ["alpha", "beta"], licensed: ["alpha"] }, null, 2)
const settingsAfter = JSON.stringify({ enabled: ["alpha", "beta", "gamma"], licensed: ["alpha", "gamma"] }, null, 2)

const settingsScenarios: ReadonlyArray<Scenario> = [
  {
    name: "plugins.json rewritten in place (an editor's save), then the operator's fix of a refused file",
    setup: Effect.flatMap(StateRoot.StateRoot, (state) =>
      Effect.flatMap(FileSystem.FileSystem, (fs) => fs.writeFileString(CityRoot.settingsFile(state.root), settingsBefore))),
    // An editor's save: the file truncated and written where it is in two writes, no temp file,
    // no fsync.
    act: Effect.gen(function*() {
      const state = yield* StateRoot.StateRoot
      const file = yield* (yield* FileSystem.FileSystem).open(CityRoot.settingsFile(state.root), { flag: "w" })
      const bytes = new TextEncoder().encode(settingsAfter)
      yield* file.writeAll(bytes.subarray(0, 40))
      yield* file.writeAll(bytes.subarray(40))
    }).pipe(Effect.scoped),
    // A torn file is refused, typed and naming the file (never read as "every folder enabled");
    // the operator saves it again.
    repair: Effect.gen(function*() {
      const state = yield* StateRoot.StateRoot
      const read = yield* Effect.either(Settings.read(state.root))
      if (read._tag === "Right") return
      expect(read.left).toMatchObject({ _tag: "InvalidFile", reason: "LoaderSettings" })
      expect(read.left.message).toContain(CityRoot.settingsFile(state.root))
      yield* (yield* FileSystem.FileSystem).writeFileString(CityRoot.settingsFile(state.root), settingsAfter)
    }),
    check: Effect.gen(function*() {
      const state = yield* StateRoot.StateRoot
      const settings = yield* Settings.read(state.root)
      expect([JSON.parse(settingsBefore).enabled, JSON.parse(settingsAfter).enabled]).toContainEqual(settings.enabled)
      expect([JSON.parse(settingsBefore).licensed, JSON.parse(settingsAfter).licensed]).toContainEqual(settings.licensed)
    })
  }
]

/** The command of the journal scenario's cut run: a real process leading its own group, as the runner spawns them. */
const journalled: { child: ChildProcess | undefined } = { child: undefined }
/** Every command the scenario spawned (the uncut run's too), ended when the tests end. */
const spawnedChildren = new Set<ChildProcess>()

/** Whether `child` has exited (reaped), waiting up to `ms`. */
const exited = (child: ChildProcess, ms: number) =>
  Effect.async<boolean>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.succeed(true))
    const timer = setTimeout(() => resume(Effect.succeed(false)), ms)
    child.once("exit", () => {
      clearTimeout(timer)
      resume(Effect.succeed(true))
    })
  })

/**
 * The stores of a `city` that is gone: its journal names an owner with this process's pid and a
 * start one tick earlier (a process that had the pid before), so the recovery, this process as it
 * is, finds the owner gone.
 */
const goneOn = (root: string, fs: FileSystem.FileSystem): Layer.Layer<Services, unknown> =>
  fs === realFs ? storesOn(root, fs) : Layer.unwrapEffect(Effect.map(
    Effect.provideService(ProcessIdentity.identify(process.pid), FileSystem.FileSystem, realFs),
    (self) => {
      const [boot, ticks] = (self.start ?? "").split(":")
      return storesOn(root, fs, { self: { pid: self.pid, start: `${boot}:${Number(ticks) - 1}` } })
    }
  ))

const journalScenarios: ReadonlyArray<Scenario> = [
  {
    name: "a command recorded in the process journal, its city killed (kill -9), then the next city's recovery",
    setup: Effect.void,
    act: Effect.gen(function*() {
      const child = spawn("sleep", ["30"], { detached: true, stdio: "ignore" })
      journalled.child = child
      spawnedChildren.add(child)
      yield* (yield* ProcessRecords.ProcessRecords).spawned("claude-ann", child.pid!, "sleep 30")
    }),
    // The next `city` (a joint taking the lock, a daemon start) recovers what the dead one left:
    // first, what its journal names (read as text: the line may be the torn end of a write).
    repair: Effect.gen(function*() {
      const state = yield* StateRoot.StateRoot
      const fs = yield* FileSystem.FileSystem
      const dir = state.resolve("state/processes")
      const names = yield* Effect.orElseSucceed(fs.readDirectory(dir), () => [] as Array<string>)
      const texts = yield* Effect.forEach(names.filter((n) => n.endsWith(".jsonl")), (n) => fs.readFileString(join(dir, n)))
      recorded.line = texts.some((t) => t.includes(`"pid":${journalled.child!.pid}`))
      yield* (yield* ProcessRecords.ProcessRecords).recover
    }),
    check: Effect.gen(function*() {
      const child = journalled.child!
      if (recorded.line) {
        // Ended by the recovery (SIGTERM to its group), and the dead owner's journal gone.
        expect(yield* exited(child, 5000)).toBe(true)
        const state = yield* StateRoot.StateRoot
        const names = yield* Effect.orElseSucceed((yield* FileSystem.FileSystem).readDirectory(state.resolve("state/processes")), () => [] as Array<string>)
        expect(names.filter((n) => n.endsWith(".jsonl") && n.startsWith(`${process.pid}-`))).toEqual([])
      } else {
        // Killed before its line was written: the documented window (ProcessRecords.ts); the
        // command was never recorded, so nothing could end it. This test does.
        expect(yield* exited(child, 0)).toBe(false)
        child.kill("SIGKILL")
        yield* exited(child, 5000)
      }
      // No second copy beside it: the endpoint is free at once.
      yield* (yield* ProcessRecords.ProcessRecords).vacate("claude-ann", "1 second")
    }),
    // A crash of the machine ends its commands too: the journal answers a crash of `city` only.
    powerLoss: false
  }
]

/** What the recovery found in the journals. */
const recorded = { line: false }

const only = process.env.CITY_CRASH_POINT

/** Every crash point of `scenario` on `layerOf`'s services, with and without power loss; prints the count. */
const enumerate = <R>(scenario: Scenario<R>, layerOf: (root: string, fs: FileSystem.FileSystem) => Layer.Layer<R, unknown>) =>
  Effect.gen(function*() {
    const template = mkdtempSync(join(tmpdir(), "city-crash-template-"))
    yield* Effect.scoped(Effect.provide(scenario.setup, layerOf(template, realFs)))
    // The uncut run counts the calls.
    const whole = yield* runCut(template, scenario, {}, layerOf)
    expect(Exit.isSuccess(whole.exit), Exit.isFailure(whole.exit) ? Cause.pretty(whole.exit.cause) : "").toBe(true)
    rmSync(whole.root, { recursive: true, force: true })
    const total = whole.faulty.calls.length
    let checked = 0
    let same = 0
    for (const powerLoss of scenario.powerLoss === false ? [false] : [false, true]) {
      for (let k = 0; k <= total; k++) {
        const point = `${k}${powerLoss ? ":power" : ""}`
        if (only !== undefined && only !== `${scenario.name}:${point}`) continue
        // A power loss where every file written is synced leaves what the crash alone leaves.
        if (powerLoss && (k < total ? whole.faulty.calls[k]!.unsynced : whole.faulty.unsynced()) === 0) {
          same++
          continue
        }
        const cut = yield* runCut(template, scenario, { crashAfter: k, powerLoss }, layerOf)
        // The process died there (some code may turn the defect into a failure of its own,
        // but nothing touches the disk after it: every later call dies too).
        if (k < total) expect(cut.faulty.crashed(), `cut after ${k}: ${String(cut.exit)}`).toBe(true)
        const at = whole.faulty.calls[k]
        yield* recoverAndCheck(scenario, cut.root, `${point} (after ${k} of ${total} calls${at === undefined ? "" : `; the next: ${at.op} ${at.path.replace(cut.root, "<root>")}`})`, layerOf)
        checked++
      }
    }
    rmSync(template, { recursive: true, force: true })
    console.log(
      `crash points: ${checked} checked, 0 failed (${scenario.name}: ${total} calls, each cut` +
        (scenario.powerLoss === false
          ? ")"
          : `, and with a power loss where a file was unsynced; ${same} power losses left what the cut alone left)`)
    )
  })

describe("crash points", () => {
  afterAll(() => {
    for (const child of spawnedChildren) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  })
  for (const scenario of [...scenarios, ...jointScenarios]) {
    it.effect(`every crash point of "${scenario.name}" recovers, also after power loss`, () => enumerate(scenario, storesOn), 120_000)
  }
  for (const scenario of [...liveScenarios, ...removalScenarios]) {
    it.effect(`every crash point of "${scenario.name}" recovers, also after power loss`, () => enumerate(scenario, liveOn), 120_000)
  }
  // Live clock: the recovery waits for a real process to end.
  for (const scenario of journalScenarios) {
    it.live(`every crash point of "${scenario.name}" recovers`, () => enumerate(scenario, goneOn), 120_000)
  }
  for (const scenario of settingsScenarios) {
    it.effect(`every crash point of "${scenario.name}" recovers, also after power loss`, () => enumerate(scenario, storesOn), 120_000)
  }
})

describe("defects the crash points found", () => {
  it.effect("peer remove cut after its records were forgotten, before the peer file went: `peer remove` again finishes it", () =>
    Effect.gen(function*() {
      const scenario = jointScenarios[1]!
      const template = mkdtempSync(join(tmpdir(), "city-crash-template-"))
      yield* Effect.scoped(Effect.provide(scenario.setup, storesOn(template, realFs)))
      const whole = yield* runCut(template, scenario, {}, storesOn)
      rmSync(whole.root, { recursive: true, force: true })
      // The point: the records' last rename (the endpoint forgotten), the peer file still there.
      const forgotten = whole.faulty.calls.filter((c) => c.op === "rename" && c.path.endsWith("state/endpoints/notes.json")).at(-1)
      expect(forgotten).toBeDefined()
      const cut = yield* runCut(template, scenario, { crashAfter: forgotten!.index }, storesOn)
      expect(cut.faulty.crashed()).toBe(true)
      yield* recoverAndCheck(scenario, cut.root, `${forgotten!.index} (the records forgotten, the peer file not yet removed)`, storesOn)
      rmSync(template, { recursive: true, force: true })
    }))
})

describe("defects the crash points found: a sweep's records", () => {
  it.effect("a power loss right after a sweep's records were renamed into place leaves them whole (they were written unsynced)", () =>
    Effect.gen(function*() {
      const scenario = scenarios[3]!
      const template = mkdtempSync(join(tmpdir(), "city-crash-template-"))
      const whole = yield* runCut(template, scenario, {}, storesOn)
      rmSync(whole.root, { recursive: true, force: true })
      // The point: the first rename of the records file (its first commit), then the power goes.
      const committed = whole.faulty.calls.find((c) => c.op === "rename" && c.path.endsWith("state/endpoints/notes.json"))
      expect(committed).toBeDefined()
      const cut = yield* runCut(template, scenario, { crashAfter: committed!.index, powerLoss: true }, storesOn)
      expect(cut.faulty.crashed()).toBe(true)
      yield* recoverAndCheck(scenario, cut.root, `${committed!.index}:power (the records renamed into place)`, storesOn)
      rmSync(template, { recursive: true, force: true })
    }))
})

describe("defects the crash points found: the root lock", () => {
  // Found by the joints' crash points: a refresh's `stat` failing after the lock was released
  // made proper-lockfile look the released lock up (a TypeError thrown from its timer, which ends
  // the process). Here the refresh's stat (2 s after the lock is taken) fails only once the lock
  // is released, so the release always happens while it is in flight.
  it.live("the root lock released while its 2 s refresh's stat is failing: nothing is thrown, the lock is gone", () =>
    Effect.gen(function*() {
      const root = mkdtempSync(join(tmpdir(), "city-crash-lock-"))
      const lock = join(root, ".lock")
      const thrown: Array<unknown> = []
      const onThrow = (error: unknown) => void thrown.push(error)
      // (Vitest reports such a throw as an unhandled error too, which fails the run.)
      process.on("uncaughtException", onThrow)
      process.on("unhandledRejection", onThrow)
      let armed = false
      let inFlight = false
      let answered = false
      const released = yield* Deferred.make<void>()
      const failingStat: FileSystem.FileSystem = {
        ...realFs,
        stat: (path) =>
          armed && path === lock
            ? Effect.suspend(() => {
              inFlight = true
              return Effect.zipRight(
                Deferred.await(released),
                Effect.fail(new PlatformError.SystemError({ reason: "Unknown", module: "FileSystem", method: "stat", pathOrDescriptor: path, description: "EIO: i/o error" }))
              )
            }).pipe(Effect.ensuring(Effect.sync(() => void (answered = true))))
            : realFs.stat(path)
      }
      const held = yield* Scope.make()
      // proper-lockfile's refresh is a Node timer (2 s, RootLock.ts): the test runs on fake timers
      // (which also advance with real time) and moves them to the refresh instead of waiting.
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"], shouldAdvanceTime: true })
      yield* Effect.gen(function*() {
        yield* Effect.provideService(Scope.extend(RootLock.hold(root, lock, Duration.seconds(1)), held), FileSystem.FileSystem, failingStat)
        armed = true
        vi.advanceTimersByTime(2_000)
        yield* eventually(Effect.sync(() => inFlight)) // the refresh's stat is in flight
        yield* Scope.close(held, Exit.void)
        yield* Deferred.succeed(released, undefined) // the lock is released: the stat fails now
        yield* eventually(Effect.sync(() => answered)) // its failure is answered
        // The time of the next refresh (1 s after a failed one) passes: none runs.
        inFlight = false
        vi.advanceTimersByTime(1_000)
        // proper-lockfile's callback runs on the answer's next turn: a few macrotasks see what it throws.
        yield* Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 20)))
        expect(inFlight).toBe(false)
      }).pipe(Effect.ensuring(Effect.sync(() => vi.useRealTimers())))
      process.off("uncaughtException", onThrow)
      process.off("unhandledRejection", onThrow)
      expect(thrown).toEqual([])
      expect(yield* Effect.either(realFs.stat(lock))).toSatisfy((e: { _tag: string }) => e._tag === "Left")
      rmSync(root, { recursive: true, force: true })
    }), 20_000)
})

describe("disk full and permission denied", () => {
  for (const scenario of scenarios.slice(0, 3)) {
    it.effect(`every write of "${scenario.name}" failing with ENOSPC or EACCES: a typed error naming the file, nothing stored damaged, a retry succeeds`, () =>
      Effect.gen(function*() {
        const template = mkdtempSync(join(tmpdir(), "city-crash-template-"))
        yield* Effect.scoped(Effect.provide(scenario.setup, storesOn(template, realFs)))
        const whole = yield* runCut(template, scenario, {}, storesOn)
        rmSync(whole.root, { recursive: true, force: true })
        for (const code of ["ENOSPC", "EACCES"] as const) {
          for (let at = 1; at <= whole.faulty.calls.length; at++) {
            const cut = yield* runCut(template, scenario, { fail: { at, code } }, storesOn)
            if (Exit.isFailure(cut.exit)) {
              const error = Cause.squash(cut.exit.cause) as { _tag?: string; message?: string }
              expect(error, `call ${at}: ${Cause.pretty(cut.exit.cause)}`).toMatchObject({ _tag: "StateRootError", reason: "StateError" })
              expect(error.message).toMatch(cut.root)
              expect(error.message).toMatch(code)
            }
            // Nothing stored is damaged, and the same operation, tried again, succeeds.
            yield* recoverAndCheck(
              { ...scenario, check: Effect.zipRight(scenario.check, scenario.act) },
              cut.root,
              `${code} at call ${at}`,
              storesOn
            )
          }
        }
        rmSync(template, { recursive: true, force: true })
      }), 120_000)
  }
})

describe("random operations, random crash points", () => {
  type Op = { readonly _tag: "put"; readonly name: string; readonly cwd: string } | { readonly _tag: "purge"; readonly name: string }
  const opArb: FastCheck.Arbitrary<Op> = FastCheck.oneof(
    FastCheck.record({ _tag: FastCheck.constant("put" as const), name: FastCheck.constantFrom("a", "b", "c"), cwd: FastCheck.constantFrom("/1", "/2", "/3") }),
    FastCheck.record({ _tag: FastCheck.constant("purge" as const), name: FastCheck.constantFrom("a", "b", "c") })
  )
  const apply = (model: Map<string, string>, op: Op) => {
    const next = new Map(model)
    if (op._tag === "put") next.set(op.name, op.cwd)
    else next.delete(op.name)
    return next
  }

  it.effect("every peer file is the model's before or after the operation the crash cut, the others as the model says", () =>
    Effect.gen(function*() {
      const template = mkdtempSync(join(tmpdir(), "city-crash-template-"))
      yield* Effect.promise(() =>
        FastCheck.assert(
          FastCheck.asyncProperty(
            FastCheck.array(opArb, { minLength: 1, maxLength: 6 }),
            FastCheck.nat({ max: 40 }),
            FastCheck.boolean(),
            async (ops, crashAfter, powerLoss) => {
              const act = Effect.gen(function*() {
                const peers = yield* Peers.Peers
                for (const op of ops) yield* op._tag === "put" ? peers.put(peer(op.name, op.cwd)) : peers.purge(op.name)
              })
              const scenario: Scenario<Peers.Peers | StateRoot.StateRoot> = { name: "random", setup: Effect.void, act, check: Effect.void }
              const cut = await Effect.runPromise(Effect.provide(runCut(template, scenario, { crashAfter, powerLoss }, peersOn), TestContext.TestContext))
              // How far it got: the operations whose every call ran, then the one it cut.
              const states = ops.reduce((acc, op) => [...acc, apply(acc[acc.length - 1]!, op)], [new Map<string, string>()])
              const check = Effect.gen(function*() {
                const scan = yield* (yield* Peers.Peers).scan
                expect(scan.invalid.map((e) => e.message)).toEqual([])
                const got = new Map(scan.valid.map((p) => [p.personality, p.cwd]))
                const matches = states.some((state, i) => {
                  const next = states[i + 1] ?? state
                  return ["a", "b", "c"].every((name) => got.get(name) === state.get(name) || got.get(name) === next.get(name)) &&
                    ["a", "b", "c"].filter((name) => got.get(name) !== state.get(name)).every((name) => got.get(name) === next.get(name))
                })
                expect(matches, `ops ${JSON.stringify(ops)}, crash after ${crashAfter}${powerLoss ? " with power loss" : ""}: got ${JSON.stringify([...got])}`).toBe(true)
              })
              await Effect.runPromise(Effect.provide(
                recoverAndCheck({ ...scenario, check }, cut.root, `${crashAfter}${powerLoss ? ":power" : ""} of ${JSON.stringify(ops)}`, peersOn),
                TestContext.TestContext
              ))
            }
          ),
          { numRuns: 1000, ...(process.env.CITY_CRASH_SEED === undefined ? {} : { seed: Number(process.env.CITY_CRASH_SEED) }) }
        )
      )
      rmSync(template, { recursive: true, force: true })
    }).pipe(Effect.provide(NodeContext.layer)), 240_000)
})
