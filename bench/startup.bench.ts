/**
 * Start-up of the `city` binary (issue 8, "Speed of the tool"): the wall time of a whole
 * `city --help` and `city peer list` process, beside a bare `node -e 0`, in paired rounds
 * (alternating which goes first). Measured from a checkout (`bin/city.mjs` with `src/` present:
 * it checks the bundle is fresh, then runs it) and from an install (a copy of `package.json`,
 * `bin/` and the bundle alone, as npm installs the package). Goal: the median ratio ≤ 4 for
 * `--help` and ≤ 5 for `peer list`, both processes started without `NODE_EXTRA_CA_CERTS`.
 * The warm-up run of each command also writes the binary's V8 code cache (as a user's first run
 * does; bin/city.mjs), so the measured rounds are the starts a user has every time after.
 * The baseline depends on the environment: with `NODE_EXTRA_CA_CERTS` set (as on this machine and
 * its CI, to the system's CA bundle), Node parses those certificates at every start, `node -e 0`
 * taking 60-70 ms instead of 20-30 ms, and each process pays it once. The goal is judged without
 * it (there the fixed cost of the bundle, evaluating Effect, `effect/Schema` and the CLI, weighs
 * against a 25 ms baseline); the ratio with it as set is printed for reference.
 *
 *   node --import tsx bench/startup.bench.ts
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { ensureBundle } from "../scripts/bundle.mjs"
import { finish, goal, pairedRounds, ratioLine, timeProcess, withoutExtraCaCerts } from "./harness.ts"

const rounds = 21
const checkout = join(dirname(fileURLToPath(import.meta.url)), "..")

const main = async () => {
  await ensureBundle()
  const base = mkdtempSync(join(tmpdir(), "city-startup-"))
  try {
    // An install: what npm puts in node_modules/effect-city (the `files` of package.json).
    const installed = join(base, "node_modules", "effect-city")
    mkdirSync(installed, { recursive: true })
    for (const part of ["package.json", "bin", "dist/city.cjs"]) {
      cpSync(join(checkout, part), join(installed, part), { recursive: true })
    }
    const root = join(base, "root")
    mkdirSync(join(root, "peers"), { recursive: true })
    const env = { ...process.env, CITY_ROOT: root }
    const withoutCertificates = withoutExtraCaCerts(env)
    const bare = (processEnv: NodeJS.ProcessEnv = process.env) => () => timeProcess(["-e", "0"], processEnv)
    console.log(`city start-up vs node -e 0 (wall time per process, ${rounds} paired rounds)`)
    for (const [where, bin] of [["checkout", join(checkout, "bin", "city.mjs")], ["install", join(installed, "bin", "city.mjs")]] as const) {
      for (const args of [["--help"], ["peer", "list"]]) {
        const command = (processEnv: NodeJS.ProcessEnv = env) => () => timeProcess([bin, ...args], processEnv)
        await command()() // warm-up (file cache), not measured
        await bare()()
        const name = `city ${args.join(" ")} (${where})`
        const limit = args[0] === "--help" ? 4 : 5
        // The judged line: both started without NODE_EXTRA_CA_CERTS (its certificates are parsed
        // at every start, a cost that is not ours); with it as this environment sets it, for reference.
        const judged = await pairedRounds(rounds, bare(withoutCertificates ?? env), command(withoutCertificates ?? env))
        console.log(ratioLine(`${name} / node -e 0, both without NODE_EXTRA_CA_CERTS`, judged.ratios))
        goal(`${name} wall time <= ${limit}x node -e 0, NODE_EXTRA_CA_CERTS unset (median)`, judged.median <= limit, `${judged.median.toFixed(2)}x`)
        if (withoutCertificates !== undefined) {
          const reference = await pairedRounds(rounds, bare(), command())
          console.log(ratioLine("  the same with NODE_EXTRA_CA_CERTS as set here (for reference)", reference.ratios))
        }
      }
    }
    finish()
  } finally {
    rmSync(base, { recursive: true, force: true })
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
