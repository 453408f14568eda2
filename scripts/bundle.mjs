// Builds the `city` binary as one bundled, tree-shaken file: `dist/city.cjs`, a CommonJS script
// that `bin/city.mjs` compiles through V8's code cache and whose `main` it calls; and beside it
// `dist/city-plugin.mjs`, the plugin-author entry (`src/plugin.ts`) as one ES module whose `effect`
// imports stay imports: what the binary gives folder plugins as `effect-city/plugin`, with the
// installed package's `effect` (src/services/entry/HostModules.ts), in a checkout too; and
// `dist/city-worker.mjs`, the main of an isolated plugin's worker thread (src/programs/pluginWorker.ts).
//
// Why: a `city` start that loads the sources through tsx, or the ~700 files of `dist/` and
// node_modules, costs 8-13x a bare `node -e 0`; one file costs about 2-3x, and about two thirds of
// what is left is V8 compiling the file, which the code cache saves on every start after the
// first. Node 20 has no code cache for ES modules, so the bundle is
// a script: `import.meta.url` in the sources becomes `__cityBundleUrl`, and `require` and that URL
// are the parameters of the function `bin/city.mjs` wraps the script in.
//
//   node scripts/bundle.mjs          # build if any input is newer than the bundle
//   node scripts/bundle.mjs --force  # build unconditionally
//
// `bin/city.mjs` calls `ensureBundle()` in a checkout (where `src/` exists), so an edit to the
// sources never runs a stale bundle; the vitest global setup calls it before the tests.
// The bundle is written to a temp file and renamed, so processes starting concurrently never
// import a half-written file.
//
// The status page's assets (`src/services/status/assets/`) are files read at run time from beside
// the module that reads them (src/services/status/StatusPage.ts): they are copied to `dist/assets/`
// for the bundle (whose `import.meta.url` is `dist/city.cjs`'s) and to
// `dist/services/status/assets/` for the module `tsc` compiles (`npm run build` runs `tsc`, then
// this script).
import { copyFileSync, existsSync, renameSync, writeFileSync, mkdirSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import staleCheck from "./stale.cjs"

const here = dirname(fileURLToPath(import.meta.url))
export const packageRoot = join(here, "..")
export const bundlePath = join(packageRoot, "dist", "city.cjs")
export const pluginBundlePath = join(packageRoot, "dist", "city-plugin.mjs")
export const workerBundlePath = join(packageRoot, "dist", "city-worker.mjs")
const entry = join(packageRoot, "src", "programs", "binary.ts")
const pluginEntry = join(packageRoot, "src", "plugin.ts")
const workerEntry = join(packageRoot, "src", "programs", "pluginWorker.ts")
const assetFolder = join(packageRoot, "src", "services", "status", "assets")
const assets = ["status.css", "status.mjs"]
const assetTargets = [join(packageRoot, "dist", "assets"), join(packageRoot, "dist", "services", "status", "assets")]

/** True when the bundle is missing or older than a source file, package.json or the build scripts. */
export const isStale = () => staleCheck.isStale(packageRoot)

export const build = async () => {
  const esbuild = await import("esbuild")
  const result = await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    treeShaking: true,
    minify: true,
    legalComments: "none",
    write: false,
    logLevel: "warning",
    define: { "import.meta.url": "__cityBundleUrl" },
    // A native addon stays a `require` of its installed package: better-sqlite3 (under
    // `@effect/sql-sqlite-node`, for `--cluster sqlite:<file>`) finds its `.node` file from the
    // call stack's file names (the `bindings` package), which inside the bundle are all the
    // bundle's own, so bundled it cannot load at all.
    external: ["better-sqlite3"],
    outfile: bundlePath
  })
  // The plugin entry and the isolation worker's main: ES modules whose packages stay imports.
  const moduleOf = async (entryPoint, outfile) => {
    const built = await esbuild.build({
      entryPoints: [entryPoint],
      bundle: true,
      packages: "external",
      platform: "node",
      format: "esm",
      target: "node20",
      legalComments: "none",
      write: false,
      logLevel: "warning",
      outfile
    })
    const text = built.outputFiles?.[0]?.text
    if (text === undefined) throw new Error(`esbuild produced no output for ${entryPoint}`)
    return text
  }
  const pluginText = await moduleOf(pluginEntry, pluginBundlePath)
  const workerText = await moduleOf(workerEntry, workerBundlePath)
  const file = result.outputFiles?.[0]
  if (file === undefined) throw new Error("esbuild produced no output")
  for (const target of assetTargets) {
    mkdirSync(target, { recursive: true })
    for (const asset of assets) copyFileSync(join(assetFolder, asset), join(target, asset))
  }
  mkdirSync(dirname(bundlePath), { recursive: true })
  // The binary's bundle last: it is what staleness is judged by.
  for (const [target, text] of [[pluginBundlePath, pluginText], [workerBundlePath, workerText], [bundlePath, file.text]]) {
    const temp = `${target}.${process.pid}.tmp`
    writeFileSync(temp, text)
    renameSync(temp, target)
  }
}

/** Builds the bundle when it is stale (a checkout); returns whether it built. */
export const ensureBundle = async () => {
  if (!existsSync(entry) || !isStale()) return false
  await build()
  return true
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv.includes("--force")) await build()
  else await ensureBundle()
}
