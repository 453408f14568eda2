/**
 * `npm run bench`: runs every `bench/*.bench.ts` in its own process, one after
 * the other (they measure, so they must not share the 2 cores), echoes what each
 * prints, and writes everything to `bench/results.md`.
 */
import { spawnSync } from "node:child_process"
import { readdirSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
const only = process.argv.slice(2)
const files = readdirSync(here)
  .filter((f) => f.endsWith(".bench.ts"))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort()

const sections: Array<string> = [`# Benchmark results\n\nRun on ${new Date().toISOString()} (node ${process.version}).\n`]
let failed = false
for (const file of files) {
  console.log(`\n## ${file}`)
  const run = spawnSync(process.execPath, ["--import", "tsx", "--expose-gc", join(here, file)], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"]
  })
  process.stdout.write(run.stdout)
  if (run.status !== 0) failed = true
  sections.push(`## ${file}\n\n\`\`\`\n${run.stdout.trim()}\n\`\`\`\n`)
}
writeFileSync(join(here, "results.md"), sections.join("\n"))
process.exitCode = failed ? 1 : 0
