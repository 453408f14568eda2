/**
 * Acceptance for issue 10 (docs/capability-plugin-lifecycle.md, "Applying surfaces to a live
 * endpoint" to the end), in process: the live joints over the City-sessions host (real City
 * Sessions, real provisioner scripts writing real MCP entries, real tool calls) and over the
 * Scripted host (the test drives busy/idle and holds reloads).
 */
import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { join } from "node:path"
import { RuntimeProfiles } from "../../src/services/capabilities/RuntimeProfiles.ts"
import { Peers } from "../../src/services/capabilities/Peers.ts"
import { StateRoot } from "../../src/services/root/StateRoot.ts"
import { Applier } from "../../src/services/live/Applier.ts"
import { CitySessionsHost } from "../../src/services/live/CitySessionsHost.ts"
import type { EndpointHostShape } from "../../src/services/live/EndpointHost.ts"
import { makeRefs } from "../../src/services/live/Endpoints.ts"
import { launchFiles } from "../../src/services/live/LaunchFiles.ts"
import { LiveJoints } from "../../src/services/live/LiveJoints.ts"
import { Reloads } from "../../src/services/owed/Reloads.ts"
import * as ScriptedHost from "../../src/services/live/ScriptedHost.ts"
import * as FingerprintPoll from "../../src/services/live/FingerprintPoll.ts"
import { seedPeer } from "./cityCli.ts"
import { capability, cityLayer, scriptedLayer, world } from "../support/world.ts"
import { eventually } from "../fixtures.ts"

const live = (name: string, body: () => Effect.Effect<void, unknown, FileSystem.FileSystem | Scope.Scope>) =>
  it.scopedLive(name, () => body().pipe(Effect.provide(NodeContext.layer)), 120_000)

/** The endpoint reference of alice's `runtime`. */
const refOf = (runtime: string) =>
  Effect.gen(function*() {
    const refs = makeRefs(yield* RuntimeProfiles, yield* Peers, yield* StateRoot)
    return refs.of(yield* (yield* Peers).get("alice"), runtime)
  })

const applications = (
  outcomes: ReadonlyArray<{ readonly personality: string; readonly runtime: string; readonly state: string; readonly application?: string | undefined }>
) => outcomes.map((o) => [`${o.runtime}-${o.personality}`, o.state, o.application])

describe("City-sessions host: register and unregister on claude, codex and opencode", () => {
  for (const runtime of ["claude", "codex", "opencode"]) {
    live(`${runtime}: idle register → applied, the new tool is listed and callable; idle unregister → applied, it is gone`, () =>
      Effect.gen(function*() {
        const w = yield* world
        const decl = yield* capability(w, "stamp", [runtime])
        yield* Effect.gen(function*() {
          const sessions = yield* CitySessionsHost
          const joints = yield* LiveJoints
          const ref = yield* refOf(runtime)
          yield* sessions.launch(ref)
          const before = yield* sessions.turn(ref, (t) => Effect.as(t.note("hello"), t.tools))
          expect(before).toEqual([])

          const registered = yield* joints.register(decl)
          expect(applications(registered.report.outcomes)).toEqual([[`${runtime}-alice`, "ok", "applied"]])
          const after = yield* sessions.turn(ref, (t) =>
            Effect.map(t.call("stamp", "x"), (result) => ({ result, tools: t.tools, history: t.history.map((h) => h.text) })))
          expect(after.tools).toEqual(["stamp"])
          expect(after.result).toBe("stamp:x")
          expect(after.history).toContain("hello") // the conversation survived the reload
          expect(sessions.sessionCount(ref)).toBe(2)

          const unregistered = yield* joints.unregister("stamp")
          expect(applications(unregistered.outcomes)).toEqual([[`${runtime}-alice`, "ok", "applied"]])
          const gone = yield* sessions.turn(ref, (t) => Effect.map(Effect.flip(t.call("stamp", "y")), (e) => ({ e, tools: t.tools })))
          expect(gone.tools).toEqual([])
          expect(gone.e).toMatchObject({ _tag: "EndpointError", reason: "ToolNotAvailable", tool: "stamp" })
        }).pipe(Effect.provide(cityLayer(w)))
      }))

    live(`${runtime}: busy register → pending, applied after the Turn and not before; busy unregister lets the Turn finish`, () =>
      Effect.gen(function*() {
        const w = yield* world
        const decl = yield* capability(w, "stamp", [runtime])
        yield* Effect.gen(function*() {
          const sessions = yield* CitySessionsHost
          const joints = yield* LiveJoints
          yield* (yield* Applier).start("50 millis")
          const ref = yield* refOf(runtime)
          yield* sessions.launch(ref)

          /** A Turn held open until `release`; `inside` runs in it after the verb returned. */
          const heldTurn = <A, E>(inside: (tools: ReadonlyArray<string>, call: (tool: string) => Effect.Effect<string, unknown>) => Effect.Effect<A, E>) =>
            Effect.gen(function*() {
              const started = yield* Deferred.make<void>()
              const release = yield* Deferred.make<void>()
              const fiber = yield* Effect.fork(sessions.turn(ref, (t) =>
                Effect.gen(function*() {
                  yield* Deferred.succeed(started, undefined)
                  yield* Deferred.await(release)
                  return yield* inside(t.tools, (tool) => t.call(tool, "in-turn"))
                })))
              yield* Deferred.await(started)
              return { release: Deferred.succeed(release, undefined), fiber }
            })

          const first = yield* heldTurn((tools) => Effect.succeed(tools))
          const registered = yield* joints.register(decl)
          expect(applications(registered.report.outcomes)).toEqual([[`${runtime}-alice`, "ok", "pending"]])
          const owed = yield* (yield* Reloads).get(ref)
          expect(Option.map(owed, (r) => r.requested > r.applied)).toEqual(Option.some(true))
          expect(sessions.sessionCount(ref)).toBe(1) // not before the Turn ends
          yield* first.release
          expect(yield* Fiber.join(first.fiber)).toEqual([]) // the running Turn kept its tools
          yield* eventually(Effect.sync(() => sessions.sessionCount(ref) === 2))
          expect(yield* sessions.turn(ref, (t) => t.call("stamp", "next"))).toBe("stamp:next")

          const second = yield* heldTurn((tools, call) => Effect.map(call("stamp"), (result) => ({ tools, result })))
          const unregistered = yield* joints.unregister("stamp")
          expect(applications(unregistered.outcomes)).toEqual([[`${runtime}-alice`, "ok", "pending"]])
          yield* second.release
          // Unregister is not a revocation: the running Turn still had and could call the tool.
          expect(yield* Fiber.join(second.fiber)).toEqual({ tools: ["stamp"], result: "stamp:in-turn" })
          yield* eventually(Effect.sync(() => sessions.sessionCount(ref) === 3))
          const gone = yield* sessions.turn(ref, (t) => Effect.map(Effect.flip(t.call("stamp", "z")), (e) => ({ e, tools: t.tools })))
          expect(gone.tools).toEqual([])
          expect(gone.e).toMatchObject({ _tag: "EndpointError", reason: "ToolNotAvailable", tool: "stamp" })
          yield* eventually(Effect.map((yield* Reloads).get(ref), Option.isNone))
        }).pipe(Effect.provide(cityLayer(w)))
      }))
  }
})

describe("City-sessions host: stopped and asleep endpoints", () => {
  live("a stopped endpoint stays stopped (nothing owed); its next launch reads the current surfaces", () =>
    Effect.gen(function*() {
      const w = yield* world
      const decl = yield* capability(w, "stamp", ["claude"])
      yield* Effect.gen(function*() {
        const sessions = yield* CitySessionsHost
        const ref = yield* refOf("claude")
        yield* sessions.launch(ref)
        yield* sessions.stop(ref)
        const { report } = yield* (yield* LiveJoints).register(decl)
        expect(applications(report.outcomes)).toEqual([["claude-alice", "ok", "asleep"]])
        expect(report.outcomes[0]?.application_detail).toBe("stopped")
        expect(yield* (yield* Reloads).list).toEqual([])
        expect(sessions.sessionCount(ref)).toBe(0) // not relaunched by the verb
        yield* sessions.launch(ref) // the next ordinary launch
        expect(yield* sessions.turn(ref, (t) => Effect.succeed(t.tools))).toEqual(["stamp"])
      }).pipe(Effect.provide(cityLayer(w)))
    }))
})

/** A Scripted host world: alice with claude (default) and codex, the `stamp` capability. */
const scripted = <A, E>(body: (s: ScriptedHost.ScriptedShape, decl: string) => Effect.Effect<A, E, LiveJoints | Applier | Reloads | Peers | RuntimeProfiles | StateRoot | FileSystem.FileSystem | Scope.Scope>) =>
  Effect.gen(function*() {
    const w = yield* world
    const decl = yield* capability(w, "stamp", ["claude", "codex"])
    const s = yield* ScriptedHost.make
    return yield* body(s, decl).pipe(Effect.provide(scriptedLayer(w, s.host)))
  })

describe("Scripted host: scheduling", () => {
  live("two requests during one busy Turn → exactly one reload, after the Turn", () =>
    scripted((s, decl) =>
      Effect.gen(function*() {
        yield* (yield* Applier).start("50 millis")
        const joints = yield* LiveJoints
        yield* s.set("claude-alice", "busy")
        yield* s.set("codex-alice", "asleep")
        const first = yield* joints.register(decl)
        const second = yield* joints.sync("stamp")
        expect(applications(first.report.outcomes)).toEqual([["claude-alice", "ok", "pending"], ["codex-alice", "ok", "asleep"]])
        expect(applications(second.outcomes)).toEqual([["claude-alice", "ok", "pending"], ["codex-alice", "ok", "asleep"]])
        const ref = yield* refOf("claude")
        expect(Option.map(yield* (yield* Reloads).get(ref), (r) => [r.requested, r.applied])).toEqual(Option.some([2, 0]))
        expect(s.reloads("claude-alice")).toBe(0)
        yield* s.endTurn("claude-alice")
        yield* eventually(Effect.map((yield* Reloads).get(ref), Option.isNone))
        expect(s.reloads("claude-alice")).toBe(1)
        expect(s.reloads("codex-alice")).toBe(0)
      })))

  live("a request arriving during a reload → exactly one more reload", () =>
    scripted((s, decl) =>
      Effect.gen(function*() {
        const joints = yield* LiveJoints
        yield* s.set("claude-alice", "idle")
        yield* s.set("codex-alice", "idle")
        const hold = yield* s.holdNextReload("claude-alice")
        const first = yield* Effect.fork(joints.register(decl))
        yield* Deferred.await(hold.started)
        const second = yield* Effect.fork(joints.sync("stamp"))
        const ref = yield* refOf("claude")
        yield* eventually(Effect.map((yield* Reloads).get(ref), (r) => Option.isSome(r) && r.value.requested === 2))
        yield* Deferred.succeed(hold.release, undefined)
        const a = yield* Fiber.join(first)
        const b = yield* Fiber.join(second)
        expect(applications(a.report.outcomes)).toEqual([["claude-alice", "ok", "applied"], ["codex-alice", "ok", "applied"]])
        expect(applications(b.outcomes)).toEqual([["claude-alice", "ok", "applied"], ["codex-alice", "ok", "applied"]])
        expect(s.reloads("claude-alice")).toBe(2)
        expect(s.reloads("codex-alice")).toBe(2)
        expect(Option.isNone(yield* (yield* Reloads).get(ref))).toBe(true)
      })))

  live("asleep and stopped endpoints are untouched and owe nothing", () =>
    scripted((s, decl) =>
      Effect.gen(function*() {
        yield* s.set("claude-alice", "asleep")
        yield* s.set("codex-alice", "stopped")
        const { report } = yield* (yield* LiveJoints).register(decl)
        expect(applications(report.outcomes)).toEqual([["claude-alice", "ok", "asleep"], ["codex-alice", "ok", "asleep"]])
        expect(s.journal).toEqual([])
        expect(yield* (yield* Reloads).list).toEqual([])
        expect((yield* (yield* Peers).get("alice")).default_runtime).toBe("claude")
      })))

  live("a runtime the host never reaches: asleep without a status asked, and a reload owed to it is settled", () =>
    Effect.gen(function*() {
      const w = yield* world
      const decl = yield* capability(w, "stamp", ["claude", "codex"])
      const s = yield* ScriptedHost.make
      const asked: Array<string> = []
      // As the Commands host is for a runtime without a `status` command.
      const host: EndpointHostShape = {
        ...s.host,
        status: (ref) => Effect.zipRight(Effect.sync(() => asked.push(ref.identity)), s.host.status(ref)),
        unreachable: (runtime) => runtime === "codex"
      }
      yield* Effect.gen(function*() {
        yield* s.set("claude-alice", "asleep")
        const reloads = yield* Reloads
        yield* reloads.request([{ personality: "alice", runtime: "codex" }], "owed before the sweep")
        const { report } = yield* (yield* LiveJoints).register(decl)
        expect(applications(report.outcomes)).toEqual([["claude-alice", "ok", "asleep"], ["codex-alice", "ok", "asleep"]])
        expect(asked).toEqual(["claude-alice"])
        expect(yield* reloads.list).toEqual([])
        expect(s.journal).toEqual([])
      }).pipe(Effect.provide(scriptedLayer(w, host)))
    }))

  live("a foreign endpoint is reported foreign, never reloaded, never applied", () =>
    scripted((s, decl) =>
      Effect.gen(function*() {
        yield* s.set("claude-alice", "foreign")
        yield* s.set("codex-alice", "idle")
        const { report } = yield* (yield* LiveJoints).register(decl)
        expect(applications(report.outcomes)).toEqual([["claude-alice", "ok", "foreign"], ["codex-alice", "ok", "applied"]])
        expect(s.journal).toEqual(["reload codex-alice"])
      })))

  live("a failed reload is reported failed and stays owed, with its error", () =>
    scripted((s, decl) =>
      Effect.gen(function*() {
        yield* s.set("claude-alice", "idle")
        yield* s.set("codex-alice", "asleep")
        yield* s.failNextReload("claude-alice", "runtime refused")
        const { report } = yield* (yield* LiveJoints).register(decl)
        expect(applications(report.outcomes)[0]).toEqual(["claude-alice", "ok", "failed"])
        expect(report.outcomes[0]?.application_detail).toContain("runtime refused")
        const record = yield* (yield* Reloads).get(yield* refOf("claude"))
        expect(Option.map(record, (r) => [r.requested > r.applied, r.last_error])).toEqual(
          Option.some([true, "endpoint claude-alice: reload failed: runtime refused"])
        )
      })))
})

describe("Scripted host: remove-runtime on a live endpoint", () => {
  live("idle → retired and removed in the call", () =>
    scripted((s) =>
      Effect.gen(function*() {
        yield* s.set("codex-alice", "idle")
        const result = yield* (yield* LiveJoints).removeRuntime("alice", "codex")
        expect(result.removal).toBe("removed")
        expect(s.journal).toEqual(["retire codex-alice"])
        expect((yield* (yield* Peers).get("alice")).runtimes).toEqual(["claude"])
      })))

  live("busy → pending (durable, the runtime stays), removed by the worker after the Turn, never killed", () =>
    scripted((s) =>
      Effect.gen(function*() {
        yield* s.set("codex-alice", "busy")
        const result = yield* (yield* LiveJoints).removeRuntime("alice", "codex")
        expect(result.removal).toBe("pending")
        expect((yield* (yield* Peers).get("alice")).runtimes).toEqual(["claude", "codex"])
        const ref = yield* refOf("codex")
        expect(Option.map(yield* (yield* Reloads).get(ref), (r) => r.removal !== undefined)).toEqual(Option.some(true))
        yield* (yield* Applier).start("50 millis")
        expect(s.journal).toEqual([])
        yield* s.endTurn("codex-alice")
        yield* eventually(Effect.map((yield* Reloads).get(ref), Option.isNone))
        expect(s.journal).toEqual(["retire codex-alice"])
        expect((yield* (yield* Peers).get("alice")).runtimes).toEqual(["claude"])
      })))

  live("--force kills a busy endpoint now and removes it", () =>
    scripted((s) =>
      Effect.gen(function*() {
        yield* s.set("codex-alice", "busy")
        const result = yield* (yield* LiveJoints).removeRuntime("alice", "codex", { force: true })
        expect(result.removal).toBe("removed")
        expect(s.journal).toEqual(["kill codex-alice (busy)"])
        expect((yield* (yield* Peers).get("alice")).runtimes).toEqual(["claude"])
      })))

  live("a foreign endpoint is not removed", () =>
    scripted((s) =>
      Effect.gen(function*() {
        yield* s.set("codex-alice", "foreign")
        const result = yield* (yield* LiveJoints).removeRuntime("alice", "codex", { force: true })
        expect(result.removal).toBe("foreign")
        expect(s.journal).toEqual([])
        expect((yield* (yield* Peers).get("alice")).runtimes).toEqual(["claude", "codex"])
      })))
})

describe("fingerprints: writers outside the core", () => {
  const mcp = (w: { readonly work: string }) => join(w.work, ".mcp.json")
  const fingerprinted = Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const w = yield* world
    yield* seedPeer(w.root, "alice", w.work, ["claude"])
    yield* fs.writeFileString(mcp(w), `{"mcpServers":{}}\n`)
    const s = yield* ScriptedHost.make
    yield* s.set("claude-alice", "idle")
    return { w, s, fs }
  })

  live("no baseline: the current state is adopted and owes nothing; a real edit then owes exactly one reload", () =>
    Effect.gen(function*() {
      const { fs, s, w } = yield* fingerprinted
      yield* Effect.gen(function*() {
        expect(yield* FingerprintPoll.pass).toEqual([]) // adoption
        expect(yield* fs.exists(join(w.root, "state", "fingerprints", "claude-alice.json"))).toBe(true)
        yield* fs.writeFileString(mcp(w), `{"mcpServers":{"x":{"command":"/bin/true"}}}\n`)
        expect(yield* FingerprintPoll.pass).toEqual(["claude-alice"])
        expect(yield* FingerprintPoll.pass).toEqual([]) // one difference, one reload
        const record = yield* (yield* Reloads).get(yield* refOf("claude"))
        expect(Option.map(record, (r) => [r.requested, r.applied])).toEqual(Option.some([1, 0]))
      }).pipe(Effect.provide(scriptedLayer(w, s.host)))
    }))

  live("rewriting identical bytes owes nothing", () =>
    Effect.gen(function*() {
      const { fs, s, w } = yield* fingerprinted
      yield* Effect.gen(function*() {
        expect(yield* FingerprintPoll.pass).toEqual([])
        const bytes = yield* fs.readFileString(mcp(w))
        yield* fs.remove(mcp(w))
        yield* fs.writeFileString(mcp(w), bytes) // new inode, new mtime, same content
        expect(yield* FingerprintPoll.pass).toEqual([])
        expect(yield* (yield* Reloads).list).toEqual([])
      }).pipe(Effect.provide(scriptedLayer(w, s.host)))
    }))

  live("a host-global file is not fingerprinted: editing it owes nothing", () =>
    Effect.gen(function*() {
      const { fs, s, w } = yield* fingerprinted
      yield* Effect.gen(function*() {
        const home = join(w.base, "home")
        yield* fs.makeDirectory(join(home, ".codex"), { recursive: true })
        const globals = [join(home, ".claude.json"), join(home, ".codex", "config.toml")]
        const ref = yield* refOf("claude")
        const files = yield* launchFiles((yield* RuntimeProfiles).config, ref)
        expect(files).toEqual([join(w.work, ".claude", "settings.json"), join(w.work, ".mcp.json")])
        expect(yield* FingerprintPoll.pass).toEqual([])
        for (const g of globals) yield* fs.writeFileString(g, "edited\n")
        expect(yield* FingerprintPoll.pass).toEqual([])
        expect(yield* (yield* Reloads).list).toEqual([])
      }).pipe(Effect.provide(scriptedLayer(w, s.host)))
    }))

  live("an edit of an asleep endpoint's file owes nothing (its next launch reads it)", () =>
    Effect.gen(function*() {
      const { fs, s, w } = yield* fingerprinted
      yield* s.set("claude-alice", "asleep")
      yield* Effect.gen(function*() {
        expect(yield* FingerprintPoll.pass).toEqual([])
        yield* fs.writeFileString(mcp(w), `{"mcpServers":{"y":{"command":"/bin/true"}}}\n`)
        expect(yield* FingerprintPoll.pass).toEqual([])
        expect(yield* (yield* Reloads).list).toEqual([])
      }).pipe(Effect.provide(scriptedLayer(w, s.host)))
    }))
})
