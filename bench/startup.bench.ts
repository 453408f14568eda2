/**
 * Start-up of the `city` binary (issue 8, "Speed of the tool"): the wall time of a whole
 * `city --help` and `city peer list` process, beside a bare `node -e 0`, in paired rounds
 * (alternating which goes first). Measured from a checkout (`bin/city.mjs` with `src/` present:
 * it checks the bundle is fresh, then runs it) and from an install (a copy of `package.json`,
 * `bin/` and the bundle alone, as npm installs the package). Goal: the median ratio ≤ 4 for each.
 * The warm-up run of each command also writes the binary's V8 code cache (as a user's first run
 * does; bin/city.mjs), so the measured rounds are the starts a user has every time after.
 *
 *   node --import tsx bench/startup.bench.ts
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { ensureBundle } from "../scripts/bundle.mjs"
import { finish, goal, pairedRounds, ratioLine, timeProcess } from "./harness.ts"

const rounds = 21
const checkout = join(dirname(fileURLToPath(import.meta.url)), "..")

const main = async () => {
  await ensureBundle()
  const base = mkdtempSync(join(tmpdir(), "city-startup-"))
  try {
    // An install: what npm puts in node_modules/effect-city (the `files` of package.json).
    const installed = join(base, "node_modules", "effect-city")
    mkdirSync(installed, { recursive: true })
    for (const part of ["package.json", "bin", "dist/city.cjs", "dist/spawner.cjs"]) {
      cpSync(join(checkout, part), join(installed, part), { recursive: true })
    }
    const root = join(base, "root")
    mkdirSync(join(root, "peers"), { recursive: true })
    const env = { ...process.env, CITY_ROOT: root }
    const bare = () => timeProcess(["-e", "0"])
    console.log(`city start-up vs node -e 0 (wall time per process, ${rounds} paired rounds)`)
    for (const [where, bin] of [["checkout", join(checkout, "bin", "city.mjs")], ["install", join(installed, "bin", "city.mjs")]] as const) {
      for (const args of [["--help"], ["peer", "list"]]) {
        const command = () => timeProcess([bin, ...args], env)
        await command() // warm-up (file cache), not measured
        await bare()
        const paired = await pairedRounds(rounds, bare, command)
        const name = `city ${args.join(" ")} (${where})`
        console.log(ratioLine(`${name} / node -e 0`, paired.ratios))
        goal(`${name} wall time <= 4x node -e 0 (median)`, paired.median <= 4, `${paired.median.toFixed(2)}x`)
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
