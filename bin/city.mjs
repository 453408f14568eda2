#!/usr/bin/env node
// The `city` binary. It runs one bundled, tree-shaken file, `dist/city.cjs` (scripts/bundle.mjs),
// compiled through V8's code cache, and calls its `main` with this module's `import()` (for plugin
// entries: code compiled as a `vm.Script` cannot import modules itself).
//
// In a checkout (where `src/` is) the bundle is rebuilt first whenever a source file is newer, so
// an edit never runs stale code; an installed package ships the bundle and runs it as is.
//
// The code cache (compiling the bundle was about two thirds of a start): the first run of each
// verb of a bundle on a Node version writes V8's compiled code of what it ran to
// `$CITY_CODE_CACHE`, else `$XDG_CACHE_HOME/effect-city`, else `~/.cache/effect-city` (a folder
// only the user may read), named by a hash of the bundle's text, the Node version and the
// architecture, and the verb (the first argument that is not an option; `none` for `--help`);
// later runs of that verb compile from it. V8 checks the cache against its own version and flags
// and falls back to compiling when it does not fit (then the file is written again). Writing is
// best effort: a folder that cannot be written only means no cache. `CITY_CODE_CACHE=off` turns it
// off. When a cache is written, all but the twelve newest of the folder are removed (the verbs a
// user runs, of a checkout and an install or of two Node versions, keep theirs).
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { homedir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { Script } from "node:vm"

const packageRoot = fileURLToPath(new URL("..", import.meta.url))
if (existsSync(new URL("../src/programs/binary.ts", import.meta.url))) {
  if (createRequire(import.meta.url)("../scripts/stale.cjs").isStale(packageRoot)) {
    const { ensureBundle } = await import("../scripts/bundle.mjs")
    await ensureBundle()
  }
}

const bundle = fileURLToPath(new URL("../dist/city.cjs", import.meta.url))
const source = readFileSync(bundle, "utf8")

const cacheDir = () => {
  const configured = process.env.CITY_CODE_CACHE
  if (configured === "off") return undefined
  if (configured !== undefined && configured !== "") return configured
  if (process.env.XDG_CACHE_HOME) return join(process.env.XDG_CACHE_HOME, "effect-city")
  try {
    const home = homedir()
    return home === "" ? undefined : join(home, ".cache", "effect-city")
  } catch {
    // No home directory (no passwd entry for the user): no cache.
    return undefined
  }
}
const dir = cacheDir()
const key = createHash("sha256").update(source).update(`${process.version} ${process.arch}`).digest("hex").slice(0, 32)
// One cache per verb: V8's cached data holds the functions compiled by the run that wrote it, and
// a verb compiles its own (a daemon start from a cache written by `--help` compiled ~60 ms more).
const verb = process.argv.slice(2).find((arg) => !arg.startsWith("-"))
const verbKey = verb !== undefined && /^[a-z][a-z-]{0,23}$/.test(verb) ? verb : "none"
const cacheFile = dir === undefined ? undefined : join(dir, `city-${key}-${verbKey}.v8cache`)

let cachedData
if (cacheFile !== undefined) {
  try {
    cachedData = readFileSync(cacheFile)
  } catch {
    // No cache yet: compiled from the text, and written at exit.
  }
}

const script = new Script(
  `(function (exports, require, module, __filename, __dirname, __cityBundleUrl) {${source}\n})`,
  { filename: bundle, ...(cachedData === undefined ? {} : { cachedData }) }
)

if (cacheFile !== undefined && (cachedData === undefined || script.cachedDataRejected === true)) {
  process.once("exit", () => {
    try {
      mkdirSync(dirname(cacheFile), { recursive: true, mode: 0o700 })
      const temp = `${cacheFile}.${process.pid}.tmp`
      writeFileSync(temp, script.createCachedData(), { mode: 0o600 })
      renameSync(temp, cacheFile)
      const folder = dirname(cacheFile)
      const caches = readdirSync(folder)
        .filter((name) => /^city-[0-9a-f]{32}(-[a-z-]+)?\.v8cache$/.test(name))
        .map((name) => ({ path: join(folder, name), mtime: statSync(join(folder, name)).mtimeMs }))
        .sort((a, b) => b.mtime - a.mtime)
      for (const old of caches.slice(12)) rmSync(old.path, { force: true })
    } catch {
      // Best effort: no cache this time.
    }
  })
}

const module = { exports: {} }
script.runInThisContext()(module.exports, createRequire(bundle), module, bundle, dirname(bundle), pathToFileURL(bundle).href)
module.exports.main({ importModule: (url) => import(url) })
