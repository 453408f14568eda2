/**
 * Isolation benchmark (docs/plugin-loader.md, "Isolation"): an action's round trip into a
 * worker-isolated plugin, the way a host calls it (`calls.invoke` of `city.calls` over the loader,
 * the plugin loaded from its folder with `"isolation": "worker"`), against the floor: a bare
 * `postMessage` round trip of the same payload between this thread and an echoing worker thread.
 * The same action in-process is printed beside them for reference, and so are the start time
 * (the loader's `add` of the isolated plugin: the worker's start, its imports and the plugin's
 * initialize) and the heap of one isolated plugin's worker.
 * Goals: the isolated round trip ≤ 3x the floor (median of the per-round ratio); one isolated
 * plugin's start ≤ 300 ms; twenty instance-root plugins (isolated by default) loaded ≤ 3 s, printed
 * beside the same twenty on the host's thread, with the memory each isolated plugin costs. The floor of the
 * public API is printed too: a `Heartbeat` round trip through `@effect/platform`'s serialized Worker (the
 * protocol the isolation is built on, a request with no payload and no plugin code), against the
 * same bare postMessage round trip.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { performance } from "node:perf_hooks"
import { Worker } from "node:worker_threads"
import * as NodeWorker from "@effect/platform-node/NodeWorker"
import * as PlatformWorker from "@effect/platform/Worker"
import * as Isolation from "../src/schema/Isolation.ts"
import { WorkerScript } from "../src/services/isolation/WorkerScript.ts"
import * as LoaderCore from "../src/layers/internal/loaderCore.ts"
import { makeCalls } from "../src/services/city/CityService.ts"
import { ExecutionLeases } from "../src/services/city/internal/executionLeases.ts"
import { PluginRegistry } from "../src/services/city/internal/pluginRegistry.ts"
import * as WorkerPlugin from "../src/services/isolation/WorkerPlugin.ts"
import * as Plugin from "../src/services/Plugin.ts"
import { Workers } from "../src/services/isolation/Workers.ts"
import { Generations } from "../src/services/loader/Generations.ts"
import { compare, finish, goal, line } from "./harness.ts"

const CALLS = 2_000
const payload = { text: "a note about the garden", n: 42, tags: ["plants", "water", "june"], nested: { done: false, at: 1733230000000 } }

const root = mkdtempSync(join(tmpdir(), "city-bench-isolation-"))
const plugin = (name: string) => {
  const folder = join(root, "plugins", name)
  mkdirSync(folder, { recursive: true })
  writeFileSync(join(folder, "city-plugin.json"), JSON.stringify({ name, version: "1.0.0", apiVersion: "1", description: "", entry: "index.mjs" }))
  writeFileSync(join(folder, "index.mjs"), `export async function register(ctx) { ctx.registerAction("echo", { handler: (input) => input }) }\n`)
}
plugin("inner")
plugin("outer")

/** The floor: an echoing worker thread and one `postMessage` round trip at a time. */
const echo = new Worker(`const { parentPort } = require("node:worker_threads"); parentPort.on("message", (m) => parentPort.postMessage(m))`, { eval: true })
const roundTrips = (n: number) =>
  new Promise<void>((resolve) => {
    let left = n
    const next = () => {
      if (left-- === 0) {
        echo.off("message", next)
        return resolve()
      }
      echo.postMessage(payload)
    }
    echo.on("message", next)
    next()
  })

const main = Effect.gen(function*() {
  const scope = yield* Scope.make()
  const started = performance.now()
  const context = yield* Layer.buildWithScope(
    LoaderCore.withCore({ root }, { enabled: ["inner", "outer"], licensed: ["inner", "outer"], isolation: { inner: "none", outer: "worker" } }),
    scope
  )
  const loadMs = performance.now() - started
  const report = yield* Context.get(context, Generations).current
  if (report.loaded.length !== 2) return yield* Effect.dieMessage(`the plugins did not load: ${JSON.stringify(report.skipped)}`)
  const calls = makeCalls(Context.get(context, PluginRegistry), Context.get(context, ExecutionLeases))({
    agent: { id: "bench" },
    workspace: { id: "w", path: root }
  })
  const workers = Context.get(context, Workers)
  const runtime = yield* Effect.runtime<never>()
  const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(Effect.provide(effect, runtime))
  const invokeMany = (name: string) => () =>
    run(Effect.repeatN(calls.invoke(name, "echo", payload), CALLS - 1)).then(() => undefined)

  const isolated = yield* Effect.promise(() =>
    compare({
      label: `invoke of an isolated plugin's action, ${CALLS} calls`,
      baseline: "postMessage round trip",
      ops: CALLS,
      rounds: 11,
      warmup: 3,
      subjectRound: { run: invokeMany("outer") },
      baselineRound: { run: () => roundTrips(CALLS) }
    })
  )
  const inProcess = yield* Effect.promise(() =>
    compare({
      label: `invoke of the same action in-process (reference)`,
      baseline: "postMessage round trip",
      ops: CALLS,
      rounds: 11,
      warmup: 3,
      subjectRound: { run: invokeMany("inner") },
      baselineRound: { run: () => roundTrips(CALLS) }
    })
  )
  // The public API's floor: the platform's serialized Worker alone, with the same worker script.
  const script = yield* WorkerScript
  const pinged = yield* PlatformWorker.makeSerialized<Isolation.Request>({}).pipe(
    Effect.provide(NodeWorker.layer(() => new Worker(new URL(script.url)))),
    Scope.extend(scope)
  )
  const platform = yield* Effect.promise(() =>
    compare({
      label: `the platform's serialized Worker: a Heartbeat round trip (floor)`,
      baseline: "postMessage round trip",
      ops: CALLS,
      rounds: 11,
      warmup: 3,
      subjectRound: { run: () => run(Effect.repeatN(pinged.executeEffect(new Isolation.Heartbeat()), CALLS - 1)).then(() => undefined) },
      baselineRound: { run: () => roundTrips(CALLS) }
    })
  )
  console.log(line(isolated))
  console.log(line(platform))
  console.log(line(inProcess))

  // One isolated plugin's start: the registry's add of a worker-isolated plugin (its worker's
  // start, its imports, the plugin's initialize there), then its heap while it runs.
  const registry = Context.get(context, PluginRegistry)
  const folder = join(root, "plugins", "outer")
  const starts: Array<number> = []
  let heap: Option.Option<{ readonly used: number; readonly limit: number }> = Option.none()
  for (let i = 0; i < 7; i++) {
    const name = `probe${i}`
    const t0 = performance.now()
    const isolated = WorkerPlugin.make({
      name,
      version: "1.0.0",
      url: pathToFileURL(join(folder, "index.mjs")).href,
      folder,
      limits: WorkerPlugin.defaultLimits,
      invoke: () => Effect.dieMessage("no siblings in this benchmark")
    })
    yield* registry.add(Plugin.make({ name, version: "1.0.0", initialize: Effect.provideService(isolated.initialize, Workers, workers) }))
    starts.push(performance.now() - t0)
    heap = (yield* workers.heaps).find((h) => h.plugin === name)?.heap ?? Option.none()
    yield* Effect.flatMap(registry.remove(name), (removal) => (Option.isSome(removal) ? removal.value.disposal : Effect.void))
  }
  starts.sort((a, b) => a - b)
  console.log(
    `  one isolated plugin: started in ${starts[3]!.toFixed(0)} ms (median of 7 adds; min ${starts[0]!.toFixed(0)} ms), ` +
      `its worker's heap ${Option.match(heap, { onNone: () => "unknown", onSome: (h) => `${(h.used / 2 ** 20).toFixed(1)} MiB used (limit ${(h.limit / 2 ** 20).toFixed(0)} MiB)` })}; ` +
      `the first load of both plugins took ${loadMs.toFixed(0)} ms`
  )
  // Twenty instance-root plugins, isolated by default (started four at a time), against the same
  // twenty trusted on the host's thread: the loader's first generation, from nothing to served.
  const many = mkdtempSync(join(tmpdir(), "city-bench-isolation-many-"))
  const names = Array.from({ length: 20 }, (_, i) => `p${String(i).padStart(2, "0")}`)
  for (const name of names) {
    const folder = join(many, "plugins", name)
    mkdirSync(folder, { recursive: true })
    writeFileSync(join(folder, "city-plugin.json"), JSON.stringify({ name, version: "1.0.0", apiVersion: "1", description: "", entry: "index.mjs" }))
    writeFileSync(join(folder, "index.mjs"), `export async function register(ctx) { ctx.registerAction("echo", { handler: (input) => input }) }\n`)
  }
  const loadAll = (isolation: Record<string, "none"> | undefined) =>
    Effect.gen(function*() {
      const own = yield* Scope.make()
      const rssBefore = process.memoryUsage().rss
      const t0 = performance.now()
      const built = yield* Layer.buildWithScope(LoaderCore.withCore({ root: many }, { enabled: names, licensed: names, isolation }), own)
      const ms = performance.now() - t0
      const loaded = (yield* Context.get(built, Generations).current).loaded.length
      if (loaded !== names.length) return yield* Effect.dieMessage(`only ${loaded} of ${names.length} plugins loaded`)
      const heaps = yield* Context.get(built, Workers).heaps
      const rss = process.memoryUsage().rss - rssBefore
      yield* Scope.close(own, Exit.void)
      return { ms, rss, heaps }
    })
  const trusted = Object.fromEntries(names.map((n) => [n, "none" as const]))
  const loads: Array<{ isolated: number; host: number }> = []
  let memory = { rss: 0, heap: 0 }
  for (let round = 0; round < 3; round++) {
    const isolatedLoad = yield* loadAll(undefined)
    const hostLoad = yield* loadAll(trusted)
    loads.push({ isolated: isolatedLoad.ms, host: hostLoad.ms })
    const heapUsed = isolatedLoad.heaps.reduce((sum, h) => sum + Option.match(h.heap, { onNone: () => 0, onSome: (x) => x.used }), 0)
    memory = { rss: isolatedLoad.rss / names.length, heap: heapUsed / names.length }
  }
  loads.sort((a, b) => a.isolated - b.isolated)
  const median = loads[1]!
  console.log(
    `  20 instance-root plugins loaded isolated: ${median.isolated.toFixed(0)} ms (median of 3; min ${loads[0]!.isolated.toFixed(0)} ms), ` +
      `the same 20 on the host's thread ${median.host.toFixed(0)} ms; per plugin: ${(memory.heap / 2 ** 20).toFixed(1)} MiB of worker heap, ` +
      `${(memory.rss / 2 ** 20).toFixed(1)} MiB of the process's resident size`
  )
  goal("one isolated plugin's start ≤ 300 ms (median)", starts[3]! <= 300, `median ${starts[3]!.toFixed(0)} ms`)
  goal("20 instance-root plugins loaded isolated ≤ 3 s (median)", median.isolated <= 3000, `median ${median.isolated.toFixed(0)} ms`)
  goal(
    "an action's round trip into a worker-isolated plugin ≤ 3x a bare postMessage round trip of the same payload (median)",
    isolated.median <= 3,
    `median ${isolated.median.toFixed(2)}x`
  )
  yield* Scope.close(scope, Exit.void)
}).pipe(Effect.provide(NodeContext.layer))

Effect.runPromise(main).then(
  async () => {
    await echo.terminate()
    finish()
  },
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
