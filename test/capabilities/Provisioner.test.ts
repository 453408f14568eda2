import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { join } from "node:path"
import { defaultHostConfig } from "../../src/schema/HostConfig.ts"
import type { Outcome } from "../../src/schema/Outcome.ts"
import type { Peer } from "../../src/schema/Peer.ts"
import * as Capabilities from "../../src/services/capabilities/Capabilities.ts"
import { CommandRunner, type RunRequest } from "../../src/services/capabilities/CommandRunner.ts"
import * as Host from "../../src/services/capabilities/Host.ts"
import * as LifecycleLog from "../../src/services/capabilities/LifecycleLog.ts"
import * as Peers from "../../src/services/capabilities/Peers.ts"
import * as Provisioner from "../../src/services/capabilities/Provisioner.ts"
import * as StateRoot from "../../src/services/capabilities/StateRoot.ts"

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
      const host = Host.fromConfig(defaultHostConfig)
      const endpoints = Provisioner.endpointsOf(
        declaration("stat", ["claude", "codex", "telegram"]),
        [peer("bob", ["telegram", "claude"]), peer("alice", ["claude", "opencode", "telegram"]), peer("eve", ["web"])],
        host.isAgent
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

const services = (root: string, runner: Layer.Layer<CommandRunner>) => {
  const base = Host.layer.pipe(Layer.provideMerge(StateRoot.layer({ root })))
  return Provisioner.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(Capabilities.layer, Peers.layer, LifecycleLog.layer(), runner)),
    Layer.provideMerge(base),
    Layer.provideMerge(NodeContext.layer)
  )
}

const inRoot = <A>(
  runner: Layer.Layer<CommandRunner>,
  body: (root: string) => Effect.Effect<A, unknown, Provisioner.Provisioner | StateRoot.StateRoot | FileSystem.FileSystem>
) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const root = yield* fs.makeTempDirectoryScoped()
    return yield* body(root).pipe(Effect.provide(services(root, runner)))
  }).pipe(Effect.provide(NodeContext.layer))

describe("Provisioner joints", () => {
  it.scoped("a sweep runs at most `concurrency` calls at once and attempts every endpoint", () => {
    const runner = scripted((r) => ({ state: r.args[1] === "p3" ? "failed" : "ok", ms: 1 }))
    return inRoot(runner.layer, (root) =>
      Effect.gen(function*() {
        const state = yield* StateRoot.StateRoot
        const fs = yield* FileSystem.FileSystem
        for (let i = 0; i < 12; i++) yield* state.writeJson(`peers/p${i}.json`, peer(`p${i}`, ["claude"]))
        const file = join(root, "stat.json")
        yield* fs.writeFileString(file, JSON.stringify(declaration("stat", ["claude"])))
        const provisioner = yield* Provisioner.Provisioner
        const { report } = yield* provisioner.register(file, { concurrency: 3 })
        expect(report.outcomes.length).toBe(12)
        expect(report.outcomes.filter((o) => o.state !== "ok").map((o) => o.identity)).toEqual(["claude-p3"])
        expect(runner.maxInFlight()).toBe(3)
        const overview = yield* provisioner.overview
        const p3 = overview.capabilities[0]?.endpoints.find((e) => e.identity === "claude-p3")
        expect(Option.map(p3?.last ?? Option.none(), (r) => r.state)).toEqual(Option.some("failed"))
      }))
  })

  it.scoped("birth with a failing provisioner still creates the peer; remove with a failing one still removes it", () => {
    const runner = scripted(() => ({ state: "failed", exit: 1, ms: 1, detail: "nope" }))
    return inRoot(runner.layer, (root) =>
      Effect.gen(function*() {
        const state = yield* StateRoot.StateRoot
        yield* state.writeJson("capabilities/stat.json", declaration("stat", ["claude", "opencode"]))
        const provisioner = yield* Provisioner.Provisioner
        const born = yield* provisioner.createPeer({ personality: "alice", cwd: root, runtimes: ["claude", "opencode"] })
        expect(born.report.outcomes.map((o) => [o.identity, o.occasion, o.state])).toEqual([
          ["claude-alice", "birth", "failed"],
          ["opencode-alice", "birth", "failed"]
        ])
        expect((yield* provisioner.peers).peers.map((p) => p.personality)).toEqual(["alice"])
        // opencode calls carry the private directory; claude calls do not.
        expect(runner.requests.map((r) => Option.isSome(r.privateDir))).toEqual([false, true])
        const removed = yield* provisioner.removePeer("alice")
        expect(removed.outcomes.map((o) => o.occasion)).toEqual(["remove", "remove"])
        expect((yield* provisioner.peers).peers).toEqual([])
      }))
  })

  it.scoped("refused input: unknown peer, unknown runtime, invalid names, an existing peer", () =>
    inRoot(scripted(() => ({ state: "ok", ms: 1 })).layer, (root) =>
      Effect.gen(function*() {
        const provisioner = yield* Provisioner.Provisioner
        expect((yield* Effect.flip(provisioner.removePeer("nobody")))._tag).toBe("UnknownPeer")
        expect((yield* Effect.flip(provisioner.sync("nothing")))._tag).toBe("UnknownCapability")
        expect((yield* Effect.flip(provisioner.sync("../x")))._tag).toBe("InvalidName")
        const bad = provisioner.createPeer({ personality: "alice", cwd: root, runtimes: ["claud"] })
        expect((yield* Effect.flip(bad))._tag).toBe("UnknownRuntime")
        yield* provisioner.createPeer({ personality: "alice", cwd: root, runtimes: ["claude"] })
        const again = provisioner.createPeer({ personality: "alice", cwd: root, runtimes: ["claude"] })
        expect((yield* Effect.flip(again))._tag).toBe("PeerAlreadyExists")
      })))
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
      const host = yield* Host.make.pipe(Effect.provide(StateRoot.layer({ root })))
      expect(host.isAgent("pi")).toBe(true)
      expect(host.isAgent("codex")).toBe(false)
      expect(host.privateDir("pi", "alice")).toEqual(Option.some("state/pi/alice"))
      expect(host.privateDir("claude", "alice")).toEqual(Option.none())
      yield* fs.writeFileString(join(root, "host.json"), JSON.stringify({
        schema: 1,
        agent_runtimes: ["claude"],
        channel_runtimes: [],
        profiles: { claude: { private_dir: "/abs/{personality}" } }
      }))
      const refused = yield* Host.make.pipe(Effect.provide(StateRoot.layer({ root })), Effect.flip)
      expect(refused._tag).toBe("InvalidHostConfig")
      expect(refused.message).toContain("profiles.claude.private_dir")
    }).pipe(Effect.provide(NodeContext.layer)))
})
