/**
 * Worker-isolated plugins (docs/plugin-loader.md, "Isolation"; docs/design.md, "Third-party
 * plugins"): real plugin folders loaded by the loader into worker threads of their own, through
 * `@effect/platform`'s serialized Worker; the worker is the plugin's resource, its contributions
 * cross with their Schemas (an action reference's output and error Schemas too: encoded in the
 * worker, decoded by the caller's reference), and whatever the plugin does in its thread (a spin, a leak,
 * `process.exit()`, an uncaught throw) ends that thread only. The test process is the host: that
 * it is still here to assert is part of each containment test.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as fs from "node:fs"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import type { StepView } from "../../src/services/city/Session.ts"
import * as Contributions from "../../src/services/Contributions.ts"
import * as WorkerPlugin from "../../src/services/isolation/WorkerPlugin.ts"
import { eventually, provideNode } from "../fixtures.ts"
import { cityProcess, json, tempDir } from "../acceptance/cityCli.ts"
import { startPluginDaemon, within } from "../support/pluginDaemon.ts"
import { effectEntry, makeRoots, manifest, registerEntry, startLoader, unique, withLogs, writePlugin } from "../loaderFixtures.ts"
import { errorOf, sessionOn, watchStatuses } from "./isolated.ts"

/** The status and last error of `name`'s snapshot. */
const snapshotOf = (loaded: Effect.Effect.Success<ReturnType<typeof startLoader>>, name: string) =>
  Effect.map(loaded.registry.get(name), Option.map((s) => ({ status: s.status, last_error: s.last_error })))

/**
 * Whether a thread of this process still spins: the process's CPU time over half a second of
 * wall time (a spinning thread adds about as much as the wall time; an idle process next to none).
 */
const nothingSpins = Effect.gen(function*() {
  const before = process.cpuUsage()
  yield* Effect.sleep(Duration.millis(500))
  const used = process.cpuUsage(before)
  return (used.user + used.system) / 1000 < 250
})

describe("worker-isolated plugins", () => {
  it.scopedLive("an instance-root plugin is isolated by default; one whose services siblings would use is skipped saying how to trust it, and loads on the host's thread once trusted, said in one line", () =>
    provideNode(withLogs(() =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        writePlugin(instance, "store", {
          manifest: manifest("store"),
          files: {
            "index.mjs": [
              `import * as Context from "effect/Context"`,
              `import * as Effect from "effect/Effect"`,
              `import { Plugin } from "effect-city/plugin"`,
              `class Store extends Context.Tag("Store")() {}`,
              `export default Plugin.make({ name: "store", provides: [Store], initialize: Effect.succeed({ services: Context.make(Store, { get: () => 1 }) }) })`,
              ``
            ].join("\n")
          }
        })
        writePlugin(instance, "plain", { manifest: manifest("plain"), files: { "index.mjs": registerEntry(unique("plain"), `ctx.registerSystem("plain")`) } })
        const names = ["plain", "store"]
        const isolated = yield* startLoader(root, { enabled: names, licensed: names, isolation: {} })
        const report = yield* isolated.generations.current
        expect(report.loaded.map((p) => [p.name, p.isolation])).toEqual([["plain", "worker"]])
        expect(report.skipped.map((s) => s.reason).join("\n")).toContain(
          `a service cannot leave its worker: trust it on the host's thread with "isolation": { "store": "none" } in plugins.json`
        )
        expect(report.notices).toEqual([])
        const trusted = yield* startLoader(root, { enabled: names, licensed: names, isolation: { store: "none" } })
        const again = yield* trusted.generations.current
        expect(again.loaded.map((p) => [p.name, p.isolation])).toEqual([["plain", "worker"], ["store", "none"]])
        expect(again.notices).toEqual([`on the host's thread, trusted by ${path.join(root, "plugins.json")}: store`])
      })
    )))
})

describe("the City's semantics hold for a plugin in a worker", () => {
  it.scopedLive("removal under a lease: the Step keeps calling the removed plugin; its dispose runs in the worker after the lease, then the thread ends", () =>
    provideNode(withLogs(() =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        const disposed = path.join(root, "disposed.txt")
        writePlugin(instance, "notes", {
          manifest: manifest("notes", { isolation: "worker" }),
          files: {
            "index.mjs": registerEntry(unique("notes"), [
              `const { writeFileSync } = await import("node:fs")`,
              `ctx.registerAction("hello", { handler: () => "hello" })`,
              `ctx.onDispose(() => writeFileSync(${JSON.stringify(disposed)}, "disposed in the worker"))`
            ].join("\n"))
          }
        })
        const loaded = yield* startLoader(root, { enabled: ["notes"], licensed: ["notes"] })
        const session = yield* sessionOn(loaded, root)
        const removal = yield* session.turn((turn) =>
          turn.step((calls) =>
            Effect.gen(function*() {
              const removing = yield* Effect.fork(loaded.registry.remove("notes"))
              yield* eventually(Effect.map(snapshotOf(loaded, "notes"), (s) => Option.isSome(s) && s.value.status === "disposing"))
              // Still this Step's: its lease holds the plugin, and its worker answers.
              expect(yield* calls.invoke("notes", "hello", null)).toBe("hello")
              expect(fs.existsSync(disposed)).toBe(false)
              return removing
            })
          )
        )
        // Issued under its own lease, the removal was pending; its disposal runs once the Step let go.
        const removed = yield* Fiber.join(removal)
        expect(Option.map(removed, (r) => r.status)).toEqual(Option.some("pending"))
        if (Option.isSome(removed)) yield* removed.value.disposal
        expect(fs.readFileSync(disposed, "utf8")).toBe("disposed in the worker")
        const names = yield* session.turn((turn) => turn.step((calls) => Effect.succeed(calls.names)))
        expect(names).toEqual([])
      })
    )))

  it.scopedLive.each(["worker", "process"] as const)("%s: a dispose's log lines reach the host's log, in order, before the thread ends; the storage folder is made only when the plugin reads its path, private (0700)", (mode) =>
    provideNode(withLogs((logs) =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        const previous = process.umask(0o022)
        yield* Effect.addFinalizer(() => Effect.sync(() => process.umask(previous)))
        writePlugin(instance, "keeper", {
          manifest: manifest("keeper", { isolation: mode }),
          files: {
            "index.mjs": effectEntry(unique("keeper"), "keeper", [
              `const { Contributions, PluginLifecycleContext } = yield* Effect.promise(() => import("effect-city/plugin"))`,
              `const Schema = yield* Effect.promise(() => import("effect/Schema"))`,
              `const { writeFileSync } = yield* Effect.promise(() => import("node:fs"))`,
              `const lifecycle = yield* PluginLifecycleContext.PluginLifecycleContext`,
              `yield* Effect.addFinalizer(() => Effect.log("keeper: closing").pipe(Effect.zipRight(Effect.sleep(50)), Effect.zipRight(Effect.log("keeper: closed"))))`,
              `const keep = () => Effect.sync(() => { writeFileSync(lifecycle.storage.path + "/kept.txt", "kept"); return "kept" })`,
              `return { actions: { keep: Contributions.action({ input: Schema.Null, handler: keep }) } }`
            ].join("\n"))
          }
        })
        writePlugin(instance, "quiet", {
          manifest: manifest("quiet", { isolation: mode }),
          files: { "index.mjs": registerEntry(unique("quiet"), `ctx.onDispose(() => ctx.log.info("quiet: disposed"))`) }
        })
        const names = ["keeper", "quiet"]
        const loaded = yield* startLoader(root, { enabled: names, licensed: names })
        const session = yield* sessionOn(loaded, root)
        expect(fs.existsSync(path.join(root, "data"))).toBe(false)
        expect(yield* session.turn((turn) => turn.step((view) => view.invoke("keeper", "keep", null)))).toBe("kept")
        expect(fs.readFileSync(path.join(root, "data", "keeper", "kept.txt"), "utf8")).toBe("kept")
        expect(fs.statSync(path.join(root, "data")).mode & 0o777).toBe(0o700)
        expect(fs.statSync(path.join(root, "data", "keeper")).mode & 0o777).toBe(0o700)
        expect(fs.existsSync(path.join(root, "data", "quiet"))).toBe(false)

        for (const name of names) {
          const removed = yield* loaded.registry.remove(name)
          if (Option.isSome(removed)) yield* removed.value.disposal
        }
        const lines = logs.map((l) => l.message).filter((m) => /^(keeper|quiet): /.test(m))
        expect(lines).toEqual(["keeper: closing", "keeper: closed", "quiet: disposed"])
        expect(logs.find((l) => l.message === "keeper: closed")?.annotations["plugin"]).toBe("keeper")
      })
    )))

  it.scopedLive("a reference's error and output Schemas cross: the declared failure is caught by its tag, the result arrives decoded (a Date, an Option)", () =>
    provideNode(withLogs(() =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        // The plugin's module declares the reference; the host's copy below is the same declaration.
        const declaration = [
          `class UnknownUser extends Schema.TaggedError()("UnknownUser", { user: Schema.String }) {}`,
          `const User = Schema.Struct({ name: Schema.NonEmptyString, since: Schema.DateFromString, nick: Schema.Option(Schema.String) })`,
          `export const Find = Contributions.reference({ plugin: "users", action: "find", input: Schema.String, output: User, error: UnknownUser })`
        ]
        writePlugin(instance, "users", {
          manifest: manifest("users", { isolation: "worker" }),
          files: {
            "index.mjs": [
              `import * as Effect from "effect/Effect"`,
              `import * as Option from "effect/Option"`,
              `import * as Schema from "effect/Schema"`,
              `import { Contributions, Plugin } from "effect-city/plugin"`,
              ...declaration,
              `const find = (user) =>`,
              `  user === "grace" ? Effect.succeed({ name: "Grace", since: new Date(0), nick: Option.some("g") })`,
              `  : user === "nameless" ? Effect.succeed({ name: "", since: new Date(0), nick: Option.none() })`,
              `  : user === "dying" ? Effect.dieMessage("boom")`,
              `  : Effect.fail(new UnknownUser({ user }))`,
              `export default Plugin.make({ name: "users", initialize: Effect.succeed({ actions: { [Find.action]: Contributions.implement(Find, find) } }) })`,
              ``
            ].join("\n")
          }
        })
        class UnknownUser extends Schema.TaggedError<UnknownUser>()("UnknownUser", { user: Schema.String }) {}
        const User = Schema.Struct({ name: Schema.NonEmptyString, since: Schema.DateFromString, nick: Schema.Option(Schema.String) })
        const Find = Contributions.reference({ plugin: "users", action: "find", input: Schema.String, output: User, error: UnknownUser })

        const loaded = yield* startLoader(root, { enabled: ["users"], licensed: ["users"] })
        expect((yield* loaded.generations.current).loaded.map((p) => [p.name, p.isolation])).toEqual([["users", "worker"]])
        const session = yield* sessionOn(loaded, root)
        const step = <A, E>(f: (view: StepView) => Effect.Effect<A, E>) => session.turn((turn) => turn.step(f))

        // Encoded in the worker with the output Schema, decoded here with the reference's.
        const grace = yield* step((view) => view.invoke(Find, "grace"))
        expect(grace.since).toBeInstanceOf(Date)
        expect(grace.since.getTime()).toBe(0)
        expect(Option.isOption(grace.nick) && Option.getOrNull(grace.nick)).toBe("g")
        // By name, what crossed is the encoded form: the caller has no Schema to decode it with.
        expect(yield* step((view) => view.invoke("users", "find", "grace"))).toEqual({
          name: "Grace",
          since: "1970-01-01T00:00:00.000Z",
          nick: { _tag: "Some", value: "g" }
        })

        // The declared failure: encoded in the worker, decoded here into the host's own class.
        const caught = yield* step((view) => view.invoke(Find, "ada").pipe(Effect.catchTag("UnknownUser", (e) => Effect.succeed(e))))
        expect(caught).toBeInstanceOf(UnknownUser)
        expect(caught).toMatchObject({ user: "ada" })
        // By name it stays ActionFailed; a defect stays ActionFailed by reference too.
        expect(yield* Effect.flip(step((view) => view.invoke("users", "find", "ada")))).toMatchObject({ _tag: "ActionRejected", reason: "ActionFailed" })
        expect(yield* Effect.flip(step((view) => view.invoke(Find, "dying")))).toMatchObject({ _tag: "ActionRejected", reason: "ActionFailed" })

        // A result the output Schema refuses is refused in the worker, named as in the host's thread.
        const rejected = yield* Effect.flip(step((view) => view.invoke(Find, "nameless")))
        if (rejected._tag !== "ActionRejected" || rejected.reason !== "ActionOutputRejected") return expect.unreachable(rejected._tag)
        expect(rejected).toMatchObject({ plugin: "users", action: "find" })
        expect(rejected.issue).toMatch(/^name: /)
      })
    )))

  it.scopedLive("a skills reload asked from the worker is seen by the next Turn", () =>
    provideNode(withLogs(() =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        writePlugin(instance, "skilled", {
          manifest: manifest("skilled", { isolation: "worker" }),
          files: {
            "index.mjs": registerEntry(unique("skilled"), [
              `ctx.registerSkills([{ name: "old" }])`,
              `ctx.registerAction("learn", { handler: async () => { await ctx.requestReload({ mode: "reload", skills: [{ name: "fresh" }] }); return "asked" } })`
            ].join("\n"))
          }
        })
        const loaded = yield* startLoader(root, { enabled: ["skilled"], licensed: ["skilled"] })
        const session = yield* sessionOn(loaded, root)
        const skills = session.turn((turn) => turn.step((calls) => Effect.succeed(calls.view.get("skilled")?.contributions.skills)))
        expect(yield* skills).toEqual([{ name: "old" }])
        expect(yield* session.turn((turn) => turn.step((calls) => calls.invoke("skilled", "learn", null)))).toBe("asked")
        expect(yield* skills).toEqual([{ name: "fresh" }])
      })
    )))
})

describe("containment: a plugin in a worker cannot freeze or end the host", () => {
  it.scopedLive("an initialize that spins is ended at its timeout by ending the worker, and the host answers a Step of another plugin meanwhile", () =>
    provideNode(withLogs(() =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        writePlugin(instance, "steady", { manifest: manifest("steady"), files: { "index.mjs": registerEntry(unique("steady"), `ctx.registerAction("ping", { handler: () => "pong" })`) } })
        const spin = path.join(instance, "spin")
        writePlugin(instance, "spin", { manifest: manifest("spin"), files: { "index.mjs": registerEntry(unique("spin"), `while (true) {}`) } })
        const loaded = yield* startLoader(root, { enabled: ["steady"], licensed: ["steady"] }, { initializeTimeout: "1 second" })
        const session = yield* sessionOn(loaded, root)
        const plugin = WorkerPlugin.make({
          name: "spin",
          version: "1.0.0",
          url: pathToFileURL(path.join(spin, "index.mjs")).href,
          folder: spin,
          limits: WorkerPlugin.defaultLimits,
          invoke: () => Effect.die("no siblings here")
        })
        const started = Date.now()
        const adding = yield* Effect.fork(Effect.exit(loaded.registry.add(plugin)))
        yield* Effect.sleep(Duration.millis(300))
        // Mid-spin: the host's thread is free, another plugin's Step is answered.
        expect(yield* session.turn((turn) => turn.step((view) => view.invoke("steady", "ping", null)))).toBe("pong")
        expect(Option.isNone(yield* Fiber.poll(adding))).toBe(true)
        const added = yield* Fiber.join(adding)
        expect(Exit.isFailure(added)).toBe(true)
        expect(Date.now() - started).toBeLessThan(8_000)
        expect(yield* snapshotOf(loaded, "spin")).toEqual(Option.some({
          status: "error",
          last_error: "TimeoutException: initialize of spin did not complete within 1s"
        }))
        // The spinning thread was ended, not left behind.
        yield* eventually(nothingSpins)
      })
    )))

  it.scopedLive.each(["worker", "process"] as const)("%s: a call that spins: within 5 s the plugin is unresponsive, blamed by the file and line it runs, its Step fails typed, the host answers meanwhile, and it starts again by itself", (mode) =>
    provideNode(withLogs((logs) =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        writePlugin(instance, "busy", {
          manifest: manifest("busy", { isolation: mode }),
          files: {
            "index.mjs": registerEntry(unique("busy"), [
              `function spinForever() { while (true) {} }`,
              `ctx.registerAction("spin", { handler: () => spinForever() })`,
              `ctx.registerAction("ok", { handler: () => "fine" })`
            ].join("\n"))
          }
        })
        writePlugin(instance, "steady", { manifest: manifest("steady"), files: { "index.mjs": registerEntry(unique("steady"), `ctx.registerAction("ping", { handler: () => "pong" })`) } })
        const names = ["busy", "steady"]
        const loaded = yield* startLoader(root, { enabled: names, licensed: names })
        const session = yield* sessionOn(loaded, root)
        const statuses = yield* watchStatuses(loaded, "busy")
        const started = Date.now()
        const spinning = yield* Effect.fork(Effect.exit(session.turn((turn) => turn.step((view) => view.invoke("busy", "spin", null)))))
        // Mid-spin: another plugin's Step is answered.
        yield* Effect.sleep(Duration.millis(500))
        expect(yield* session.turn((turn) => turn.step((view) => view.invoke("steady", "ping", null)))).toBe("pong")
        const spun = yield* Fiber.join(spinning)
        expect(errorOf(spun)).toContain("WorkerEnded")
        // The Step's error says where the plugin ran, as its snapshot does.
        expect(errorOf(spun)).toContain(`Plugin busy: its ${mode} ended: `)
        yield* eventually(Effect.sync(() => statuses.some((s) => s.status === "unresponsive")))
        expect(Date.now() - started).toBeLessThan(5_000)
        const unresponsive = statuses.find((s) => s.status === "unresponsive")!
        // Blamed by name, function, file and line (the entry's line 3: a marker, then `register`).
        expect(unresponsive.last_error).toMatch(new RegExp(`^its ${mode} ended: ` + /it was unresponsive: no heartbeat for 3\.\d s, running spinForever \(file:.*\/busy\/index\.mjs\?[^:]*:3:\d+\)$/.source))
        const warning = logs.find((l) => l.annotations["code"] === "plugin.unresponsive")
        expect(warning?.annotations["plugin"]).toBe("busy")
        expect(String(warning?.annotations["location"])).toMatch(/^spinForever \(file:.*index\.mjs.*:3:\d+\)$/)
        expect(logs.some((l) => l.annotations["code"] === "plugin.restart" && l.message.includes("starting it again in 1s (crash 1 of 5 within 10m)"))).toBe(true)
        yield* eventually(nothingSpins)
        // Started again after 1 s, in a fresh worker, without anyone asking.
        yield* eventually(Effect.sync(() => statuses.at(-1)?.status === "ready"))
        expect(statuses.map((s) => s.status).slice(-3)).toEqual(["unresponsive", "initializing", "ready"])
        expect(yield* session.turn((turn) => turn.step((view) => view.invoke("busy", "ok", null)))).toBe("fine")
      })
    )))

  it.scopedLive("a spin in a timer and a microtask loop, outside any call, are seen by the heartbeat: unresponsive, blamed, ended", () =>
    provideNode(withLogs(() =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        writePlugin(instance, "timer", {
          manifest: manifest("timer", { isolation: "worker" }),
          files: { "index.mjs": registerEntry(unique("timer"), `ctx.registerAction("arm", { handler: () => { setTimeout(function spinInTimer() { for (;;) {} }, 10); return "armed" } })`) }
        })
        writePlugin(instance, "micro", {
          manifest: manifest("micro", { isolation: "worker" }),
          files: { "index.mjs": registerEntry(unique("micro"), `ctx.registerAction("arm", { handler: () => { const again = () => Promise.resolve().then(again); setTimeout(again, 10); return "armed" } })`) }
        })
        const names = ["micro", "timer"]
        const loaded = yield* startLoader(root, { enabled: names, licensed: names })
        const session = yield* sessionOn(loaded, root)
        const timer = yield* watchStatuses(loaded, "timer")
        const micro = yield* watchStatuses(loaded, "micro")
        expect(yield* session.turn((turn) => turn.step((view) => view.invoke("timer", "arm", null)))).toBe("armed")
        expect(yield* session.turn((turn) => turn.step((view) => view.invoke("micro", "arm", null)))).toBe("armed")
        const armed = Date.now()
        // A microtask loop's promises pile up (Node's promise hooks keep each one while the queue
        // never drains): under load its heap may reach the cap before its silence reaches 3 s.
        const microEnded = (s: { status: string }) => s.status === "unresponsive" || s.status === "error"
        yield* eventually(Effect.sync(() => timer.some((s) => s.status === "unresponsive") && micro.some(microEnded)))
        expect(Date.now() - armed).toBeLessThan(5_000)
        expect(timer.find((s) => s.status === "unresponsive")?.last_error).toMatch(/running spinInTimer \(file:.*timer\/index\.mjs.*:3:\d+\)$/)
        expect(micro.find(microEnded)?.last_error).toMatch(
          /^its worker ended: (it was unresponsive: no heartbeat for 3\.\d s, running again \(file:.*micro\/index\.mjs.*:3:\d+\)|it ran out of memory \(heap cap 256 MiB\))$/
        )
        // Ended, each started again in a fresh worker.
        yield* eventually(Effect.sync(() => timer.at(-1)?.status === "ready" && micro.at(-1)?.status === "ready"))
      })
    )), 30_000)

  it.scopedLive("a leak meets the worker's heap cap: the plugin's error snapshot, not the host's death", () =>
    provideNode(withLogs(() =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        writePlugin(instance, "leaky", {
          manifest: manifest("leaky", { isolation: "worker" }),
          files: {
            "index.mjs": registerEntry(unique("leaky"), `const hoard = []; ctx.registerAction("grow", { handler: () => { for (;;) hoard.push(new Array(100000).fill(hoard.length)) } })`)
          }
        })
        const loaded = yield* startLoader(root, { enabled: ["leaky"], licensed: ["leaky"], workerLimits: { heapMb: 32 } })
        const session = yield* sessionOn(loaded, root)
        const statuses = yield* watchStatuses(loaded, "leaky")
        const grown = yield* Effect.exit(session.turn((turn) => turn.step((view) => view.invoke("leaky", "grow", null))))
        expect(errorOf(grown)).toContain("WorkerEnded")
        yield* eventually(Effect.sync(() => statuses.some((s) => s.status === "error")))
        expect(statuses.find((s) => s.status === "error")).toEqual({ status: "error", last_error: "its worker ended: it ran out of memory (heap cap 32 MiB)" })
      })
    )))

  it.scopedLive("process.exit(), process.abort(), process.kill(process.pid, \"SIGKILL\") and an uncaught throw in a timer end only the plugin's worker; its leases end, its snapshot says why, and it starts again", () =>
    provideNode(withLogs(() =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        writePlugin(instance, "quitter", {
          manifest: manifest("quitter", { isolation: "worker" }),
          files: { "index.mjs": registerEntry(unique("quitter"), `ctx.registerAction("quit", { handler: () => process.exit(7) })`) }
        })
        writePlugin(instance, "thrower", {
          manifest: manifest("thrower", { isolation: "worker" }),
          files: { "index.mjs": registerEntry(unique("thrower"), `ctx.registerAction("arm", { handler: () => { setTimeout(() => { throw new Error("boom in a timer") }, 10); return "armed" } })`) }
        })
        writePlugin(instance, "aborter", {
          manifest: manifest("aborter", { isolation: "worker" }),
          files: { "index.mjs": registerEntry(unique("aborter"), `ctx.registerAction("arm", { handler: () => { setTimeout(() => process.abort(), 10); return "armed" } })`) }
        })
        writePlugin(instance, "killer", {
          manifest: manifest("killer", { isolation: "worker" }),
          files: { "index.mjs": registerEntry(unique("killer"), `ctx.registerAction("arm", { handler: () => { setTimeout(() => process.kill(process.pid, "SIGKILL"), 10); return "armed" } })`) }
        })
        writePlugin(instance, "steady", { manifest: manifest("steady"), files: { "index.mjs": registerEntry(unique("steady"), `ctx.registerAction("ping", { handler: () => "pong" })`) } })
        const names = ["aborter", "killer", "quitter", "steady", "thrower"]
        const loaded = yield* startLoader(root, { enabled: names, licensed: names })
        const session = yield* sessionOn(loaded, root)
        const quitter = yield* watchStatuses(loaded, "quitter")
        const thrower = yield* watchStatuses(loaded, "thrower")
        const aborter = yield* watchStatuses(loaded, "aborter")
        const killer = yield* watchStatuses(loaded, "killer")
        expect(yield* session.turn((turn) => turn.step((view) => view.invoke("aborter", "arm", null)))).toBe("armed")
        expect(yield* session.turn((turn) => turn.step((view) => view.invoke("killer", "arm", null)))).toBe("armed")
        // One Step holds its lease across the crash: its call fails typed, and the Step ends.
        const quit = yield* Effect.exit(session.turn((turn) => turn.step((view) => view.invoke("quitter", "quit", null))))
        expect(errorOf(quit)).toContain("WorkerEnded")
        expect(yield* session.turn((turn) => turn.step((view) => view.invoke("thrower", "arm", null)))).toBe("armed")
        yield* eventually(Effect.sync(() => thrower.some((s) => s.status === "error") && quitter.some((s) => s.status === "error")))
        expect(quitter.find((s) => s.status === "error")).toEqual({ status: "error", last_error: "its worker ended: it exited with code 7" })
        expect(thrower.find((s) => s.status === "error")).toEqual({ status: "error", last_error: "its worker ended: uncaught Error: boom in a timer" })
        yield* eventually(Effect.sync(() => aborter.some((s) => s.status === "error") && killer.some((s) => s.status === "error")))
        expect(aborter.find((s) => s.status === "error")).toEqual({ status: "error", last_error: "its worker ended: it called process.abort()" })
        expect(killer.find((s) => s.status === "error")).toEqual({
          status: "error",
          last_error: `its worker ended: uncaught Error: a plugin in a worker thread may not signal its host's process (process.kill(${process.pid})): run it with "isolation": "process"`
        })
        // The host and the other plugins go on; the crashed ones start again by themselves.
        expect(yield* session.turn((turn) => turn.step((view) => view.invoke("steady", "ping", null)))).toBe("pong")
        yield* eventually(Effect.sync(() => [quitter, thrower, aborter, killer].every((s) => s.at(-1)?.status === "ready")))
        const inView = yield* session.turn((turn) => turn.step((calls) => Effect.succeed(calls.names)))
        expect(inView).toEqual(names)
      })
    )))

  it.scopedLive("a dispose that spins is ended at the dispose timeout by ending the worker", () =>
    provideNode(withLogs(() =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        writePlugin(instance, "stuck", {
          manifest: manifest("stuck", { isolation: "worker" }),
          files: { "index.mjs": registerEntry(unique("stuck"), `ctx.onDispose(() => { while (true) {} })`) }
        })
        const loaded = yield* startLoader(root, { enabled: ["stuck"], licensed: ["stuck"] }, { disposeTimeout: "500 millis" })
        const started = Date.now()
        const removed = yield* Effect.exit(loaded.registry.remove("stuck"))
        expect(Date.now() - started).toBeLessThan(5_000)
        expect(errorOf(removed)).toContain("stuck")
        expect(yield* snapshotOf(loaded, "stuck")).toEqual(Option.none())
        yield* eventually(nothingSpins)
      })
    )))
})

describe("isolation as the operator sees it", () => {
  it.scopedLive("instance-root plugins run in workers unless plugins.json trusts them: `city plugins list` shows where each runs and the worker's heap, and the daemon hosts them so", () =>
    Effect.gen(function*() {
      const base = yield* tempDir
      const root = path.join(base, "root")
      const folder = (name: string) => {
        const dir = path.join(root, "plugins", name)
        fs.mkdirSync(dir, { recursive: true })
        fs.writeFileSync(path.join(dir, "city-plugin.json"), JSON.stringify({ name, version: "1.0.0", apiVersion: "1", description: "", entry: "index.mjs" }))
        fs.writeFileSync(path.join(dir, "index.mjs"), `export async function register(ctx) { ctx.registerSystem("${name}") }\n`)
      }
      folder("inside")
      folder("outside")
      fs.writeFileSync(
        path.join(root, "plugins.json"),
        JSON.stringify({ enabled: ["inside", "outside"], licensed: ["inside", "outside"], isolation: { inside: "none" }, workerLimits: { heapMb: 64 } })
      )
      const listed = yield* cityProcess(["plugins", "list", "--json"], { root })
      expect(listed.code, listed.stderr).toBe(0)
      const loaded = json(listed)["loaded"] as ReadonlyArray<{ name: string; status: string; isolation: string; heap_used_bytes: number | null }>
      expect(loaded.map((p) => [p.name, p.status, p.isolation])).toEqual([["inside", "ready", "none"], ["outside", "ready", "worker"]])
      expect(loaded[0]?.heap_used_bytes).toBeNull()
      expect(loaded[1]?.heap_used_bytes).toBeGreaterThan(0)
      const table = yield* cityProcess(["plugins", "list"], { root })
      expect(table.stdout).toMatch(/outside\s+instance\s+1\.0\.0\s+ready\s+worker\s+\d+\.\d MiB/)
      expect(table.stdout).toContain(`on the host's thread, trusted by ${path.join(root, "plugins.json")}: inside`)
      yield* startPluginDaemon(root, base, "isolation", ["--http", "127.0.0.1:0"])
      const running = json(yield* cityProcess(["plugins", "list", "--json"], { root }))
      expect(running["source"]).toBe("daemon")
      // The daemon's heaps are on its page: the table leaves the column out and says where.
      const runningTable = yield* cityProcess(["plugins", "list"], { root })
      expect(runningTable.stdout).not.toContain("HEAP")
      expect(runningTable.stdout).toMatch(/outside\s+instance\s+1\.0\.0\s+ready\s+worker\s/)
      expect(runningTable.stdout).toContain("the isolated plugins' heaps, live: the daemon's status page (city status --url)")
      expect((running["loaded"] as ReadonlyArray<{ name: string; isolation: string }>).map((p) => [p.name, p.isolation])).toEqual([
        ["inside", "none"],
        ["outside", "worker"]
      ])
      const status = yield* cityProcess(["status"], { root })
      expect(status.stdout).toContain("in worker threads of their own: outside")
      // The status page: each plugin's isolation, and the worker's heap as the daemon last read it.
      const page = path.join(root, "state", "status-page.json")
      yield* within("the daemon publishes its page's address", Effect.sync(() => fs.existsSync(page)))
      const url = String((JSON.parse(fs.readFileSync(page, "utf8")) as { url: string }).url)
      const rows = Effect.promise(async () => {
        const document = (await (await fetch(new URL("/api/status", url))).json()) as { plugins: ReadonlyArray<{ name: string; isolation: string; heap_used_bytes: number | null }> }
        return document.plugins
      })
      yield* within("the page shows the worker's heap", Effect.map(rows, (plugins) => (plugins.find((p) => p.name === "outside")?.heap_used_bytes ?? 0) > 0))
      expect((yield* rows).map((p) => [p.name, p.isolation, p.heap_used_bytes === null])).toEqual([["inside", "none", true], ["outside", "worker", false]])
    }).pipe(Effect.provide(NodeContext.layer)), 120_000)
})
