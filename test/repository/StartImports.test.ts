/**
 * A start of `city` evaluates only the code it runs (CONTRIBUTING.md, "A start evaluates only the
 * code it runs"): what the binary imports statically, followed through every static value import
 * under `src/`, is the dispatcher and the command tree; a verb's handler module (`run/`), the
 * layers, the live application, the loader and the reports' rendering are reached only through
 * the `import()` of a handler. A static import of any of them from the tree would make every
 * `city --help` evaluate it again (bench/startup.bench.ts measures what that costs).
 */
import { expect, it } from "@effect/vitest"
import { existsSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const repo = fileURLToPath(new URL("../..", import.meta.url))

/** The files `file` imports statically for their values (not `import type`, not `import()`). */
const valueImports = (file: string): Array<string> => {
  const text = readFileSync(file, "utf8")
  const found: Array<string> = []
  for (const match of text.matchAll(/^(?:import|export)\s+(?!type\b)[^;]*?from\s+"(\.{1,2}\/[^"]+)"/gms)) {
    const target = resolve(dirname(file), match[1]!)
    if (existsSync(target)) found.push(target)
  }
  return found
}

const reachedFrom = (entry: string): Set<string> => {
  const seen = new Set<string>()
  const walk = (file: string) => {
    if (seen.has(file)) return
    seen.add(file)
    for (const next of valueImports(file)) walk(next)
  }
  walk(entry)
  return new Set([...seen].map((file) => relative(repo, file)))
}

it("the binary's static imports reach no handler, layer, live-application, loader or report code", () => {
  const reached = reachedFrom(join(repo, "src/programs/binary.ts"))
  // The walk itself: the tree and the dispatcher are reached.
  expect([...reached]).toEqual(expect.arrayContaining(["src/programs/cli.ts", "src/programs/peer.ts", "src/programs/daemon.ts"]))
  // layers/RunMain.ts is the exception: the binary runs through it, and it imports only NodeRuntime.
  const loadedLater = /^src\/(programs\/run\/|layers\/(?!RunMain\.ts)|services\/(live|isolation\/(?!WorkerScript)|loader\/(?!ModuleImporter|HostModules)|capabilities|status|city\/(?!CityRoot))|programs\/(output|jsonOutput|jsonValues|statusPage|version)\.ts)/
  expect([...reached].filter((file) => loadedLater.test(file)).sort()).toEqual([])
})
