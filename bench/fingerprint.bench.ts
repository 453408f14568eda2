/**
 * Fingerprint poll: one poll over 1,000 endpoints × 2 launch-read files (claude: `<cwd>/.mcp.json`,
 * `<cwd>/.claude/settings.json`) with nothing changed, through the real Fingerprints service
 * (baselines stored and loaded, stat first, hash only on a changed stat), beside plain loops over
 * the same 2,000 files in the same run, round by round in alternating order:
 * - the judged baseline: the platform `FileSystem.stat` of every file, `statConcurrency` at a
 *   time (what any poll on the daemon's path must do at least: no synchronous I/O there);
 * - for reference: Node's `fs.promises.stat` with as many in flight, and a `statSync` loop (which
 *   the daemon may not run: it blocks the event loop).
 * Prints ms per poll, the median and min of the per-round ratios, and the goal (≤ 1.5× the
 * platform stat loop). Also prints a whole watcher pass (peer scan included), the first one (every
 * peer file read and decoded) and a repeated one (peer files unchanged). Fails if a poll
 * reports a change (nothing changed) or throws.
 *
 *   node --import tsx bench/fingerprint.bench.ts
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { mkdirSync, mkdtempSync, promises, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as LiveApplication from "../src/layers/LiveApplication.ts"
import * as ScriptedHost from "../src/services/live/ScriptedHost.ts"
import { EndpointHost, type EndpointRef } from "../src/services/live/EndpointHost.ts"
import { Fingerprints, statConcurrency } from "../src/services/live/Fingerprints.ts"
import * as FingerprintPoll from "../src/services/live/FingerprintPoll.ts"
import * as CapabilityServices from "../src/layers/CapabilityServices.ts"

const endpoints = 1_000
const rounds = 21
const pollsPerRound = 5

const base = mkdtempSync(join(tmpdir(), "city-bench-fp-"))
const root = join(base, "root")
mkdirSync(join(root, "peers"), { recursive: true })
const refs: Array<EndpointRef> = []
const files: Array<string> = []
for (let i = 0; i < endpoints; i++) {
  const personality = `p${String(i).padStart(4, "0")}`
  const cwd = join(base, "work", personality)
  mkdirSync(join(cwd, ".claude"), { recursive: true })
  writeFileSync(join(cwd, ".mcp.json"), `{"mcpServers":{"t${i}":{"command":"/bin/true"}}}\n`)
  writeFileSync(join(cwd, ".claude", "settings.json"), `{"hooks":{}}\n`)
  files.push(join(cwd, ".claude", "settings.json"), join(cwd, ".mcp.json"))
  writeFileSync(
    join(root, "peers", `${personality}.json`),
    JSON.stringify({ schema: 1, personality, cwd, runtimes: ["claude"], default_runtime: "claude" })
  )
  refs.push({ personality, runtime: "claude", identity: `claude-${personality}`, cwd, privateDir: Option.none() })
}

/** Reference: stat every file synchronously, as a poll that trusts stat would (blocks the event loop). */
const plainSync = () => {
  const started = performance.now()
  let sizes = 0
  for (let k = 0; k < pollsPerRound; k++) {
    for (const file of files) sizes += statSync(file, { throwIfNoEntry: false })?.size ?? 0
  }
  if (sizes === 0) throw new Error("plain loop saw no files")
  return (performance.now() - started) / pollsPerRound
}

/** Reference: Node's promise stat of every file, `statConcurrency` in flight. */
const plainPromises = async () => {
  const started = performance.now()
  let sizes = 0
  for (let k = 0; k < pollsPerRound; k++) {
    let next = 0
    await Promise.all(Array.from({ length: statConcurrency }, async () => {
      while (next < files.length) sizes += (await promises.stat(files[next++] ?? "")).size
    }))
  }
  if (sizes === 0) throw new Error("plain loop saw no files")
  return (performance.now() - started) / pollsPerRound
}

/** The judged baseline: the platform stat of every file, `statConcurrency` at a time. */
const plainPlatform = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const started = performance.now()
  let sizes = 0
  for (let k = 0; k < pollsPerRound; k++) {
    yield* Effect.forEach(files, (file) => Effect.map(fs.stat(file), (info) => void (sizes += Number(info.size))), {
      concurrency: statConcurrency,
      discard: true
    })
  }
  if (sizes === 0) return yield* Effect.dieMessage("plain loop saw no files")
  return (performance.now() - started) / pollsPerRound
})

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN

const main = Effect.gen(function*() {
  const fingerprints = yield* Fingerprints
  const poll = Effect.gen(function*() {
    const started = performance.now()
    for (let k = 0; k < pollsPerRound; k++) {
      const changes = yield* fingerprints.poll(refs)
      if (changes.length > 0) return yield* Effect.dieMessage(`nothing changed, yet ${changes.length} endpoint(s) reported`)
    }
    return (performance.now() - started) / pollsPerRound
  })
  // The first poll adopts and stores every baseline; warm up every path.
  yield* poll
  for (let i = 0; i < 3; i++) {
    plainSync()
    yield* Effect.promise(plainPromises)
    yield* plainPlatform
    yield* poll
  }
  const ours: Array<number> = []
  const platform: Array<number> = []
  const node: Array<number> = []
  const sync: Array<number> = []
  const ratios: Array<number> = []
  const nodeRatios: Array<number> = []
  const syncRatios: Array<number> = []
  for (let r = 0; r < rounds; r++) {
    // Alternate which goes first, so neither always runs on a warmer (or busier) machine.
    let a: number
    let b: number
    if (r % 2 === 0) {
      b = yield* plainPlatform
      a = yield* poll
    } else {
      a = yield* poll
      b = yield* plainPlatform
    }
    const c = yield* Effect.promise(plainPromises)
    const d = plainSync()
    ours.push(a)
    platform.push(b)
    node.push(c)
    sync.push(d)
    ratios.push(a / b)
    nodeRatios.push(a / c)
    syncRatios.push(a / d)
  }
  const pass = Effect.gen(function*() {
    const started = performance.now()
    const owed = yield* FingerprintPoll.pass
    if (owed.length > 0) return yield* Effect.dieMessage("a watcher pass owed reloads with nothing changed")
    return performance.now() - started
  })
  // The first pass reads and decodes every peer file; a repeated one finds them unchanged.
  const firstPass = yield* pass
  const repeatedPass = yield* pass
  const line = (label: string, xs: ReadonlyArray<number>) =>
    console.log(`${label.padEnd(34)} median ${median(xs).toFixed(2)} ms/poll, min ${Math.min(...xs).toFixed(2)} ms/poll`)
  const ratio = (label: string, xs: ReadonlyArray<number>) =>
    console.log(`${label.padEnd(34)} median ${median(xs).toFixed(2)}x, min ${Math.min(...xs).toFixed(2)}x`)
  console.log(`fingerprint poll: ${endpoints} endpoints x 2 files, nothing changed; ${rounds} alternating rounds of ${pollsPerRound} polls`)
  line(`plain FileSystem.stat loop (x${statConcurrency}):`, platform)
  line(`(reference) fs.promises.stat (x${statConcurrency}):`, node)
  line("(reference) fs.statSync loop:", sync)
  line("Fingerprints.poll:", ours)
  ratio("ratio poll/platform loop:", ratios)
  ratio("(reference) ratio poll/promises:", nodeRatios)
  ratio("(reference) ratio poll/statSync:", syncRatios)
  console.log(`(reference) whole watcher pass incl. peer scan: first ${firstPass.toFixed(2)} ms, repeated ${repeatedPass.toFixed(2)} ms`)
  const ok = median(ratios) <= 1.5
  console.log(`goal: Fingerprints.poll <= 1.5x the plain platform stat loop (median ratio ${median(ratios).toFixed(2)}x) ${ok ? "PASS" : "FAIL"}`)
  if (!ok) process.exitCode = 1
})

const scripted = Effect.runSync(ScriptedHost.make)
for (const ref of refs) Effect.runSync(scripted.set(ref.identity, "idle"))
const layer = LiveApplication.services.pipe(
  Layer.provideMerge(Layer.succeed(EndpointHost, scripted.host)),
  Layer.provideMerge(CapabilityServices.layer({ root }))
)

Effect.runPromise(main.pipe(Effect.provide(layer), Effect.provide(NodeContext.layer)))
  .catch((e) => {
    console.error(e)
    process.exitCode = 1
  })
  .finally(() => rmSync(base, { recursive: true, force: true }))
