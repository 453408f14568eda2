/**
 * Start of the `city daemon` with plugins (docs/plugin-loader-lifecycle.md: "Every daemon start
 * builds the registry generation from disk"): the wall time from spawning `city daemon` on a root
 * with 25 instance-root plugins (each a small `register(ctx)` entry, all enabled and licensed) to
 * its `plugin generation 1 ready: 25 loaded, 0 skipped` line, beside a plain Node process that
 * imports the same 25 entries, calls each `register` with a stub context and prints `ready`. Both
 * are whole processes, timed to their ready line (then stopped, untimed), in paired rounds
 * alternating which goes first, both started without NODE_EXTRA_CA_CERTS (Node parses those
 * certificates at every start, a fixed cost that is not ours; startup.bench.ts). A round whose
 * daemon does not report 25 loaded fails the benchmark. Goal: median ratio ≤ 3.
 *
 * The warm-up round also writes the binary's V8 code cache (bin/city.mjs), as a user's first run does.
 *
 *   node --import tsx bench/daemon.bench.ts
 */
import { spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath, pathToFileURL } from "node:url"
import { ensureBundle } from "../scripts/bundle.mjs"
import { apiVersion } from "../test/support/pluginDaemon.ts"
import { finish, goal, pairedRounds, ratioLine } from "./harness.ts"

const rounds = 15
const plugins = 25
const checkout = join(dirname(fileURLToPath(import.meta.url)), "..")
const binary = join(checkout, "bin", "city.mjs")

/** Spawns `node ...args`, resolves with the ms until a stdout line contains `ready`; then stops it with SIGTERM. */
const timeToLine = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, ready: string, check: (line: string) => void) =>
  new Promise<number>((resolve, reject) => {
    const started = performance.now()
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"], env })
    let out = ""
    let elapsed: number | undefined
    let failure: Error | undefined
    const onData = (chunk: Buffer) => {
      if (elapsed !== undefined) return
      out += chunk.toString()
      const line = out.split("\n").find((l) => l.includes(ready))
      if (line === undefined) return
      elapsed = performance.now() - started
      try {
        check(line)
      } catch (error) {
        failure = error instanceof Error ? error : new Error(String(error))
      }
      child.kill("SIGTERM")
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    child.once("error", reject)
    child.once("exit", (code, signal) => {
      if (failure !== undefined) return reject(failure)
      if (elapsed === undefined) return reject(new Error(`node ${args.join(" ")} exited ${code ?? signal} before "${ready}":\n${out.slice(-2000)}`))
      resolve(elapsed)
    })
  })

const main = async () => {
  await ensureBundle()
  const base = mkdtempSync(join(tmpdir(), "city-daemon-bench-"))
  try {
    const root = join(base, "root")
    const instance = join(root, "plugins")
    const names = Array.from({ length: plugins }, (_, i) => `plugin-${String(i).padStart(2, "0")}`)
    for (const name of names) {
      mkdirSync(join(instance, name), { recursive: true })
      writeFileSync(
        join(instance, name, "city-plugin.json"),
        JSON.stringify({ name, version: "1.0.0", apiVersion, description: `the ${name} plugin`, entry: "index.mjs" })
      )
      writeFileSync(
        join(instance, name, "index.mjs"),
        [
          `export async function register(ctx) {`,
          `  ctx.registerSystem(${JSON.stringify(`${name} is here`)})`,
          `  ctx.registerAction("hello", { handler: (input) => ${JSON.stringify(`${name}: `)} + String(input) })`,
          `}`,
          ``
        ].join("\n")
      )
    }
    writeFileSync(join(root, "plugins.json"), JSON.stringify({ enabled: names, licensed: names }))

    // The baseline: a plain Node loop over the same entries.
    const loop = join(base, "loop.mjs")
    writeFileSync(
      loop,
      [
        `const entries = ${JSON.stringify(names.map((n) => pathToFileURL(join(instance, n, "index.mjs")).href))}`,
        `const ctx = { registerSystem() {}, registerAction() {}, registerHook() {}, registerSkills() {}, onDispose() {} }`,
        `for (const url of entries) await (await import(url)).register(ctx)`,
        `console.log("ready: " + entries.length)`,
        `setInterval(() => {}, 1000)`,
        ``
      ].join("\n")
    )

    const env: NodeJS.ProcessEnv = { ...process.env, CITY_ROOT: root }
    delete env["NODE_EXTRA_CA_CERTS"]
    const daemon = () =>
      timeToLine([binary, "daemon", "--poll-ms", "1000"], env, "plugin generation 1 ready", (line) => {
        if (!line.includes(`${plugins} loaded, 0 skipped`)) throw new Error(`the daemon did not load every plugin: ${line}`)
      })
    const baseline = () =>
      timeToLine([loop], env, "ready", (line) => {
        if (!line.includes(`ready: ${plugins}`)) throw new Error(`the loop did not import every entry: ${line}`)
      })

    await daemon() // warm-up: file cache and the V8 code cache, not measured
    await baseline()
    const paired = await pairedRounds(rounds, baseline, daemon)
    const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
    console.log(
      `city daemon start to "plugin generation 1 ready" (${plugins} plugins) vs a node loop importing them ` +
        `(wall time per process, ${rounds} paired rounds, both without NODE_EXTRA_CA_CERTS)`
    )
    console.log(`  medians: daemon ${median(paired.subject).toFixed(1)} ms, node loop ${median(paired.baseline).toFixed(1)} ms`)
    console.log(ratioLine("city daemon ready / node loop ready", paired.ratios))
    goal(`city daemon start to generation 1 with ${plugins} plugins <= 3x a node loop importing them (median)`, paired.median <= 3, `${paired.median.toFixed(2)}x`)
    finish()
  } finally {
    rmSync(base, { recursive: true, force: true })
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
