import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { join } from "node:path"
import { layerWith } from "../../../src/layers/internal/capabilityServices.ts"
import { exitCodeOf, refused as isRefused } from "../../../src/schema/ExitPolicy.ts"
import { defaultHostConfig } from "../../../src/schema/HostConfig.ts"
import type { Outcome } from "../../../src/schema/Outcome.ts"
import type { Peer } from "../../../src/schema/Peer.ts"
import { CommandRunner, type RunRequest } from "../../../src/services/capabilities/CommandRunner.ts"
import { endpointsOf } from "../../../src/services/capabilities/EndpointCalls.ts"
import * as RuntimeProfiles from "../../../src/services/capabilities/RuntimeProfiles.ts"
import { Listings } from "../../../src/services/capabilities/Listings.ts"
import * as Provisioner from "../../../src/services/capabilities/Provisioner.ts"
import * as StateRoot from "../../../src/services/root/StateRoot.ts"

const declaration = (name: string, runtimes: ReadonlyArray<string>) => ({
  schema: 1 as const,
  capability: name,
  runtimes,
  provision: { command: "/bin/prov", args: ["provision-peer", "{personality}", "{runtime}"] },
  unprovision: { command: "/bin/prov", args: ["unprovision-peer", "{personality}", "{runtime}"] }
})

const peer = (personality: string, runtimes: ReadonlyArray<string>): Peer => ({
  schema: 1,
  personality,
  cwd: "/tmp",
  runtimes,
  default_runtime: runtimes[0] ?? "claude"
})

describe("endpoint selection", () => {
  it.effect("an endpoint's runtime is declared by the peer, an agent of this host, and listed by the declaration", () =>
    Effect.sync(() => {
      const profiles = RuntimeProfiles.fromConfig(defaultHostConfig)
      const endpoints = endpointsOf(
        declaration("stat", ["claude", "codex", "telegram"]),
        [peer("bob", ["telegram", "claude"]), peer("alice", ["claude", "opencode", "telegram"]), peer("eve", ["web"])],
        profiles.isAgent
      )
      expect(endpoints.map((e) => `${e.runtime}-${e.peer.personality}`)).toEqual(["claude-alice", "claude-bob"])
    }))
})

/** A scripted runner: records each request, answers with `answer`, and tracks calls in flight. */
const scripted = (answer: (request: RunRequest) => Outcome) => {
  const requests: Array<RunRequest> = []
  let inFlight = 0
  let maxInFlight = 0
  const layer = Layer.succeed(CommandRunner, CommandRunner.of({
    run: (request) =>
      Effect.gen(function*() {
        requests.push(request)
        inFlight++
        maxInFlight = Math.max(maxInFlight, inFlight)
        for (let i = 0; i < 5; i++) yield* Effect.yieldNow()
        inFlight--
        return answer(request)
      })
  }))
  return { layer, requests, maxInFlight: () => maxInFlight }
}

type Services = Provisioner.Provisioner | Listings | StateRoot.StateRoot | FileSystem.FileSystem

/** The services on a root that does not exist yet (`<temp>/root`), with a scripted runner. */
const inRoot = <A>(
  runner: Layer.Layer<CommandRunner>,
  body: (root: string) => Effect.Effect<A, unknown, Services>,
  seed: (root: string) => Effect.Effect<void, unknown, FileSystem.FileSystem> = () => Effect.void
) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const root = join(yield* fs.makeTempDirectoryScoped(), "root")
    yield* seed(root)
    return yield* body(root).pipe(Effect.provide(layerWith({ root }, runner)))
  }).pipe(Effect.provide(NodeContext.layer))

const ok = () => scripted(() => ({ state: "ok", ms: 1 }))

/** Writes files under the root before the services start (host.json is read when they do). */
const files = (entries: Record<string, unknown>) => (root: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    for (const [relative, value] of Object.entries(entries)) {
      yield* fs.makeDirectory(join(root, relative, ".."), { recursive: true })
      yield* fs.writeFileString(join(root, relative), typeof value === "string" ? value : JSON.stringify(value))
    }
  })

const scoped = (name: string, body: () => Effect.Effect<unknown, unknown, Scope.Scope>) =>
  it.scoped(name, () => Effect.asVoid(body()))

describe("Provisioner joints", () => {
  scoped("a sweep runs at most `concurrency` calls at once and attempts every endpoint", () => {
    const runner = scripted((r) => ({ state: r.args[1] === "p3" ? "failed" : "ok", ms: 1 }))
    return inRoot(runner.layer, (root) =>
      Effect.gen(function*() {
        const state = yield* StateRoot.StateRoot
        const fs = yield* FileSystem.FileSystem
        for (let i = 0; i < 12; i++) yield* state.writeJson(`peers/p${i}.json`, peer(`p${i}`, ["claude"]))
        const file = join(root, "..", "stat.json")
        yield* fs.writeFileString(file, JSON.stringify(declaration("stat", ["claude"])))
        const provisioner = yield* Provisioner.Provisioner
        const { report } = yield* provisioner.register(file, { concurrency: 3 })
        expect(report.outcomes.length).toBe(12)
        expect(report.outcomes.filter((o) => o.state !== "ok").map((o) => o.personality)).toEqual(["p3"])
        expect(report.verdict).toBe("failed")
        expect(runner.maxInFlight()).toBe(3)
        const overview = yield* (yield* Listings).capabilities
        const p3 = overview.capabilities[0]?.endpoints.find((e) => e.personality === "p3")
        expect(Option.map(p3?.last ?? Option.none(), (r) => r.state)).toEqual(Option.some("failed"))
      }))
  })

  scoped("birth with a failing provisioner still creates the peer (verdict warned); remove with a failing one still removes it", () => {
    const runner = scripted(() => ({ state: "failed", exit: 1, ms: 1, detail: "nope" }))
    return inRoot(runner.layer, (root) =>
      Effect.gen(function*() {
        const provisioner = yield* Provisioner.Provisioner
        const overview = yield* Listings
        const born = yield* provisioner.createPeer({
          personality: "alice",
          cwd: join(root, ".."),
          runtimes: ["claude", "opencode"]
        })
        expect(born.report.outcomes.map((o) => [o.personality, o.runtime, o.occasion, o.state])).toEqual([
          ["alice", "claude", "birth", "failed"],
          ["alice", "opencode", "birth", "failed"]
        ])
        expect(born.report.verdict).toBe("warned")
        expect((yield* overview.peers).peers.map((p) => p.personality)).toEqual(["alice"])
        // opencode calls carry the private directory; claude calls do not.
        expect(runner.requests.map((r) => Option.isSome(r.privateDir))).toEqual([false, true])
        const removed = yield* provisioner.removePeer("alice")
        expect(removed.outcomes.map((o) => o.occasion)).toEqual(["remove", "remove"])
        expect(removed.verdict).toBe("warned")
        expect((yield* overview.peers).peers).toEqual([])
      }), files({ "capabilities/stat.json": declaration("stat", ["claude", "opencode"]) }))
  })

  scoped("refused input: unknown peer, unknown runtime, invalid names, an existing peer; each error says it is refused", () =>
    inRoot(ok().layer, (root) =>
      Effect.gen(function*() {
        const provisioner = yield* Provisioner.Provisioner
        const cwd = join(root, "..")
        const bad = provisioner.createPeer({ personality: "alice", cwd, runtimes: ["claud"] })
        const unknownRuntime = yield* Effect.flip(bad)
        expect(unknownRuntime).toMatchObject({ _tag: "CapabilityError", reason: "UnknownRuntime" })
        yield* provisioner.createPeer({ personality: "alice", cwd, runtimes: ["claude"] })
        const refusals = [
          yield* Effect.flip(provisioner.removePeer("nobody")),
          yield* Effect.flip(provisioner.sync("nothing")),
          yield* Effect.flip(provisioner.sync("../x")),
          yield* Effect.flip(provisioner.createPeer({ personality: "alice", cwd, runtimes: ["claude"] })),
          unknownRuntime
        ]
        expect(refusals.map((e) => e.name)).toEqual([
          "UnknownPeer",
          "UnknownCapability",
          "InvalidName",
          "PeerAlreadyExists",
          "UnknownRuntime"
        ])
        expect(refusals.map((e) => [isRefused(e), exitCodeOf(e)])).toEqual(refusals.map(() => [true, 2]))
      })))

  scoped("a timeout below 1 ms or a concurrency below 1 is refused before anything runs; unregister keeps the declaration", () => {
    const runner = ok()
    return inRoot(runner.layer, (root) =>
      Effect.gen(function*() {
        const provisioner = yield* Provisioner.Provisioner
        const fs = yield* FileSystem.FileSystem
        for (const settings of [{ timeout: 0 }, { timeout: -5 }, { concurrency: 0 }, { concurrency: 1.5 }]) {
          const refused = yield* Effect.flip(provisioner.unregister("stat", settings))
          expect(refused, JSON.stringify(settings)).toMatchObject({ _tag: "CapabilityError", reason: "InvalidJointSettings" })
          expect(isRefused(refused)).toBe(true)
        }
        expect((yield* Effect.flip(provisioner.sync("stat", { timeout: -5 }))).message).toContain("-5 ms")
        expect(runner.requests).toEqual([])
        expect(yield* fs.exists(join(root, "capabilities", "stat.json"))).toBe(true)
      }), files({ "capabilities/stat.json": declaration("stat", ["claude"]), "peers/alice.json": peer("alice", ["claude"]) }))
  })

  scoped("a declaration naming a channel runtime of this host is refused; a runtime this host does not know is accepted", () =>
    inRoot(ok().layer, (root) =>
      Effect.gen(function*() {
        const provisioner = yield* Provisioner.Provisioner
        const fs = yield* FileSystem.FileSystem
        const channels = join(root, "..", "chan.json")
        yield* fs.writeFileString(channels, JSON.stringify(declaration("chan", ["telegram", "web"])))
        const refused = yield* Effect.flip(provisioner.register(channels))
        expect(refused).toMatchObject({ _tag: "InvalidFile", reason: "Declaration" })
        expect(refused.message).toContain(`field "runtimes[0]"`)
        expect(refused.message).toContain("telegram is a channel runtime")
        const mixed = join(root, "..", "mixed.json")
        yield* fs.writeFileString(mixed, JSON.stringify(declaration("mixed", ["claude", "web"])))
        expect((yield* Effect.flip(provisioner.register(mixed))).message).toContain(`field "runtimes[1]"`)
        const portable = join(root, "..", "portable.json")
        yield* fs.writeFileString(portable, JSON.stringify(declaration("portable", ["claude", "pi-agent"])))
        const { report } = yield* provisioner.register(portable)
        expect(report.outcomes.map((o) => o.runtime)).toEqual(["claude"])
      }), files({ "peers/alice.json": peer("alice", ["claude", "telegram"]) })))

  scoped("endpoints whose log identities collide (x-y + z and x + y-z) keep their own records", () => {
    const runner = scripted((r) => ({ state: r.args[1] === "z" ? "failed" : "ok", ms: 1, detail: r.args[1] ?? "" }))
    return inRoot(runner.layer, (root) =>
      Effect.gen(function*() {
        const provisioner = yield* Provisioner.Provisioner
        const fs = yield* FileSystem.FileSystem
        const file = join(root, "..", "stat.json")
        yield* fs.writeFileString(file, JSON.stringify(declaration("stat", ["x", "x-y"])))
        const { report } = yield* provisioner.register(file)
        expect(report.outcomes.map((o) => [o.personality, o.runtime, o.state])).toEqual([
          ["y-z", "x", "ok"],
          ["z", "x-y", "failed"]
        ])
        const overview = yield* (yield* Listings).capabilities
        expect(overview.capabilities[0]?.endpoints.map((e) => [e.personality, e.runtime, Option.map(e.last, (r) => r.state)]))
          .toEqual([["y-z", "x", Option.some("ok")], ["z", "x-y", Option.some("failed")]])
        expect(overview.invalid).toEqual([])
        // The log keeps the spec's identity format (here, twice the same).
        const log = yield* fs.readFileString(join(root, "logs", "lifecycle.log"))
        expect(log.match(/identity=x-y-z /g)?.length).toBe(2)
      }), files({
        "host.json": { schema: 1, agent_runtimes: ["x", "x-y"], channel_runtimes: [], profiles: {} },
        "peers/y-z.json": peer("y-z", ["x"]),
        "peers/z.json": peer("z", ["x-y"])
      }))
  })

  scoped("endpoint records and the log are private to the owner: files 0600, folders 0700", () =>
    inRoot(scripted(() => ({ state: "failed", exit: 1, ms: 1, detail: "secret stderr" })).layer, (root) =>
      Effect.gen(function*() {
        const provisioner = yield* Provisioner.Provisioner
        const fs = yield* FileSystem.FileSystem
        yield* provisioner.sync("stat")
        const mode = (path: string) => Effect.map(fs.stat(join(root, path)), (info) => info.mode & 0o777)
        expect(yield* mode("state/endpoints/stat.json")).toBe(0o600)
        expect(yield* mode("state/endpoints")).toBe(0o700)
        expect(yield* mode("logs/lifecycle.log")).toBe(0o600)
        expect(yield* mode("logs")).toBe(0o700)
      }), (root) =>
      Effect.gen(function*() {
        yield* files({
          "capabilities/stat.json": declaration("stat", ["claude"]),
          "peers/alice.json": peer("alice", ["claude"]),
          "state/endpoints/old.json": "{}",
          "logs/old.log": ""
        })(root)
        // Folders made earlier with the usual 0755 are tightened.
        const fs = yield* FileSystem.FileSystem
        yield* fs.chmod(join(root, "state/endpoints"), 0o755)
        yield* fs.chmod(join(root, "logs"), 0o755)
      })))

  scoped("a private directory that cannot be created fails the call before spawn, naming the reason", () => {
    const runner = ok()
    return inRoot(runner.layer, () =>
      Effect.gen(function*() {
        const report = yield* (yield* Provisioner.Provisioner).sync("stat")
        expect(report.outcomes.map((o) => [o.runtime, o.state])).toEqual([["claude", "ok"], ["opencode", "failed"]])
        expect(report.outcomes[1]?.detail).toContain("cannot create the private directory")
        expect(runner.requests.map((r) => r.args[2])).toEqual(["claude"])
      }), files({
        "capabilities/stat.json": declaration("stat", ["claude", "opencode"]),
        "peers/alice.json": peer("alice", ["claude", "opencode"]),
        // `state/opencode` is a file: `state/opencode/alice` cannot be made.
        "state/opencode": "not a directory"
      }))
  })

  scoped("a corrupt records file is reported by the overview, not read as empty in silence, and replaced by the next call", () =>
    inRoot(ok().layer, () =>
      Effect.gen(function*() {
        const overview = yield* Listings
        const before = yield* overview.capabilities
        expect(before.invalid.map((e) => [e.name, e.field])).toEqual([["InvalidEndpointRecords", ""]])
        const report = yield* (yield* Provisioner.Provisioner).sync("stat")
        expect(report.invalid.map((e) => e.name)).toEqual(["InvalidEndpointRecords"])
        // Reported, and the sweep itself succeeded: a warning, exit 0.
        expect(report.verdict).toBe("warned")
        const after = yield* overview.capabilities
        expect(after.invalid).toEqual([])
        expect(after.capabilities[0]?.endpoints.map((e) => Option.isSome(e.last))).toEqual([true])
      }), files({
        "capabilities/stat.json": declaration("stat", ["claude"]),
        "peers/alice.json": peer("alice", ["claude"]),
        "state/endpoints/stat.json": "{ torn"
      })))
})

describe("a root that does not exist", () => {
  scoped("read-only views and joints on existing state fail with RootNotFound and create nothing", () =>
    inRoot(ok().layer, (root) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const overview = yield* Listings
        const provisioner = yield* Provisioner.Provisioner
        const failures = [
          yield* Effect.flip(overview.peers),
          yield* Effect.flip(overview.capabilities),
          yield* Effect.flip(provisioner.sync("stat")),
          yield* Effect.flip(provisioner.removePeer("alice"))
        ]
        expect(failures.map((e) => e.name)).toEqual(failures.map(() => "RootNotFound"))
        expect(failures[0]?.message).toContain(root)
        expect(yield* fs.exists(root)).toBe(false)
        // Birth creates it.
        yield* provisioner.createPeer({ personality: "alice", cwd: join(root, ".."), runtimes: ["claude"] })
        expect((yield* overview.peers).peers.length).toBe(1)
      })))

  scoped("a root under a file is a StateError (exit 1) that keeps its underlying cause", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const file = join(yield* fs.makeTempDirectoryScoped(), "f")
      yield* fs.writeFileString(file, "")
      const error = yield* Effect.flip(
        Effect.flatMap(Listings, (o) => o.peers).pipe(
          Effect.provide(layerWith({ root: join(file, "sub") }, ok().layer))
        )
      )
      expect(error).toMatchObject({ _tag: "StateRootError", reason: "StateError" })
      expect(exitCodeOf(error)).toBe(1)
      expect(error._tag === "StateRootError" ? error.cause : undefined).toMatchObject({ _tag: "SystemError" })
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("forced removal of a broken file", () => {
  const broken = {
    "capabilities/stat.json": declaration("stat", ["claude", "opencode"]),
    "peers/bob.json": peer("bob", ["claude"])
  }

  scoped("peer remove refuses a corrupt peer file and says --force; with force it goes, naming what was not unprovisioned", () => {
    const runner = ok()
    return inRoot(runner.layer, (root) =>
      Effect.gen(function*() {
        const provisioner = yield* Provisioner.Provisioner
        const fs = yield* FileSystem.FileSystem
        yield* provisioner.createPeer({ personality: "alice", cwd: join(root, ".."), runtimes: ["claude", "opencode"] })
        yield* fs.writeFileString(join(root, "peers", "alice.json"), "{ torn")
        const refused = yield* Effect.flip(provisioner.removePeer("alice"))
        expect(refused).toMatchObject({ _tag: "InvalidFile", reason: "PeerFile" })
        expect(refused.message).toContain("city peer remove alice --force")
        const calls = runner.requests.length
        const report = yield* provisioner.removePeer("alice", { force: true })
        expect(runner.requests.length).toBe(calls)
        expect(report.outcomes.map((o) => [o.capability, o.personality, o.runtime, o.occasion, o.state])).toEqual([
          ["stat", "alice", "claude", "remove", "failed"],
          ["stat", "alice", "opencode", "remove", "failed"]
        ])
        expect(report.outcomes[0]?.detail).toContain("not unprovisioned: the peer file is invalid")
        expect(report.verdict).toBe("warned")
        expect(yield* fs.exists(join(root, "peers", "alice.json"))).toBe(false)
        expect(yield* fs.exists(join(root, "state", "opencode", "alice"))).toBe(false)
        const overview = yield* (yield* Listings).capabilities
        expect(overview.capabilities[0]?.endpoints.map((e) => e.personality)).toEqual(["bob"])
      }), files(broken))
  })

  scoped("unregister refuses a corrupt declaration and says --force; with force it is deleted and exits 1 over its endpoints", () => {
    const runner = ok()
    return inRoot(runner.layer, (root) =>
      Effect.gen(function*() {
        const provisioner = yield* Provisioner.Provisioner
        const fs = yield* FileSystem.FileSystem
        yield* provisioner.sync("stat")
        yield* fs.writeFileString(join(root, "capabilities", "stat.json"), JSON.stringify({ schema: 2 }))
        const refused = yield* Effect.flip(provisioner.unregister("stat"))
        expect(refused).toMatchObject({ _tag: "InvalidFile", reason: "Declaration" })
        expect(refused.message).toContain("city capability unregister stat --force")
        const report = yield* provisioner.unregister("stat", { force: true })
        expect(report.outcomes.map((o) => [o.personality, o.runtime, o.occasion, o.state])).toEqual([
          ["bob", "claude", "off-all", "failed"]
        ])
        expect(report.verdict).toBe("failed")
        expect(yield* fs.exists(join(root, "capabilities", "stat.json"))).toBe(false)
        expect(yield* fs.exists(join(root, "state", "endpoints", "stat.json"))).toBe(false)
        expect(runner.requests.map((r) => r.args[0])).toEqual(["provision-peer"])
      }), files(broken))
  })
})

describe("host configuration", () => {
  it.scoped("host.json decides agent runtimes and private directories; an invalid one is refused", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const root = yield* fs.makeTempDirectoryScoped()
      yield* fs.writeFileString(join(root, "host.json"), JSON.stringify({
        schema: 1,
        agent_runtimes: ["claude", "pi"],
        channel_runtimes: ["telegram"],
        profiles: { pi: { private_dir: "state/pi/{personality}" } }
      }))
      const profiles = yield* RuntimeProfiles.make.pipe(Effect.provide(StateRoot.layer({ root })))
      expect(profiles.isAgent("pi")).toBe(true)
      expect(profiles.isAgent("codex")).toBe(false)
      expect(profiles.privateDir("pi", "alice")).toEqual(Option.some("state/pi/alice"))
      expect(profiles.privateDir("claude", "alice")).toEqual(Option.none())
      yield* fs.writeFileString(join(root, "host.json"), JSON.stringify({
        schema: 1,
        agent_runtimes: ["claude"],
        channel_runtimes: [],
        profiles: { claude: { private_dir: "/abs/{personality}" } }
      }))
      const refused = yield* RuntimeProfiles.make.pipe(Effect.provide(StateRoot.layer({ root })), Effect.flip)
      expect(refused).toMatchObject({ _tag: "InvalidFile", reason: "HostConfig" })
      expect(refused.message).toContain("profiles.claude.private_dir")
      yield* fs.writeFileString(join(root, "host.json"), "[1]")
      const notObject = yield* RuntimeProfiles.make.pipe(Effect.provide(StateRoot.layer({ root })), Effect.flip)
      expect(notObject.message).toContain("must be a JSON object")
    }).pipe(Effect.provide(NodeContext.layer)))
})
