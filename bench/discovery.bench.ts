/**
 * Loader benchmark.
 *
 * 1. `discover` over 1,000 generated plugin folders (manifests in the reference loader's shape:
 *    string `apiVersion`, a `provides` object, a `configSchema` array) beside a plain synchronous
 *    `readdirSync` + `readFileSync` + `JSON.parse` loop, alternating round by round, as whole
 *    discoveries in this process. Printed twice: repeated (manifests unchanged since the last
 *    call: each is a `stat` and a lookup) and cold (the memo forgotten before every round: every
 *    manifest read through the file reader and decoded with the Schema). Goals: cold <= 2x,
 *    repeated <= 1.2x the plain loop (median ratio). Discovery reads asynchronously (it runs in the
 *    daemon, whose event loop must not block), so the same loop on `fs.promises`, one file at a
 *    time, is printed beside it for reference. Also printed, in the same rounds: the floor of the
 *    public API for the same work, what any discovery through `@effect/platform`'s FileSystem and
 *    the Manifest Schema must at least do (repeated: a `stat` of each manifest, 32 at a time, the
 *    least a memo needs to see a change; cold: `readFileString`, `JSON.parse` and
 *    `Manifest.decode` of each, 32 at a time, without the reader's checks). When the floor itself
 *    is above the goal, the goal cannot be met on the public API and the line says so (the
 *    simplification's rule: the public API wins and the cost is stated).
 * 2. `load` of 100 trivial `register(ctx)` plugin folders end to end (discover, licence, stat,
 *    import, initialize, publish into a City core; closing it afterwards is not timed), trusted on
 *    the host's thread (`isolation: "none"`), in ms per
 *    plugin, beside a plain loop of `import()` of the same 100 files. Every round touches the
 *    entries (a new mtime), so every round imports fresh modules, as an in-place update would.
 *
 *   node --import tsx bench/discovery.bench.ts
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { performance } from "node:perf_hooks"
import * as LoaderCore from "../src/layers/internal/loaderCore.ts"
import * as Manifest from "../src/schema/Manifest.ts"
import { discover, forgetValidations } from "../src/services/loader/Discovery.ts"
import { Generations } from "../src/services/loader/Generations.ts"

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const min = (xs: ReadonlyArray<number>) => Math.min(...xs)
const ms = (x: number) => `${x.toFixed(2)} ms`

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "city-discovery-bench-"))
const writeFolders = (root: string, count: number, entry: (name: string) => string | undefined) => {
  const names: Array<string> = []
  for (let i = 0; i < count; i++) {
    const name = `plugin-${String(i).padStart(4, "0")}`
    names.push(name)
    fs.mkdirSync(path.join(root, name), { recursive: true })
    fs.writeFileSync(
      path.join(root, name, "city-plugin.json"),
      JSON.stringify({
        name,
        version: "1.0.0",
        apiVersion: "1",
        description: `generated plugin ${i}`,
        entry: "index.mjs",
        provides: { tools: [`${name}_*`], skills: [] },
        configSchema: [
          { key: "token", label: "Token", type: "secret", required: true },
          { key: "limit", label: "Limit", type: "number", min: 1, max: 100, step: 1, default: 20 }
        ]
      }, null, 2)
    )
    const code = entry(name)
    if (code !== undefined) fs.writeFileSync(path.join(root, name, "index.mjs"), code)
  }
  return names
}

const plainLoop = (root: string) => {
  const manifests: Array<unknown> = []
  for (const name of fs.readdirSync(root)) {
    try {
      manifests.push(JSON.parse(fs.readFileSync(path.join(root, name, "city-plugin.json"), "utf8")))
    } catch {
      // not a plugin
    }
  }
  return manifests
}

/** The same loop with Node's promise API, one file after the other: the plain asynchronous reader. */
const plainAsyncLoop = async (root: string) => {
  const manifests: Array<unknown> = []
  for (const name of await fs.promises.readdir(root)) {
    try {
      manifests.push(JSON.parse(await fs.promises.readFile(path.join(root, name, "city-plugin.json"), "utf8")))
    } catch {
      // not a plugin
    }
  }
  return manifests
}

const benchDiscovery = async () => {
  const root = path.join(scratch, "discover")
  writeFolders(root, 1_000, () => undefined)
  const roots = [{ kind: "instance" as const, path: root }]
  const discoverOnce = Effect.provide(discover(roots), NodeContext.layer)
  const run = async (cold: boolean) => {
    if (cold) forgetValidations()
    const found = await Effect.runPromise(discoverOnce)
    if (found.length !== 1_000 || found.some((d) => d._tag !== "Valid")) throw new Error("discover did not find 1,000 valid plugins")
  }
  /** The public API's floor: what a discovery through the platform FileSystem and the Schema must at least do. */
  const floorOnce = (cold: boolean) =>
    Effect.runPromise(Effect.provide(
      Effect.flatMap(FileSystem.FileSystem, (fs) =>
        Effect.flatMap(fs.readDirectory(root), (names) =>
          Effect.forEach(names, (name) => {
            const file = path.join(root, name, "city-plugin.json")
            return cold ? Effect.map(fs.readFileString(file), (text): unknown => Manifest.decode(JSON.parse(text))) : Effect.map(fs.stat(file), (info): unknown => info)
          }, { concurrency: 32 }))),
      NodeContext.layer
    ))
  for (const cold of [false, true]) {
    const ratios: Array<number> = []
    const asyncRatios: Array<number> = []
    const floorRatios: Array<number> = []
    const plain: Array<number> = []
    const plainAsync: Array<number> = []
    const floor: Array<number> = []
    const ours: Array<number> = []
    for (let i = 0; i < 3; i++) {
      plainLoop(root)
      await floorOnce(cold)
      await run(cold)
    }
    for (let round = 0; round < 21; round++) {
      const order = round % 2 === 0 ? ["plain", "async", "floor", "ours"] : ["ours", "floor", "async", "plain"]
      const times: Record<string, number> = {}
      for (const which of order) {
        const start = performance.now()
        if (which === "plain") plainLoop(root)
        else if (which === "async") await plainAsyncLoop(root)
        else if (which === "floor") await floorOnce(cold)
        else await run(cold)
        times[which] = performance.now() - start
      }
      plain.push(times["plain"]!)
      plainAsync.push(times["async"]!)
      floor.push(times["floor"]!)
      ours.push(times["ours"]!)
      ratios.push(times["ours"]! / times["plain"]!)
      asyncRatios.push(times["ours"]! / times["async"]!)
      floorRatios.push(times["floor"]! / times["plain"]!)
    }
    const label = cold ? "discover, cold (memo forgotten each round)" : "discover, repeated (manifests unchanged)"
    console.log(`${label}, 1,000 folders, 21 alternating rounds`)
    console.log(`  plain readdirSync + readFileSync + JSON.parse loop  median ${ms(median(plain))}`)
    console.log(`  the same loop on fs.promises, one file at a time    median ${ms(median(plainAsync))}`)
    console.log(`  the public API's floor (${cold ? "readFileString + JSON.parse + Manifest.decode" : "a platform stat of each manifest"}, 32 at a time)  median ${ms(median(floor))}`)
    console.log(`  discover                                            median ${ms(median(ours))}`)
    console.log(`  ratio discover/plain: median ${median(ratios).toFixed(2)}x, min ${min(ratios).toFixed(2)}x`)
    console.log(`  ratio discover/plain async loop (for reference): median ${median(asyncRatios).toFixed(2)}x, min ${min(asyncRatios).toFixed(2)}x`)
    console.log(`  ratio floor/plain: median ${median(floorRatios).toFixed(2)}x; discover/floor: ${(median(ours) / median(floor)).toFixed(2)}x`)
    const bound = cold ? 2 : 1.2
    const unreachable = median(floorRatios) > bound
    console.log(
      `goal: ${cold ? "cold" : "repeated"} discover <= ${bound}x the plain loop (median ratio): ${median(ratios) <= bound ? "PASS" : "FAIL"}` +
        (unreachable ? ` (not reachable on the public API: its floor alone is ${median(floorRatios).toFixed(2)}x)` : "")
    )
  }
}

const benchLoad = async () => {
  const root = path.join(scratch, "load")
  const plugins = path.join(root, "plugins")
  const names = writeFolders(plugins, 100, (name) => `export function register(ctx) { ctx.registerSystem(${JSON.stringify(name)}) }\n`)
  const entries = names.map((n) => path.join(plugins, n, "index.mjs"))
  let tick = Math.floor(Date.now() / 1000)
  const touch = () => {
    tick += 10
    for (const file of entries) fs.utimesSync(file, tick, tick)
  }
  // Timed from the start of the build to the published generation; closing the City (disposing
  // the 100 plugins) happens after the clock stops.
  const loadOnce = Effect.scoped(Effect.gen(function*() {
    const start = performance.now()
    // On the host's thread, as the plain loop imports them: isolation.bench.ts measures plugins in workers.
    const context = yield* Layer.build(LoaderCore.withCore({ root }, { enabled: names, licensed: names, isolation: "none" }))
    const report = yield* Context.get(context, Generations).current
    const elapsed = performance.now() - start
    if (report.loaded.length !== 100) return yield* Effect.dieMessage(`loaded ${report.loaded.length} of 100: ${report.skipped[0]?.reason}`)
    return elapsed
  })).pipe(Effect.provide(NodeContext.layer), Effect.provide(Logger.remove(Logger.defaultLogger)))
  const plainImports = async () => {
    for (const file of entries) {
      const url = pathToFileURL(file)
      url.search = `?plain=${tick}`
      const module: unknown = await import(url.href)
      if (typeof module !== "object" || module === null) throw new Error("import failed")
    }
  }
  const ours: Array<number> = []
  const plain: Array<number> = []
  const ratios: Array<number> = []
  for (let round = 0; round < 8; round++) {
    touch()
    const order = round % 2 === 0 ? ["plain", "ours"] : ["ours", "plain"]
    const times: Record<string, number> = {}
    for (const which of order) {
      if (which === "plain") {
        const start = performance.now()
        await plainImports()
        times[which] = performance.now() - start
      } else {
        times[which] = await Effect.runPromise(loadOnce)
      }
    }
    if (round < 2) continue // warm-up
    plain.push(times["plain"]! / 100)
    ours.push(times["ours"]! / 100)
    ratios.push(times["ours"]! / times["plain"]!)
  }
  console.log("load of 100 trivial register(ctx) plugin folders end to end (fresh modules every round; close not timed), 6 rounds")
  console.log(`  plain loop of import() of the same files          median ${ms(median(plain))} per plugin`)
  console.log(`  load (discover, stat, import, initialize, publish) median ${ms(median(ours))} per plugin`)
  console.log(`  ratio load/plain import: median ${median(ratios).toFixed(2)}x, min ${min(ratios).toFixed(2)}x`)
}

const main = async () => {
  try {
    await benchDiscovery()
    await benchLoad()
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true })
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
