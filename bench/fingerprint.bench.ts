/**
 * Fingerprint poll (issue 10): one poll over 1,000 endpoints × 2 launch-read files (claude:
 * `<cwd>/.mcp.json`, `<cwd>/.claude/settings.json`) with nothing changed, through the real
 * Fingerprints service (baselines stored and loaded, stat first, hash only on a changed stat),
 * beside a plain `fs.statSync` loop over the same 2,000 files, alternating round by round in the
 * same run. Prints ms per poll, the median and min of the per-round ratio, and the goal
 * (≤ 1.5× the plain loop). For reference it also prints a whole watcher pass (peer scan included).
 * Fails if a poll reports a change (nothing changed) or throws.
 *
 *   node --import tsx bench/fingerprint.bench.ts
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as LiveApplication from "../src/layers/LiveApplication.ts"
import * as ScriptedHost from "../src/services/live/ScriptedHost.ts"
import { EndpointHost, type EndpointRef } from "../src/services/live/EndpointHost.ts"
import { Fingerprints } from "../src/services/live/Fingerprints.ts"
import * as Watcher from "../src/services/live/Watcher.ts"
import * as CapabilitiesLive from "../src/layers/CapabilitiesLive.ts"

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

/** Baseline: stat every file, as a poll that trusts stat would. */
const plain = () => {
  const started = performance.now()
  let sizes = 0
  for (let k = 0; k < pollsPerRound; k++) {
    for (const file of files) sizes += statSync(file, { throwIfNoEntry: false })?.size ?? 0
  }
  if (sizes === 0) throw new Error("plain loop saw no files")
  return (performance.now() - started) / pollsPerRound
}

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
  // The first poll adopts and stores every baseline; warm up both paths.
  yield* poll
  for (let i = 0; i < 3; i++) {
    plain()
    yield* poll
  }
  const ours: Array<number> = []
  const theirs: Array<number> = []
  const ratios: Array<number> = []
  for (let r = 0; r < rounds; r++) {
    // Alternate which goes first, so neither always runs on a warmer (or busier) machine.
    let a: number
    let b: number
    if (r % 2 === 0) {
      b = plain()
      a = yield* poll
    } else {
      a = yield* poll
      b = plain()
    }
    ours.push(a)
    theirs.push(b)
    ratios.push(a / b)
  }
  const pass = yield* Effect.gen(function*() {
    const started = performance.now()
    const owed = yield* Watcher.pass
    if (owed.length > 0) return yield* Effect.dieMessage("a watcher pass owed reloads with nothing changed")
    return performance.now() - started
  })
  console.log(`fingerprint poll: ${endpoints} endpoints x 2 files, nothing changed; ${rounds} alternating rounds of ${pollsPerRound} polls`)
  console.log(`plain fs.statSync loop:   median ${median(theirs).toFixed(2)} ms/poll, min ${Math.min(...theirs).toFixed(2)} ms/poll`)
  console.log(`Fingerprints.poll:        median ${median(ours).toFixed(2)} ms/poll, min ${Math.min(...ours).toFixed(2)} ms/poll`)
  console.log(`ratio poll/plain per round: median ${median(ratios).toFixed(2)}x, min ${Math.min(...ratios).toFixed(2)}x`)
  console.log(`(reference) whole watcher pass incl. peer scan: ${pass.toFixed(2)} ms`)
  const ok = median(ratios) <= 1.5
  console.log(`goal: Fingerprints.poll <= 1.5x the plain statSync loop (median ratio ${median(ratios).toFixed(2)}x) ${ok ? "PASS" : "FAIL"}`)
  if (!ok) process.exitCode = 1
})

const scripted = Effect.runSync(ScriptedHost.make)
for (const ref of refs) Effect.runSync(scripted.set(ref.identity, "idle"))
const layer = LiveApplication.services.pipe(
  Layer.provideMerge(Layer.succeed(EndpointHost, scripted.host)),
  Layer.provideMerge(CapabilitiesLive.layer({ root }))
)

Effect.runPromise(main.pipe(Effect.provide(layer), Effect.provide(NodeContext.layer)))
  .catch((e) => {
    console.error(e)
    process.exitCode = 1
  })
  .finally(() => rmSync(base, { recursive: true, force: true }))
