/**
 * A `sweep-on` over 500 endpoints with `/bin/true` as the command, through the
 * real services (lock, substitution, spawn without a shell, log line per call,
 * endpoint records), beside a plain `child_process.spawn` loop at the same
 * concurrency, in the same run. Prints endpoints/s for both and the ratio
 * (goal ≥ 0.8).
 *
 *   node --import tsx bench/sweep.bench.ts
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as CapabilitiesLive from "../src/layers/CapabilitiesLive.ts"
import { Provisioner } from "../src/services/capabilities/Provisioner.ts"

const endpoints = 500
const concurrency = 4
const rounds = 7

const base = mkdtempSync(join(tmpdir(), "city-bench-"))
const root = join(base, "root")
const cwd = join(base, "work")
mkdirSync(join(root, "peers"), { recursive: true })
mkdirSync(cwd)
// 250 peers with claude + codex: 500 endpoints.
for (let i = 0; i < endpoints / 2; i++) {
  const personality = `p${String(i).padStart(4, "0")}`
  writeFileSync(
    join(root, "peers", `${personality}.json`),
    JSON.stringify({ schema: 1, personality, cwd, runtimes: ["claude", "codex"], default_runtime: "claude" })
  )
}
const declarationFile = join(base, "bench.json")
writeFileSync(
  declarationFile,
  JSON.stringify({
    schema: 1,
    capability: "bench",
    version: "1.0.0",
    runtimes: ["claude", "codex"],
    provision: { command: "/bin/true", args: ["provision-peer", "{personality}", "--runtime={runtime}", "--cwd={cwd}", "{occasion}"] },
    unprovision: { command: "/bin/true", args: ["unprovision-peer", "{personality}"] }
  })
)

/** Baseline: spawn `/bin/true` 500 times, `concurrency` at a time, waiting for each to close. */
const baseline = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    let next = 0
    let done = 0
    const launch = () => {
      if (next >= endpoints) return
      const i = next++
      const child = spawn("/bin/true", ["provision-peer", `p${i}`, "--runtime=claude", `--cwd=${cwd}`, "sweep-on"], {
        // The same stdio as CommandRunner: stdin and stdout /dev/null, stderr a pipe.
        stdio: ["ignore", "ignore", "pipe"],
        detached: true
      })
      child.stderr.resume()
      child.on("error", reject)
      child.on("close", () => {
        done++
        if (done === endpoints) resolve(performance.now() - started)
        else launch()
      })
    }
    for (let k = 0; k < concurrency; k++) launch()
  })

const sweep = Effect.gen(function*() {
  const provisioner = yield* Provisioner
  const started = performance.now()
  const { report } = yield* provisioner.register(declarationFile, { concurrency, timeout: Duration.seconds(30) })
  const ms = performance.now() - started
  const failed = report.outcomes.filter((o) => o.state !== "ok").length
  if (report.outcomes.length !== endpoints || failed > 0) {
    return yield* Effect.dieMessage(`sweep covered ${report.outcomes.length} endpoints, ${failed} not ok`)
  }
  return ms
}).pipe(Effect.provide(CapabilitiesLive.layer({ root })))

const rate = (ms: number) => (endpoints / ms) * 1000

const main = Effect.gen(function*() {
  // Warm-up of both paths (module loading, JIT), not measured.
  yield* Effect.promise(baseline)
  yield* sweep
  const city: Array<number> = []
  const plain: Array<number> = []
  // Both paths fork from the same process; a collection before each keeps the heap (and so
  // the cost of fork) the same for both.
  const collect = Effect.sync(() => (globalThis as { gc?: () => void }).gc?.())
  // Alternate which one goes first, so neither always runs on a warmer (or busier) machine.
  for (let r = 0; r < rounds; r++) {
    if (r % 2 === 0) {
      yield* collect
      plain.push(yield* Effect.promise(baseline))
    }
    yield* collect
    city.push(yield* sweep)
    if (r % 2 === 1) {
      yield* collect
      plain.push(yield* Effect.promise(baseline))
    }
  }
  const best = (xs: Array<number>) => Math.min(...xs)
  const cityRate = rate(best(city))
  const plainRate = rate(best(plain))
  console.log(`rss: ${Math.round(process.memoryUsage().rss / 1048576)} MiB`)
  console.log(`sweep: ${endpoints} endpoints, concurrency ${concurrency}, /bin/true, best of ${rounds} rounds`)
  console.log(`child_process.spawn loop: ${plainRate.toFixed(1)} endpoints/s`)
  console.log(`city sweep (Provisioner.register): ${cityRate.toFixed(1)} endpoints/s`)
  console.log(`ratio city/plain: ${(cityRate / plainRate).toFixed(2)} (goal >= 0.8)`)
})

Effect.runPromise(main.pipe(Effect.provide(NodeContext.layer))).finally(() => rmSync(base, { recursive: true, force: true }))
