/**
 * Acceptance: docs/city-plugin-lifecycle.md ("Plugin Lifecycle", "Call context", "close"), as
 * issue "City core" states it. One test per behaviour.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Peers from "../../src/services/capabilities/Peers.ts"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as City from "../../src/City.ts"
import * as CapabilityServices from "../../src/layers/CapabilityServices.ts"
import { action } from "../../src/services/Contributions.ts"
import * as Plugin from "../../src/services/Plugin.ts"
import { PluginLifecycleContext } from "../../src/services/PluginLifecycleContext.ts"
import { advanceUntilDone, eventually, failureOf, Journal, makeCity, probe, provideNode } from "../fixtures.ts"

const setup = Effect.gen(function*() {
  const city = yield* makeCity()
  const agent = yield* city.agents.add({ id: "agent-1" })
  const workspace = yield* city.workspaces.add({ id: "ws-1", path: "/tmp/ws-1" })
  return { city, agent, workspace, calls: city.calls({ agent, workspace }) }
})

describe("City core", () => {
  it.scoped("runs one initialize and one dispose per instance", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const { city } = yield* setup
      yield* city.plugins.add(probe("alpha", { journal }))
      expect(Option.map(yield* city.plugins.remove("alpha"), (r) => r.status)).toEqual(Option.some("disposed"))
      yield* city.plugins.add(probe("alpha", { journal }))
      yield* city.close
      expect(journal.events).toEqual([
        "init:alpha",
        "dispose:alpha",
        "release:alpha",
        "init:alpha",
        "dispose:alpha",
        "release:alpha"
      ])
    })))

  it.scoped("rejects a second add of a ready name with the exact message", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const { city } = yield* setup
      yield* city.plugins.add(probe("alpha", { journal }))
      const error = failureOf(yield* Effect.exit(city.plugins.add(probe("alpha", { journal }))))
      expect(error).toMatchObject({ _tag: "RegistryError", reason: "PluginAlreadyRegistered" })
      expect(error.message).toBe("Plugin already exists in City: alpha")
      expect(journal.count("init:alpha")).toBe(1)
    })))

  it.scoped("rejects a second add of a name that is still initializing", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const gate = yield* Deferred.make<void>()
      const entered = yield* Deferred.make<void>()
      const { city } = yield* setup
      const first = yield* Effect.fork(city.plugins.add(probe("alpha", {
        journal,
        initialize: Effect.zipRight(Deferred.succeed(entered, undefined), Deferred.await(gate))
      })))
      yield* Deferred.await(entered)
      const snapshot = yield* city.plugins.get("alpha")
      expect(Option.map(snapshot, (s) => s.status)).toEqual(Option.some("initializing"))
      const error = failureOf(yield* Effect.exit(city.plugins.add(probe("alpha", { journal }))))
      expect(error.message).toBe("Plugin already exists in City: alpha")
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(first)
      expect(journal.count("init:alpha")).toBe(1)
    })))

  it.scoped("rejects an invalid plugin name at add with a typed error", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const { city } = yield* setup
      for (const bad of ["", " padded", "has space", "../escape", "x".repeat(65)]) {
        const error = failureOf(yield* Effect.exit(city.plugins.add(probe(bad, { journal }))))
        expect(error).toMatchObject({ _tag: "RegistryError", reason: "InvalidPluginName" })
        expect(error.message).toContain(JSON.stringify(bad))
      }
      expect(journal.events).toEqual([])
      expect(yield* city.plugins.snapshots).toEqual([])
    })))

  describe("a failed initialize leaves an error snapshot, publishes nothing, releases what it acquired", () => {
    const failing = <E>(journal: Journal, initialize: Effect.Effect<void, E>) =>
      probe("broken", {
        journal,
        initialize,
        contributions: {
          system: () => Effect.succeed("broken system text"),
          hooks: { greet: () => Effect.succeed("from broken") }
        }
      })

    const expectIsolated = (
      city: City.CityShape,
      calls: City.CityCalls,
      journal: Journal
    ) =>
      Effect.gen(function*() {
        const [snapshot] = yield* city.plugins.snapshots
        expect(snapshot?.name).toBe("broken")
        expect(snapshot?.status).toBe("error")
        expect(snapshot?.last_error).toBeTypeOf("string")
        // Nothing it registered is visible anywhere.
        const invoked = failureOf(yield* Effect.exit(calls.invoke("broken", "echo", { text: "x" })))
        expect(invoked).toMatchObject({ _tag: "ActionRejected", reason: "PluginNotReady" })
        // The refusal carries the snapshot's last error, so a caller can say why.
        expect(invoked._tag === "ActionRejected" && invoked.reason === "PluginNotReady" && invoked.last_error).toBe(snapshot?.last_error)
        expect(yield* calls.system()).toEqual([])
        expect(yield* calls.runHooks("greet", "unchanged")).toBe("unchanged")
        // What it acquired was released; it never gets a dispose beyond its own finalizers.
        expect(journal.count("release:broken")).toBe(1)
      })

    it.scoped("when initialize fails", () =>
      provideNode(Effect.gen(function*() {
        const journal = new Journal()
        const { calls, city } = yield* setup
        // The plugin's own typed failure, as it is (as a Layer fails with its own error).
        const error = failureOf(yield* Effect.exit(city.plugins.add(failing(journal, Effect.fail("no database")))))
        expect(error).toBe("no database")
        yield* expectIsolated(city, calls, journal)
        const [snapshot] = yield* city.plugins.snapshots
        expect(snapshot?.last_error).toContain("no database")
      })))

    it.scoped("when initialize dies", () =>
      provideNode(Effect.gen(function*() {
        const journal = new Journal()
        const { calls, city } = yield* setup
        const error = failureOf(
          yield* Effect.exit(city.plugins.add(failing(journal, Effect.die(new Error("boom")))))
        )
        expect(error._tag === "RegistryError" && error.reason === "PluginInitializeFailed" && error.outcome).toBe("died")
        yield* expectIsolated(city, calls, journal)
      })))

    it.scoped("when initialize times out", () =>
      provideNode(Effect.gen(function*() {
        const journal = new Journal()
        const { calls, city } = yield* setup
        const adding = yield* Effect.fork(city.plugins.add(failing(journal, Effect.never)))
        const error = failureOf(yield* advanceUntilDone(adding, "10 seconds"))
        expect(error._tag === "RegistryError" && error.reason === "PluginInitializeFailed" && error.outcome).toBe("timed-out")
        expect(error.message).toContain("30s")
        yield* expectIsolated(city, calls, journal)
      })))

    it.scoped("when initialize is interrupted", () =>
      provideNode(Effect.gen(function*() {
        const journal = new Journal()
        const { calls, city } = yield* setup
        const error = failureOf(yield* Effect.exit(city.plugins.add(failing(journal, Effect.interrupt))))
        expect(error._tag === "RegistryError" && error.reason === "PluginInitializeFailed" && error.outcome).toBe("interrupted")
        yield* expectIsolated(city, calls, journal)
      })))

    it.scoped("when the caller of add is interrupted", () =>
      provideNode(Effect.gen(function*() {
        const journal = new Journal()
        const started = yield* Deferred.make<void>()
        const { calls, city } = yield* setup
        const adding = yield* Effect.fork(
          city.plugins.add(failing(journal, Effect.zipRight(Deferred.succeed(started, undefined), Effect.never)))
        )
        yield* Deferred.await(started)
        yield* Fiber.interrupt(adding)
        yield* expectIsolated(city, calls, journal)
      })))
  })

  it.scoped("a successful retry replaces the error snapshot with ready", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const { calls, city } = yield* setup
      yield* Effect.exit(city.plugins.add(probe("alpha", { journal, initialize: Effect.fail("not yet") })))
      const retried = yield* city.plugins.add(probe("alpha", { journal }))
      expect(retried.status).toBe("ready")
      const snapshots = yield* city.plugins.snapshots
      expect(snapshots.map((s) => [s.name, s.status, s.attempts, s.last_error])).toEqual([
        ["alpha", "ready", 2, undefined]
      ])
      expect(yield* calls.invoke("alpha", "echo", { text: "hi" })).toMatchObject({ text: "hi" })
    })))

  it.scoped("remove answers None for an unknown name, clears an error snapshot, disposes a live plugin", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const { city } = yield* setup
      expect(yield* city.plugins.remove("nobody")).toEqual(Option.none())
      yield* Effect.exit(city.plugins.add(probe("failed", { journal, initialize: Effect.fail("no") })))
      const before = journal.events.length
      expect(Option.map(yield* city.plugins.remove("failed"), (r) => r.status)).toEqual(Option.some("disposed"))
      expect(journal.events.length).toBe(before)
      yield* city.plugins.add(probe("live", { journal }))
      expect(Option.map(yield* city.plugins.remove("live"), (r) => r.status)).toEqual(Option.some("disposed"))
      expect(yield* city.plugins.snapshots).toEqual([])
      expect(journal.count("dispose:live")).toBe(1)
      expect(yield* city.plugins.remove("live")).toEqual(Option.none())
    })))

  it.scoped("a dispose failure at remove is a typed error naming the plugin, and the plugin stays removed", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const { city } = yield* setup
      yield* city.plugins.add(probe("leaky", { journal, dispose: Effect.die(new Error("socket stuck")) }))
      const error = failureOf(yield* Effect.exit(city.plugins.remove("leaky")))
      expect(error).toMatchObject({ _tag: "RegistryError", reason: "PluginDisposeFailed" })
      expect(error.message).toContain("leaky")
      expect(error.message).toContain("socket stuck")
      expect(yield* city.plugins.snapshots).toEqual([])
      expect(journal.count("release:leaky")).toBe(1)
    })))

  it.scoped("each call projects a fresh PluginContext with the caller's agent and workspace", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const { agent, calls, city, workspace } = yield* setup
      yield* city.plugins.add(probe("alpha", { journal }))
      const first = (yield* calls.invoke("alpha", "echo", { text: "1" })) as { ctx: unknown }
      const second = (yield* calls.invoke("alpha", "echo", { text: "2" })) as { ctx: unknown }
      expect(first.ctx).not.toBe(second.ctx)
      expect(first.ctx).toMatchObject({ plugin: "alpha", agent, workspace })
      expect(second.ctx).toMatchObject({ plugin: "alpha", agent, workspace })
    })))

  it.scoped("calls fail with distinct typed errors", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const { calls, city } = yield* setup
      yield* city.plugins.add(probe("alpha", {
        journal,
        contributions: {
          actions: {
            fail: action({ input: Schema.Number, handler: (n) => Effect.fail(`bad ${n}`) })
          }
        }
      }))
      const tags = yield* Effect.forEach([
        calls.invoke("nobody", "echo", {}),
        calls.invoke("alpha", "missing", {}),
        calls.invoke("alpha", "echo", { text: 42 }),
        calls.invoke("alpha", "fail", 7)
      ], (call) => Effect.map(Effect.exit(call), failureOf))
      expect(tags.map((e) => [e._tag, e.name])).toEqual([
        ["ActionRejected", "PluginNotFound"],
        ["ActionRejected", "ActionNotFound"],
        ["ActionRejected", "ActionInputRejected"],
        ["ActionRejected", "ActionFailed"]
      ])
      expect(tags[2]!.message).toContain("text")
      expect(tags[3]!.message).toContain("alpha/fail")
      expect(tags[3]!.message).toContain("bad 7")
    })))

  it.scoped("hooks run in plugin name order, system skips unavailable, failing and empty plugins", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const { calls, city } = yield* setup
      const append = (tag: string) => (v: unknown) => Effect.succeed(`${String(v)}>${tag}`)
      yield* city.plugins.add(probe("b", {
        journal,
        contributions: { hooks: { greet: [append("b1"), append("b2")] }, system: () => Effect.succeed("B text") }
      }))
      yield* city.plugins.add(probe("a", {
        journal,
        contributions: { hooks: { greet: append("a") }, system: () => Effect.succeed("A text") }
      }))
      yield* city.plugins.add(probe("c", {
        journal,
        contributions: {
          system: () => Effect.succeed("C text"),
          availability: () => Effect.succeed({ available: false, reasons: ["no token"] })
        }
      }))
      yield* city.plugins.add(probe("d", { journal, contributions: { system: () => Effect.fail("nope") } }))
      yield* city.plugins.add(probe("e", { journal, contributions: { system: () => Effect.succeed(undefined) } }))
      expect(yield* calls.runHooks("greet", "start")).toBe("start>a>b1>b2")
      expect(yield* calls.system()).toEqual([{ name: "a", content: "A text" }, { name: "b", content: "B text" }])
      expect(yield* calls.availability("c")).toEqual({ available: false, reasons: ["no token"] })
      expect(yield* calls.availability("a")).toEqual({ available: true, reasons: [] })
    })))

  it.scoped("a plugin removed during a running call is disposed only after the call ends", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const entered = yield* Deferred.make<void>()
      const finish = yield* Deferred.make<void>()
      const { calls, city } = yield* setup
      yield* city.plugins.add(probe("slow", {
        journal,
        contributions: {
          actions: {
            work: action({
              input: Schema.Void,
              handler: () =>
                Deferred.succeed(entered, undefined).pipe(
                  Effect.zipRight(Deferred.await(finish)),
                  Effect.zipRight(journal.push("call-end:slow"))
                )
            })
          }
        }
      }))
      const call = yield* Effect.fork(calls.invoke("slow", "work", undefined))
      yield* Deferred.await(entered)
      const removing = yield* Effect.fork(city.plugins.remove("slow"))
      yield* eventually(Effect.map(city.plugins.get("slow"), (s) => Option.getOrUndefined(s)?.status === "disposing"))
      // Out of the view at once: a new call does not see it ...
      const late = failureOf(yield* Effect.exit(calls.invoke("slow", "echo", { text: "x" })))
      expect(late).toMatchObject({ _tag: "ActionRejected", reason: "PluginNotReady" })
      // ... but it is not disposed while the call holds it.
      expect(journal.count("dispose:slow")).toBe(0)
      expect(Option.map(yield* city.plugins.get("slow"), (s) => s.status)).toEqual(Option.some("disposing"))
      yield* Deferred.succeed(finish, undefined)
      yield* Fiber.join(call)
      expect(Option.map(yield* Fiber.join(removing), (r) => r.status)).toEqual(Option.some("disposed"))
      expect(journal.events.slice(-3)).toEqual(["call-end:slow", "dispose:slow", "release:slow"])
    })))

  it.scoped("close disposes in reverse name order, then releases workspaces", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const { city, workspace } = yield* setup
      yield* Scope.addFinalizer(workspace.scope, journal.push("workspace:ws-1"))
      for (const name of ["b", "c", "a"]) yield* city.plugins.add(probe(name, { journal }))
      yield* city.close
      expect(journal.events.filter((e) => e.startsWith("dispose:") || e.startsWith("workspace:"))).toEqual([
        "dispose:c",
        "dispose:b",
        "dispose:a",
        "workspace:ws-1"
      ])
      expect(yield* city.plugins.snapshots).toEqual([])
    })))

  it.scoped("close disposes the others when one dispose fails and reports it", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const { city } = yield* setup
      yield* city.plugins.add(probe("a", { journal }))
      yield* city.plugins.add(probe("b", { journal, dispose: Effect.die(new Error("b broke")) }))
      yield* city.plugins.add(probe("c", { journal }))
      const error = failureOf(yield* Effect.exit(city.close))
      expect(error._tag).toBe("CityCloseError")
      expect(error.failures.map((f) => f.subject)).toEqual(["plugin b"])
      expect(error.message).toContain("b broke")
      expect(journal.count("dispose:a") + journal.count("dispose:c")).toBe(2)
    })))

  it.scoped("close reports a dispose that hangs past disposeTimeout and still disposes the others", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const city = yield* makeCity({ disposeTimeout: "1 second" })
      yield* city.plugins.add(probe("a", { journal, dispose: Effect.die(new Error("a broke")) }))
      yield* city.plugins.add(probe("b", { journal, dispose: Effect.never }))
      yield* city.plugins.add(probe("c", { journal }))
      const closing = yield* Effect.fork(city.close)
      const error = failureOf(yield* advanceUntilDone(closing, "500 millis"))
      expect(error.failures.map((f) => f.subject)).toEqual(["plugin b", "plugin a"])
      expect(error.message).toContain("timed-out")
      expect(journal.count("dispose:c")).toBe(1)
      expect(journal.count("dispose:a")).toBe(1)
    })))

  it.scoped("after close, adds and calls fail with CityClosed", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const { calls, city } = yield* setup
      yield* city.plugins.add(probe("alpha", { journal }))
      yield* city.close
      const added = failureOf(yield* Effect.exit(city.plugins.add(probe("beta", { journal }))))
      const invoked = failureOf(yield* Effect.exit(calls.invoke("alpha", "echo", { text: "x" })))
      expect([added._tag, invoked._tag]).toEqual(["CityClosed", "CityClosed"])
      expect(journal.count("init:beta")).toBe(0)
    })))

  it.scoped("concurrent closes share one result and dispose once", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const { city } = yield* setup
      yield* city.plugins.add(probe("a", { journal, dispose: Effect.die(new Error("a broke")) }))
      const [x, y, z] = yield* Effect.all([Effect.exit(city.close), Effect.exit(city.close), Effect.exit(city.close)], {
        concurrency: "unbounded"
      })
      expect(failureOf(x!)).toBe(failureOf(y!))
      expect(failureOf(y!)).toBe(failureOf(z!))
      expect(journal.count("dispose:a")).toBe(1)
    })))

  it.scoped("remove racing close disposes once", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const { city } = yield* setup
      yield* city.plugins.add(probe("a", { journal }))
      yield* Effect.all([Effect.exit(city.plugins.remove("a")), Effect.exit(city.close)], { concurrency: "unbounded" })
      expect(journal.count("dispose:a")).toBe(1)
    })))

  it.scoped("snapshots are sorted by name and changes streams each change", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const { city } = yield* setup
      const subscribed = yield* Deferred.make<void>()
      yield* city.plugins.add(probe("a", { journal }))
      const seen = yield* Effect.fork(Stream.runCollect(
        city.plugins.changes.pipe(
          Stream.tap(() => Deferred.succeed(subscribed, undefined)),
          Stream.takeUntil((c) => c._tag === "Updated" && c.snapshot.name === "C" && c.snapshot.status === "ready")
        )
      ))
      yield* Deferred.await(subscribed)
      yield* city.plugins.add(probe("b", { journal, version: "2.0.0" }))
      yield* city.plugins.remove("a")
      yield* city.plugins.add(probe("C", { journal }))
      const changes = Chunk.toReadonlyArray(yield* Fiber.join(seen)).map((c) =>
        c._tag === "Removed" ? `-${c.name}` : `${c.snapshot.name}:${c.snapshot.status}`
      )
      // "C" before "b": code-unit order, not the locale's ("B" and "b" would be one name: PluginName).
      // The subscriber first gets the current state ("a" ready), then each change as itself.
      expect(changes).toEqual(["a:ready", "b:initializing", "b:ready", "a:disposing", "-a", "C:initializing", "C:ready"])
      expect((yield* city.plugins.snapshots).map((s) => s.name)).toEqual(["C", "b"])
      const [, b] = yield* city.plugins.snapshots
      expect(b).toMatchObject({ name: "b", version: "2.0.0", attempts: 1, source: "code" })
    })))

  it.scoped("the plugin's lifecycle context is one stable object for initialize and dispose", () =>
    provideNode(Effect.gen(function*() {
      const seen: Array<unknown> = []
      const { city } = yield* setup
      yield* city.plugins.add(Plugin.make({
        name: "ctx",
        initialize: Effect.gen(function*() {
          const ctx = yield* PluginLifecycleContext
          seen.push(ctx)
          yield* Effect.addFinalizer(() => Effect.sync(() => seen.push(ctx)))
          return {}
        })
      }))
      yield* city.plugins.remove("ctx")
      expect(seen).toHaveLength(2)
      expect(seen[0]).toBe(seen[1])
      expect(seen[0]).toMatchObject({ name: "ctx" })
      expect((seen[0] as { storage: { path: string } }).storage.path).toMatch(/data\/ctx$/)
    })))

  describe("the Promise/class adapter", () => {
    class ProviderPlugin {
      readonly name = "provider"
      opened: string | undefined
      closed = 0
      readonly actions = {
        where: Plugin.promiseAction({
          input: Schema.Void,
          handler: async (_input, ctx) => `${this.opened} for ${ctx.agent.id}`
        })
      }
      async initialize({ storage }: { storage: { path: string } }) {
        this.opened = storage.path
      }
      async dispose() {
        this.closed++
      }
    }

    it.scoped("initializes and disposes a class instance once each", () =>
      provideNode(Effect.gen(function*() {
        const { calls, city } = yield* setup
        const provider = new ProviderPlugin()
        yield* city.plugins.add(Plugin.fromPromise(provider))
        const where = yield* calls.invoke("provider", "where", undefined)
        expect(where).toMatch(/data\/provider for agent-1$/)
        yield* city.plugins.remove("provider")
        expect(provider.closed).toBe(1)
      })))

    it.scoped("a rejection in initialize is a typed error with the plugin's name", () =>
      provideNode(Effect.gen(function*() {
        const { city } = yield* setup
        const error = failureOf(yield* Effect.exit(city.plugins.add(Plugin.fromPromise({
          name: "rejects",
          initialize: () => Promise.reject(new Error("cannot open"))
        }))))
        // The Promise adapter's own typed failure, unwrapped by add.
        expect(error._tag).toBe("PluginCallbackFailed")
        expect(error.message).toContain("rejects")
        expect(error.message).toContain("cannot open")
      })))

    it.scoped("a synchronous throw in dispose does not stop other cleanup", () =>
      provideNode(Effect.gen(function*() {
        const journal = new Journal()
        const { city } = yield* setup
        yield* city.plugins.add(Plugin.fromPromise({
          name: "thrower",
          dispose: () => {
            throw new Error("sync dispose throw")
          }
        }))
        yield* city.plugins.add(probe("after", { journal }))
        yield* city.plugins.add(probe("before", { journal }))
        const error = failureOf(yield* Effect.exit(city.close))
        expect(error.failures.map((f) => f.subject)).toEqual(["plugin thrower"])
        expect(error.message).toContain("sync dispose throw")
        expect(journal.count("dispose:after")).toBe(1)
        expect(journal.count("dispose:before")).toBe(1)
      })))
  })

  describe("City.make and City.layer", () => {
    it.scoped("City.layer builds the City (and only it); its Scope closes the City; the capability services are opt-in beside it", () =>
      provideNode(Effect.gen(function*() {
        const journal = new Journal()
        const fs = yield* FileSystem.FileSystem
        const root = yield* fs.makeTempDirectoryScoped({ prefix: "city-layer-" })
        // A bad host.json: an application that never provisions never reads it.
        yield* fs.writeFileString(`${root}/host.json`, "{ not json")
        const scope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(City.layer({ root, plugins: [probe("alpha", { journal })] }), scope)
        const city = Context.get(context, City.City)
        expect((yield* city.plugins.snapshots).map((s) => s.name)).toEqual(["alpha"])
        yield* Scope.close(scope, Exit.void)
        expect(journal.events).toEqual(["init:alpha", "dispose:alpha", "release:alpha"])
        expect(failureOf(yield* Effect.exit(city.plugins.add(probe("beta", { journal }))))._tag).toBe("CityClosed")
        // The capability services on the same root, composed beside it, do read host.json.
        const refused = yield* Effect.exit(Layer.build(Layer.merge(City.layer({ root }), CapabilityServices.layer({ root }))))
        expect(failureOf(refused)).toMatchObject({ _tag: "InvalidFile", reason: "HostConfig" })
        yield* fs.remove(`${root}/host.json`)
        const both = yield* Layer.build(Layer.merge(City.layer({ root }), CapabilityServices.layer({ root })))
        expect(yield* Context.get(both, Peers.Peers).exists("nobody")).toBe(false)
      })))

    it.scoped("City.layer fails with a typed error for a start plugin with a bad name", () =>
      provideNode(Effect.gen(function*() {
        const journal = new Journal()
        const exit = yield* Effect.exit(Layer.build(City.layer({ root: "/tmp/unused", plugins: [probe("no good", { journal })] })))
        expect(failureOf(exit)).toMatchObject({ _tag: "RegistryError", reason: "InvalidPluginName" })
      })))

    it.scoped("different names initialize concurrently", () =>
      provideNode(Effect.gen(function*() {
        const journal = new Journal()
        const a = yield* Deferred.make<void>()
        const b = yield* Deferred.make<void>()
        // Each initialize waits for the other to have started: serialized initializes would hang.
        const city = yield* makeCity({
          plugins: [
            probe("a", { journal, initialize: Effect.zipRight(Deferred.succeed(a, undefined), Deferred.await(b)) }),
            probe("b", { journal, initialize: Effect.zipRight(Deferred.succeed(b, undefined), Deferred.await(a)) })
          ]
        })
        expect((yield* city.plugins.snapshots).map((s) => s.status)).toEqual(["ready", "ready"])
      })))

    it.scoped("closing the layer's Scope runs the same close and logs the aggregate", () =>
      provideNode(Effect.gen(function*() {
        const journal = new Journal()
        const logged: Array<string> = []
        const logger = Logger.make(({ message }) => {
          logged.push(Array.isArray(message) ? message.join(" ") : String(message))
        })
        const scope = yield* Scope.make()
        const city = yield* Scope.extend(
          makeCity({ plugins: [probe("a", { journal }), probe("b", { journal, dispose: Effect.die(new Error("b broke")) })] }),
          scope
        )
        yield* Scope.close(scope, Exit.void).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
        expect(journal.events.filter((e) => e.startsWith("dispose:"))).toEqual(["dispose:b", "dispose:a"])
        expect(logged.some((line) => line.includes("City close had 1 cleanup failure") && line.includes("b broke"))).toBe(true)
        // The close already ran and failed: calling it again returns that failure, running nothing.
        const error = failureOf(yield* Effect.exit(city.close))
        expect(error.failures.map((f) => f.subject)).toEqual(["plugin b"])
      })))

    it.scoped("starts given plugins concurrently and isolates an optional one that fails", () =>
      provideNode(Effect.gen(function*() {
        const journal = new Journal()
        const city = yield* makeCity({
          plugins: [probe("good", { journal }), probe("bad", { journal, initialize: Effect.fail("optional broke") })]
        })
        const snapshots = yield* city.plugins.snapshots
        expect(snapshots.map((s) => [s.name, s.status])).toEqual([["bad", "error"], ["good", "ready"]])
      })))

    it.scoped("fails to build when a required plugin fails, with its own failure", () =>
      provideNode(Effect.gen(function*() {
        const journal = new Journal()
        const exit = yield* Effect.exit(Effect.scoped(makeCity({
          plugins: [
            probe("good", { journal }),
            { plugin: probe("needed", { journal, initialize: Effect.fail("required broke") }), required: true }
          ]
        })))
        expect(failureOf(exit)).toBe("required broke")
        // The partial City was closed: the good plugin was disposed.
        expect(journal.count("dispose:good")).toBe(1)
      })))
  })
})

describe("what remove returns", () => {
  it.scoped("an Option of a Removal, which prints as its status", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const city = yield* makeCity()
      yield* city.plugins.add(probe("alpha", { journal }))
      const removal = yield* city.plugins.remove("alpha")
      expect(Option.isSome(removal)).toBe(true)
      if (Option.isNone(removal)) return
      expect(JSON.stringify(removal.value)).toBe(`{"_tag":"Removal","status":"disposed"}`)
      expect(String(removal.value)).toBe("Removal(disposed)")
      const { inspect } = yield* Effect.promise(() => import("node:util"))
      expect(inspect(removal.value)).not.toContain("effect_instruction")
      expect(yield* city.plugins.remove("alpha")).toEqual(Option.none())
    })))
})
