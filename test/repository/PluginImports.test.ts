/**
 * The plugin-author entry point `effect-city/plugin` (src/plugin.ts) loads Effect and nothing else:
 * no `@effect/platform-node`, no `@effect/platform`, no `proper-lockfile`, no Node built-in, and
 * none of the City's or the capabilities' services. Checked on the module graph of its imports
 * (static imports, followed through every relative file).
 */
import { expect, it } from "vitest"
import { readFileSync } from "node:fs"
import { dirname, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const src = resolve(dirname(fileURLToPath(import.meta.url)), "../../src")

const graph = (entry: string) => {
  const files = new Set<string>()
  const packages = new Set<string>()
  const visit = (file: string) => {
    if (files.has(file)) return
    files.add(file)
    const text = readFileSync(file, "utf8")
    for (const [, spec] of text.matchAll(/^(?:import|export)\s[^"']*?from\s+["']([^"']+)["']/gm)) {
      if (spec!.startsWith(".")) visit(resolve(dirname(file), spec!))
      else packages.add(spec!)
    }
  }
  visit(entry)
  return { files: [...files].map((f) => f.slice(src.length + 1)), packages: [...packages] }
}

it("effect-city/plugin imports only effect and the plugin-author modules", () => {
  const { files, packages } = graph(resolve(src, "plugin.ts"))
  expect(packages.filter((p) => p !== "effect" && !p.startsWith("effect/"))).toEqual([])
  expect(files.filter((f) => f.startsWith("services/city/") || f.startsWith("services/capabilities/") || f.startsWith("layers/") || f.startsWith("programs/"))).toEqual([])
  expect(files).toContain("services/Plugin.ts")
})

it("the main entry does reach the City (the check above can tell them apart)", () => {
  const { files } = graph(resolve(src, "index.ts"))
  expect(files).toContain("services/city/internal/pluginRegistry.ts")
})
