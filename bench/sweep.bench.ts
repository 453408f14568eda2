/**
 * A sweep as a user runs it: a whole `city capability sync` process over 200 endpoints (100 peers
 * with claude and codex) at `--concurrency 4`, start-up included, against a plain Node process
 * that spawns the same commands with the same arguments, 4 at a time (`spawn` with its default
 * options, waiting for `close`: what a person would write instead). Paired rounds alternate which
 * goes first; the ratio is throughput, plain time / city time, per round (1.0 = as fast as the
 * plain process).
 *
 * - judged: the provisioner is a small Node script that writes one file (as capability packages
 *   ship theirs). Goal: median >= 0.9x.
 * - reference, no goal: `/bin/true`, where city's per-call and start-up costs weigh the most.
 * - reference, no goal: the Effect floor (`sweepFloor.ts`, bundled here): an Effect program on the
 *   public API that runs the same commands the same way with nothing recorded. Plain / floor says
 *   what Effect itself costs a sweep; floor / city, what city's own work (state root, records,
 *   journal, log, owed reloads) costs.
 *
 * Both processes, and so the commands they start, run without `NODE_EXTRA_CA_CERTS` (when it is
 * set: Node parses those certificates at every start, the provisioner script's too, which would
 * add the same ~40 ms to every call on both sides and hide the difference being measured).
 *
 *   node --import tsx bench/sweep.bench.ts
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import * as esbuild from "esbuild"
import { ensureBundle } from "../scripts/bundle.mjs"
import { finish, goal, medianOf, pairedRounds, ratioLine, timeProcess, withoutExtraCaCerts } from "./harness.ts"

const peers = 100
const runtimes = ["claude", "codex"] as const
const endpoints = peers * runtimes.length
const concurrency = 4
const rounds = 11
const checkout = join(dirname(fileURLToPath(import.meta.url)), "..")

const base = mkdtempSync(join(tmpdir(), "city-bench-"))
const root = join(base, "root")
const cwd = join(base, "work")
mkdirSync(join(root, "peers"), { recursive: true })
mkdirSync(cwd)
const personalities = Array.from({ length: peers }, (_, i) => `p${String(i).padStart(4, "0")}`)
for (const personality of personalities) {
  writeFileSync(
    join(root, "peers", `${personality}.json`),
    JSON.stringify({ schema: 1, personality, cwd, runtimes, default_runtime: runtimes[0] })
  )
}

/** The provisioner: writes `<cwd>/<personality>-<runtime>.md`. */
const provisioner = join(base, "provision.cjs")
writeFileSync(
  provisioner,
  `#!${process.execPath}
const { writeFileSync } = require("node:fs")
const [personality, runtime, cwdArg] = process.argv.slice(3)
const dir = cwdArg.slice("--cwd=".length)
writeFileSync(dir + "/" + personality + "-" + runtime.slice("--runtime=".length) + ".md", "# " + personality + "\\n")
`
)
chmodSync(provisioner, 0o755)

interface Case {
  readonly capability: string
  readonly command: string
}
const cases = {
  node: { capability: "bench-node", command: provisioner },
  bare: { capability: "bench-true", command: "/bin/true" }
} satisfies Record<string, Case>

for (const { capability, command } of Object.values(cases)) {
  writeFileSync(
    join(base, `${capability}.json`),
    JSON.stringify({
      schema: 1,
      capability,
      version: "1.0.0",
      runtimes,
      provision: { command, args: ["provision-peer", "{personality}", "--runtime={runtime}", "--cwd={cwd}", "{occasion}"] },
      unprovision: { command, args: ["unprovision-peer", "{personality}"] }
    })
  )
}

/** The plain loop as a `node -e` program: every endpoint's argv, `concurrency` at a time. */
const plainLoopSource = (command: string) => {
  const argvs = personalities.flatMap((personality) =>
    runtimes.map((runtime) => ["provision-peer", personality, `--runtime=${runtime}`, `--cwd=${cwd}`, "sweep-on"])
  )
  return `
const { spawn } = require("node:child_process")
const argvs = ${JSON.stringify(argvs)}
let next = 0
let done = 0
const launch = () => {
  if (next >= argvs.length) return
  const child = spawn(${JSON.stringify(command)}, argvs[next++])
  child.on("error", (e) => { console.error(e); process.exit(1) })
  child.on("close", (code) => {
    if (code !== 0) { console.error("exit " + code); process.exit(1) }
    if (++done < argvs.length) launch()
  })
}
for (let k = 0; k < ${concurrency}; k++) launch()
`
}

const env: NodeJS.ProcessEnv = withoutExtraCaCerts({ ...process.env, CITY_ROOT: root }) ?? { ...process.env, CITY_ROOT: root }
const city = (...args: ReadonlyArray<string>) => timeProcess([join(checkout, "bin", "city.mjs"), ...args], env)
const plainProcess = (c: Case) => () => timeProcess(["-e", plainLoopSource(c.command)], env)
/** `city` exits 1 when any endpoint's call failed: `timeProcess` then rejects, and the bench fails. */
const cityProcess = (c: Case) => () => city("capability", "sync", c.capability, "--concurrency", String(concurrency))

const floorBundle = join(base, "sweepFloor.cjs")
const floorArgvs = join(base, "floor-argvs.json")
writeFileSync(
  floorArgvs,
  JSON.stringify(personalities.flatMap((personality) =>
    runtimes.map((runtime) => [cases.node.command, "provision-peer", personality, `--runtime=${runtime}`, `--cwd=${cwd}`, "sweep-on"])
  ))
)
const floorProcess = () => timeProcess([floorBundle, floorArgvs, String(concurrency)], env)

const main = async () => {
  await ensureBundle()
  await esbuild.build({
    entryPoints: [join(checkout, "bench", "sweepFloor.ts")],
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    minify: true,
    outfile: floorBundle,
    logLevel: "warning"
  })
  for (const c of Object.values(cases)) await city("capability", "register", join(base, `${c.capability}.json`))
  // Warm-up of both paths (code cache, file cache), not measured.
  for (const c of Object.values(cases)) {
    await plainProcess(c)()
    await cityProcess(c)()
  }
  rmSync(cwd, { recursive: true })
  mkdirSync(cwd)
  const rate = (ms: ReadonlyArray<number>) => ((endpoints / medianOf(ms)) * 1000).toFixed(0)

  console.log(`sweep: ${endpoints} endpoints, concurrency ${concurrency}, ${rounds} paired rounds, as processes`)
  const judged = await pairedRounds(rounds, plainProcess(cases.node), cityProcess(cases.node))
  const written = readdirSync(cwd).length
  if (written !== endpoints) throw new Error(`the provisioner wrote ${written} files, not ${endpoints}`)
  const judgedRatios = judged.ratios.map((r) => 1 / r)
  console.log(ratioLine("city capability sync vs plain spawn loop, Node provisioner, throughput", judgedRatios))
  console.log(`  endpoints/s (medians): plain ${rate(judged.baseline)}, city ${rate(judged.subject)}`)
  const reference = await pairedRounds(rounds, plainProcess(cases.bare), cityProcess(cases.bare))
  console.log(ratioLine("city capability sync vs plain spawn loop, /bin/true (reference)", reference.ratios.map((r) => 1 / r)))
  console.log(`  endpoints/s (medians): plain ${rate(reference.baseline)}, city ${rate(reference.subject)}`)
  const floor = await pairedRounds(rounds, plainProcess(cases.node), floorProcess)
  console.log(ratioLine("the Effect floor (sweepFloor.ts) vs plain spawn loop, Node provisioner, throughput (reference)", floor.ratios.map((r) => 1 / r)))
  console.log(`  endpoints/s (medians): plain ${rate(floor.baseline)}, Effect floor ${rate(floor.subject)}; city ${rate(judged.subject)}`)
  const median = medianOf(judgedRatios)
  goal("city capability sync, Node provisioner, >= 0.9x the plain spawn loop process's throughput (median)", median >= 0.9, `${median.toFixed(2)}x`)
  finish()
}

main()
  .catch((error: unknown) => {
    console.error(error)
    process.exitCode = 1
  })
  .finally(() => rmSync(base, { recursive: true, force: true }))
