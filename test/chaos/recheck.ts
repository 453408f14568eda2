/**
 * The checker (test/chaos/checker.ts) run again on a run the chaos test kept: the folder it names
 * holds `checker-input.json`, the checker's whole input. For working on the checker against real
 * histories:
 *
 *   npx tsx test/chaos/recheck.ts /tmp/city-chaos-<seed>-XXXXXX
 *
 * Prints the verdict; exit 1 when a promise is broken.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import * as Checker from "./checker.ts"

const folder = process.argv[2]
if (folder === undefined) {
  console.error("usage: npx tsx test/chaos/recheck.ts <folder the chaos test kept>")
  process.exit(2)
}
const input = JSON.parse(readFileSync(join(folder, "checker-input.json"), "utf8")) as Checker.ChaosInput
const verdict = Checker.check(input)
console.log(Checker.describe(input, verdict, `recheck of ${folder}`))
process.exit(verdict.violations.length === 0 ? 0 : 1)
