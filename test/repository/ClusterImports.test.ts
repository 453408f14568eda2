/**
 * `effect-city/cluster` is an entry point that nothing else loads (docs/cluster.md, "What this
 * part provides"): the import graph of the main entry point, the plugin and testing entry points,
 * the CLI (its static imports and the handlers it loads with `import()`) and the demo reaches no
 * `@effect/cluster`, `@effect/sql*`, `@effect/workflow` or `@effect/rpc` module; and every import
 * of those packages under `src/` is in `src/services/cluster/`.
 *
 * The `city` program has one door to them: `run/cluster.ts`, loaded with `import()` by
 * `city daemon` when it is the daemon of a host of a fleet (`--cluster`, or host.json's
 * `cluster.url`), by the verbs' services on a host of a fleet (the same: `run/services.ts`,
 * `run/stores.ts`, and the sweeps of `run/capability.ts`), and by `city fleet`, the one verb that
 * only speaks to a fleet. The walk of the CLI stops at that door, and a test
 * below holds the door to that one place.
 */
import { expect, it } from "@effect/vitest"
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const repo = fileURLToPath(new URL("../..", import.meta.url))
const clusterPackages = /^@effect\/(cluster|sql|sql-[a-z0-9-]+|workflow|rpc)(\/|$)/

/** What a file imports for its values: static imports and `import("…")`, not `import type`. */
const imports = (file: string): { readonly files: Array<string>; readonly packages: Array<string> } => {
  const text = readFileSync(file, "utf8")
  const specifiers = [
    ...[...text.matchAll(/^(?:import|export)\s+(?!type\b)[^;]*?from\s+"([^"]+)"/gms)].map((m) => m[1]!),
    ...[...text.matchAll(/^import\s+"([^"]+)"/gm)].map((m) => m[1]!),
    ...[...text.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g)].map((m) => m[1]!)
  ]
  const files: Array<string> = []
  const packages: Array<string> = []
  for (const specifier of specifiers) {
    if (specifier.startsWith(".")) {
      const target = resolve(dirname(file), specifier)
      if (existsSync(target)) files.push(target)
    } else {
      packages.push(specifier)
    }
  }
  return { files, packages }
}

/** The `city` program's one door to the cluster packages, loaded only with `--cluster`. */
const door = join(repo, "src/programs/run/cluster.ts")

/** Every package the graph from `entry` reaches, with the first file that imports it. */
const packagesReached = (entry: string, stopAtDoor = true): Map<string, string> => {
  const seen = new Set<string>()
  const reached = new Map<string, string>()
  const walk = (file: string) => {
    if (seen.has(file) || (stopAtDoor && file === door)) return
    seen.add(file)
    const found = imports(file)
    for (const name of found.packages) if (!reached.has(name)) reached.set(name, relative(repo, file))
    for (const next of found.files) walk(next)
  }
  walk(join(repo, entry))
  return reached
}

const clusterReached = (entry: string) =>
  [...packagesReached(entry)].filter(([name]) => clusterPackages.test(name)).map(([name, file]) => `${name} (from ${file})`)

it.each([
  "src/index.ts",
  "src/plugin.ts",
  "src/testing.ts",
  "src/programs/binary.ts",
  "src/programs/main.ts",
  "src/programs/demoMain.ts"
])("%s reaches no @effect/cluster, @effect/sql*, @effect/workflow or @effect/rpc module", (entry) => {
  expect(clusterReached(entry)).toEqual([])
})

it("the walk finds them: src/cluster.ts reaches @effect/sql, and the CLI's graph includes its handlers", () => {
  expect(clusterReached("src/cluster.ts")).toEqual(expect.arrayContaining([expect.stringMatching(/^@effect\/sql\//)]))
  expect([...packagesReached("src/programs/binary.ts").keys()]).toEqual(expect.arrayContaining(["@effect/platform-node/NodeFileSystem"]))
})

it("every import of the cluster packages under src/ is in src/services/cluster/", () => {
  const files = (dir: string): Array<string> =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name)
      return statSync(path).isDirectory() ? files(path) : name.endsWith(".ts") ? [path] : []
    })
  const outside = files(join(repo, "src"))
    .filter((file) => !relative(repo, file).startsWith("src/services/cluster/"))
    .filter((file) =>
      [...readFileSync(file, "utf8").matchAll(/from\s+"([^"]+)"|import\(\s*"([^"]+)"\s*\)/g)]
        .some((m) => clusterPackages.test(m[1] ?? m[2]!)))
    .map((file) => relative(repo, file))
  expect(outside).toEqual([])
})

it("the city program's door to the cluster packages is run/cluster.ts, loaded by import() for a daemon or a sweep on a fleet and for fleet only", () => {
  const sources = (dir: string): Array<string> =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name)
      return statSync(path).isDirectory() ? sources(path) : name.endsWith(".ts") ? [path] : []
    })
  const importers = sources(join(repo, "src")).filter((file) => imports(file).files.includes(door))
  expect(importers.map((file) => relative(repo, file)).sort()).toEqual([
    "src/programs/daemon.ts",
    "src/programs/fleet.ts",
    "src/programs/run/capability.ts",
    "src/programs/run/services.ts",
    "src/programs/run/stores.ts"
  ])
  const text = readFileSync(join(repo, "src/programs/daemon.ts"), "utf8")
  expect(text).toMatch(/Option\.isSome\(o\.cluster\)\s*\?\s*loaded\(clusterHandlers/)
  expect(text).toMatch(/const clusterHandlers = \(\) => import\("\.\/run\/cluster\.ts"\)/)
  // Behind the door the walk does reach them: the door is the only thing keeping them out.
  const behind = [...packagesReached("src/programs/run/cluster.ts", false).keys()]
  expect(behind).toEqual(expect.arrayContaining(["@effect/cluster/Entity", "@effect/sql/SqlClient"]))
})
