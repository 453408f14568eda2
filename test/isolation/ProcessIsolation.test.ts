/**
 * Process-isolated plugins and the memory caps of both isolated modes (docs/plugin-loader.md,
 * "Isolation" and "What each mode caps"): real plugin folders loaded into child processes of their
 * own (`"isolation": "process"`), on the worker's protocol with the worker's contract; real
 * signals, real exits, real Buffers. The test process is the host: that it is still here to assert
 * is part of each containment test.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { fork } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { overCap } from "../../src/services/isolation/internal/workerPlugin.ts"
import { WorkerScript } from "../../src/services/isolation/WorkerScript.ts"
import { eventually, provideNode } from "../fixtures.ts"
import { cityProcess, json, tempDir } from "../acceptance/cityCli.ts"
import { makeRoots, manifest, registerEntry, startLoader, unique, withLogs, writePlugin } from "../loaderFixtures.ts"
import { alive, errorOf, sessionOn, watchStatuses } from "./isolated.ts"

describe.each(["worker", "process"] as const)("the isolated contract holds in a %s", (mode) => {
  it.scopedLive("actions with their Schemas, hooks, system, availability, skills, config and the call's context cross", () =>
    provideNode(withLogs((logs) =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        writePlugin(instance, "notes", {
          manifest: manifest("notes", { isolation: mode, configSchema: [{ key: "prefix", label: "Prefix", type: "string", default: "n" }] }),
          files: {
            "index.mjs": registerEntry(unique("notes"), [
              `const { isMainThread } = await import("node:worker_threads")`,
              `ctx.log.info("notes starts in process " + process.pid)`,
              `ctx.registerSkills([{ name: "jot" }])`,
              `ctx.registerSystem((call) => "notes for " + call.agent.id + " in " + call.workspace.id)`,
              `ctx.registerAvailability((call) => ({ available: call.session !== undefined, reasons: call.session ? [] : ["needs a session"] }))`,
              `ctx.registerHook("beforeTurn", (value, call) => ({ ...value, seenBy: "notes", turn: call.turn?.number ?? null }))`,
              `ctx.registerAction("where", { handler: async (_input, call) => ({ main: isMainThread, pid: process.pid, config: ctx.config.prefix, session: call.session?.id ?? null, turn: call.turn?.number ?? null }) })`
            ].join("\n"))
          }
        })
        writePlugin(instance, "typed", {
          manifest: manifest("typed"),
          files: {
            "index.mjs": [
              `import * as Effect from "effect/Effect"`,
              `import * as Schema from "effect/Schema"`,
              `import { Contributions, Plugin } from "effect-city/plugin"`,
              `class UnknownUser extends Schema.TaggedError()("UnknownUser", { user: Schema.String }) {}`,
              `export default Plugin.make({ name: "typed", initialize: Effect.succeed({ actions: {`,
              `  double: Contributions.action({ input: Schema.Struct({ n: Schema.Number }), handler: ({ n }) => Effect.succeed(n * 2) }),`,
              `  find: Contributions.action({ input: Schema.String, handler: (user) => Effect.fail(new UnknownUser({ user })) })`,
              `} }) })`,
              ``
            ].join("\n")
          }
        })
        const names = ["notes", "typed"]
        const loaded = yield* startLoader(root, { enabled: names, licensed: names, isolation: { typed: mode } })
        const report = yield* loaded.generations.current
        expect(report.loaded.map((p) => [p.name, p.isolation])).toEqual([["notes", mode], ["typed", mode]])
        const session = yield* sessionOn(loaded, root)
        const where = yield* session.turn((turn) => turn.step((view) => view.invoke("notes", "where", null)))
        expect(where).toMatchObject({ config: "n", session: session.id, turn: 1 })
        // A worker thread is in the host's process, off its main thread; a process is a process of its own.
        const placed = Schema.decodeUnknownSync(Schema.Struct({ main: Schema.Boolean, pid: Schema.Number }))(where)
        if (mode === "worker") expect(placed).toEqual({ main: false, pid: process.pid })
        else expect(placed.main && placed.pid !== process.pid).toBe(true)
        expect(yield* session.turn((turn) => turn.step((view) => view.invoke("typed", "double", { n: 21 })))).toBe(42)
        const refused = yield* Effect.exit(session.turn((turn) => turn.step((view) => view.invoke("typed", "double", { n: "x" }))))
        expect(errorOf(refused)).toContain("ParseError")
        const failed = yield* Effect.exit(session.turn((turn) => turn.step((view) => view.invoke("typed", "find", "grace"))))
        expect(errorOf(failed)).toContain("UnknownUser")
        const skills = yield* session.turn((turn) => turn.step((calls) => Effect.succeed(calls.view.get("notes")?.contributions.skills)))
        expect(skills).toEqual([{ name: "jot" }])
        const hooked = yield* session.turn((turn) =>
          Effect.map(turn.step((calls) => calls.runHooks("beforeTurn", { text: "hi" })), (value) => ({ value, turn: turn.number })))
        expect(hooked.value).toEqual({ text: "hi", seenBy: "notes", turn: hooked.turn })
        const systems = yield* session.turn((turn) => turn.step((calls) => calls.system()))
        expect(systems).toContainEqual({ name: "notes", content: "notes for ada in w" })
        expect(logs.some((l) => l.message.startsWith("notes starts in process "))).toBe(true)
      })
    )))
})

describe("containment: a plugin in a process of its own ends alone, says why, and comes back", () => {
  it.scopedLive("process.exit(7), SIGKILL from itself and process.abort() end only that plugin's process: the host and another plugin go on, each snapshot says why within 5 s, and each starts again by itself", () =>
    provideNode(withLogs(() =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        const faults = { quitter: "process.exit(7)", killed: `process.kill(process.pid, "SIGKILL")`, aborter: "process.abort()" }
        for (const [name, fault] of Object.entries(faults)) {
          writePlugin(instance, name, {
            manifest: manifest(name, { isolation: "process" }),
            files: { "index.mjs": registerEntry(unique(name), `ctx.registerAction("fault", { handler: () => { ${fault} } })\nctx.registerAction("ok", { handler: () => "fine" })`) }
          })
        }
        writePlugin(instance, "steady", { manifest: manifest("steady"), files: { "index.mjs": registerEntry(unique("steady"), `ctx.registerAction("ping", { handler: () => "pong" })`) } })
        const names = ["aborter", "killed", "quitter", "steady"]
        const loaded = yield* startLoader(root, { enabled: names, licensed: names })
        const session = yield* sessionOn(loaded, root)
        const statuses = Object.fromEntries(yield* Effect.forEach(Object.keys(faults), (name) => Effect.map(watchStatuses(loaded, name), (seen) => [name, seen] as const)))
        const started = Date.now()
        for (const name of Object.keys(faults)) {
          const faulted = yield* Effect.exit(session.turn((turn) => turn.step((view) => view.invoke(name, "fault", null))))
          expect(errorOf(faulted)).toContain("WorkerEnded")
        }
        // The host and another plugin go on.
        expect(yield* session.turn((turn) => turn.step((view) => view.invoke("steady", "ping", null)))).toBe("pong")
        yield* eventually(Effect.sync(() => Object.values(statuses).every((seen) => seen.some((s) => s.status === "error"))))
        expect(Date.now() - started).toBeLessThan(5_000)
        const why = (name: string) => statuses[name]?.find((s) => s.status === "error")?.last_error
        expect(why("quitter")).toBe("its process ended: it exited with code 7")
        expect(why("killed")).toBe("its process ended: killed by SIGKILL")
        expect(why("aborter")).toBe("its process ended: it aborted (SIGABRT)")
        // Each starts again by itself, in a fresh process.
        yield* eventually(Effect.sync(() => Object.values(statuses).every((seen) => seen.at(-1)?.status === "ready")), 10_000)
        for (const name of Object.keys(faults)) {
          expect(yield* session.turn((turn) => turn.step((view) => view.invoke(name, "ok", null)))).toBe("fine")
        }
      })
    )))

  it.scopedLive("a child the plugin spawned does not outlive the plugin's process: its whole process group is ended", () =>
    provideNode(withLogs(() =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        writePlugin(instance, "spawner", {
          manifest: manifest("spawner", { isolation: "process" }),
          files: {
            "index.mjs": registerEntry(unique("spawner"), [
              `const { spawn } = await import("node:child_process")`,
              `ctx.registerAction("spawn", { handler: () => spawn("sleep", ["300"]).pid })`,
              `ctx.registerAction("quit", { handler: () => process.exit(7) })`
            ].join("\n"))
          }
        })
        const loaded = yield* startLoader(root, { enabled: ["spawner"], licensed: ["spawner"] })
        const session = yield* sessionOn(loaded, root)
        const statuses = yield* watchStatuses(loaded, "spawner")
        const sleeper = Schema.decodeUnknownSync(Schema.Number)(yield* session.turn((turn) => turn.step((view) => view.invoke("spawner", "spawn", null))))
        expect(alive(sleeper)).toBe(true)
        yield* Effect.exit(session.turn((turn) => turn.step((view) => view.invoke("spawner", "quit", null))))
        yield* eventually(Effect.sync(() => statuses.some((s) => s.status === "error")), 5_000)
        expect(statuses.find((s) => s.status === "error")?.last_error).toBe("its process ended: it exited with code 7")
        yield* eventually(Effect.sync(() => !alive(sleeper)), 5_000)
        yield* eventually(Effect.sync(() => statuses.at(-1)?.status === "ready"), 10_000)
        // Removed for good: a second sleeper goes with the plugin's dispose.
        const second = Schema.decodeUnknownSync(Schema.Number)(yield* session.turn((turn) => turn.step((view) => view.invoke("spawner", "spawn", null))))
        yield* loaded.registry.remove("spawner")
        yield* eventually(Effect.sync(() => !alive(second)), 5_000)
      })
    )))
})

describe("memory caps that hold", () => {
  it.scopedLive.each(["worker", "process"] as const)("%s: 1.5 GiB of Buffers under a 64 MiB cap end the plugin within 5 s, saying so; the memory is given back and the plugin comes back", (mode) =>
    provideNode(withLogs(() =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        writePlugin(instance, "hoarder", {
          manifest: manifest("hoarder", { isolation: mode }),
          files: {
            "index.mjs": registerEntry(unique("hoarder"), [
              `const hoard = []`,
              `ctx.registerAction("hoard", { handler: () => { for (let i = 0; i < 24; i++) hoard.push(Buffer.alloc(64 * 1024 * 1024, 1)); return hoard.length } })`,
              `ctx.registerAction("ok", { handler: () => "fine" })`
            ].join("\n"))
          }
        })
        writePlugin(instance, "steady", { manifest: manifest("steady"), files: { "index.mjs": registerEntry(unique("steady"), `ctx.registerAction("ping", { handler: () => "pong" })`) } })
        const names = ["hoarder", "steady"]
        const loaded = yield* startLoader(root, { enabled: names, licensed: names, workerLimits: { heapMb: 64 } })
        const session = yield* sessionOn(loaded, root)
        const statuses = yield* watchStatuses(loaded, "hoarder")
        const rssBefore = process.memoryUsage().rss
        yield* Effect.exit(session.turn((turn) => turn.step((view) => view.invoke("hoarder", "hoard", null))))
        // Within 5 s of holding it (the call returns once the 24 Buffers are made: on a loaded
        // machine, making them takes seconds of its own).
        const held = Date.now()
        const until = (what: string, condition: () => boolean) =>
          eventually(Effect.sync(condition), 15_000).pipe(
            Effect.catchAllDefect(() => Effect.dieMessage(`${what} not within 15 s; statuses: ${JSON.stringify(statuses)}; rss ${process.memoryUsage().rss} (before ${rssBefore})`))
          )
        // Ended: over its cap at the next heartbeat; or, on a loaded machine where making 1.5 GiB
        // blocks its thread past 3 s, by its silence first.
        const ended = (s: { status: string }) => s.status === "error" || s.status === "unresponsive"
        yield* until("the plugin ended", () => statuses.some(ended))
        expect(Date.now() - held).toBeLessThan(5_000)
        expect(statuses.find(ended)?.last_error).toMatch(
          new RegExp(`^its ${mode} ended: (it used \\d+ MiB outside its heap \\(cap 64 MiB\\)|it was unresponsive: no heartbeat .*)$`)
        )
        expect(yield* session.turn((turn) => turn.step((view) => view.invoke("steady", "ping", null)))).toBe("pong")
        // A worker's Buffers were the host process's memory: given back with the thread.
        if (mode === "worker") yield* until("the memory given back", () => process.memoryUsage().rss < rssBefore + 256 * 1024 * 1024)
        yield* until("ready again", () => statuses.at(-1)?.status === "ready")
        expect(yield* session.turn((turn) => turn.step((view) => view.invoke("hoarder", "ok", null)))).toBe("fine")
      })
    )), 45_000)

  it.scopedLive("process: a heap grown to its cap ends the plugin's process only, saying so, and it comes back", () =>
    provideNode(withLogs(() =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        writePlugin(instance, "leaky", {
          manifest: manifest("leaky", { isolation: "process" }),
          files: {
            "index.mjs": registerEntry(unique("leaky"), [
              `const hoard = []`,
              `ctx.registerAction("grow", { handler: () => { for (;;) hoard.push(new Array(100000).fill(hoard.length)) } })`,
              `ctx.registerAction("ok", { handler: () => "fine" })`
            ].join("\n"))
          }
        })
        writePlugin(instance, "steady", { manifest: manifest("steady"), files: { "index.mjs": registerEntry(unique("steady"), `ctx.registerAction("ping", { handler: () => "pong" })`) } })
        const names = ["leaky", "steady"]
        const loaded = yield* startLoader(root, { enabled: names, licensed: names, workerLimits: { heapMb: 64 } })
        const session = yield* sessionOn(loaded, root)
        const statuses = yield* watchStatuses(loaded, "leaky")
        const started = Date.now()
        const grown = yield* Effect.exit(session.turn((turn) => turn.step((view) => view.invoke("leaky", "grow", null))))
        expect(errorOf(grown)).toContain("WorkerEnded")
        yield* eventually(Effect.sync(() => statuses.some((s) => s.status === "error")), 5_000)
        expect(Date.now() - started).toBeLessThan(5_000)
        expect(statuses.find((s) => s.status === "error")?.last_error).toBe("its process ended: it ran out of memory (heap cap 64 MiB)")
        expect(yield* session.turn((turn) => turn.step((view) => view.invoke("steady", "ping", null)))).toBe("pong")
        yield* eventually(Effect.sync(() => statuses.at(-1)?.status === "ready"), 10_000)
        expect(yield* session.turn((turn) => turn.step((view) => view.invoke("leaky", "ok", null)))).toBe("fine")
      })
    )))

  it.scopedLive("NODE_OPTIONS=--max-old-space-size=2048 in the host's environment does not raise a worker's or a process's heap cap", () =>
    Effect.gen(function*() {
      const base = yield* tempDir
      const root = path.join(base, "root")
      const limits = path.join(base, "limits")
      fs.mkdirSync(limits)
      for (const name of ["inworker", "inprocess"]) {
        const dir = path.join(root, "plugins", name)
        fs.mkdirSync(dir, { recursive: true })
        fs.writeFileSync(path.join(dir, "city-plugin.json"), JSON.stringify({ name, version: "1.0.0", apiVersion: "1", description: "", entry: "index.mjs" }))
        fs.writeFileSync(
          path.join(dir, "index.mjs"),
          [
            `import { writeFileSync } from "node:fs"`,
            `import { getHeapStatistics } from "node:v8"`,
            `import { spawn } from "node:child_process"`,
            `export async function register(ctx) {`,
            `  writeFileSync(${JSON.stringify(path.join(limits, name))}, String(getHeapStatistics().heap_size_limit))`,
            `  if (${JSON.stringify(name)} === "inprocess") writeFileSync(${JSON.stringify(path.join(limits, "sleeper"))}, String(spawn("sleep", ["300"]).pid))`,
            `}`,
            ``
          ].join("\n")
        )
      }
      fs.writeFileSync(
        path.join(root, "plugins.json"),
        JSON.stringify({ enabled: ["inprocess", "inworker"], licensed: ["inprocess", "inworker"], isolation: { inworker: "worker", inprocess: "process" }, workerLimits: { heapMb: 64 } })
      )
      const listed = yield* cityProcess(["plugins", "list", "--json"], { root, env: { NODE_OPTIONS: "--max-old-space-size=2048" } })
      expect(listed.code, listed.stderr).toBe(0)
      const loaded = json(listed)["loaded"] as ReadonlyArray<{ name: string; status: string; isolation: string }>
      expect(loaded.map((p) => [p.name, p.status, p.isolation])).toEqual([["inprocess", "ready", "process"], ["inworker", "ready", "worker"]])
      // V8's limit is the cap plus its young generation: well under 2 GiB, near 64 MiB.
      for (const name of ["inworker", "inprocess"]) {
        const limitMb = Number(fs.readFileSync(path.join(limits, name), "utf8")) / (1024 * 1024)
        expect(limitMb, name).toBeGreaterThanOrEqual(64)
        expect(limitMb, name).toBeLessThan(128)
      }
      // The CLI's City closed: the process plugin's group went with it, the child it spawned too.
      const sleeper = Number(fs.readFileSync(path.join(limits, "sleeper"), "utf8"))
      yield* eventually(Effect.sync(() => !alive(sleeper)), 5_000)
      const table = yield* cityProcess(["plugins", "list"], { root })
      expect(table.stdout).toMatch(/inprocess\s+instance\s+1\.0\.0\s+ready\s+process\s/)
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("a plugin's process without its host", () => {
  it.scopedLive("when its channel closes without the host ending it (a host killed outright), it kills its own process group", () =>
    Effect.gen(function*() {
      const script = yield* WorkerScript
      const child = fork(fileURLToPath(script.url), [], { serialization: "advanced", detached: true, execArgv: [], stdio: ["ignore", "inherit", "inherit", "ipc"] })
      const pid = child.pid
      if (pid === undefined) return expect.unreachable("the worker main did not start")
      yield* Effect.addFinalizer(() => Effect.sync(() => alive(pid) && process.kill(-pid, "SIGKILL")))
      const ended = new Promise<NodeJS.Signals | null>((resolve) => child.once("exit", (_code, signal) => resolve(signal)))
      // Its runner says it is up with its first message.
      yield* Effect.async<void>((resume) => {
        child.once("message", () => resume(Effect.void))
      })
      child.disconnect()
      expect(yield* Effect.promise(() => ended)).toBe("SIGKILL")
    }))
})

describe("which cap the latest figures break", () => {
  const MiB = 1024 * 1024
  const memory = (external: number, rss: number) => ({ heapUsed: 20 * MiB, heapLimit: 112 * MiB, external: external * MiB, arrayBuffers: 0, rss: rss * MiB })
  it.each([
    ["a worker's rss is the host process's, never held against it", "worker", memory(10, 900), Option.none()],
    ["a worker over its cap outside the heap", "worker", memory(65, 100), Option.some("it used 65 MiB outside its heap (cap 64 MiB)")],
    ["a process at its resident cap", "process", memory(10, 256), Option.none()],
    ["a process over its resident cap (2 × 64 + 128 MiB)", "process", memory(10, 300), Option.some("it held 300 MiB resident (cap 256 MiB)")],
    ["a process over both: outside the heap is named", "process", memory(1536, 1700), Option.some("it used 1536 MiB outside its heap (cap 64 MiB)")]
  ] as const)("%s", (_name, kind, figures, expected) => {
    expect(overCap(figures, 64, kind)).toEqual(expected)
  })
})
