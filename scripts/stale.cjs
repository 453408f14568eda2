// Whether the checkout's bundle is older than its inputs: `bin/city.mjs` asks this on every start in a
// checkout, before anything else is loaded, so it is a small CommonJS file (requiring it costs a
// fraction of importing `scripts/bundle.mjs`) and walks `src/` with directory entries (a stat per
// file, none per folder but the folder's own).
"use strict"
const { existsSync, readdirSync, statSync } = require("node:fs")
const { join } = require("node:path")

/** The newest modification time in a folder, its own and its entries' at any depth. */
const newestIn = (folder) => {
  let newest = statSync(folder).mtimeMs
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = `${folder}/${entry.name}`
    const mtime = entry.isDirectory() ? newestIn(path) : statSync(path).mtimeMs
    if (mtime > newest) newest = mtime
  }
  return newest
}

/** What `scripts/bundle.mjs` writes; the binary's bundle last, so its time is the build's. */
const outputs = ["dist/city-plugin.mjs", "dist/city-worker.mjs", "dist/city.cjs"]

/** True when an output is missing, or the bundle is older than `src/`, package.json or the build scripts. */
const isStale = (packageRoot) => {
  if (outputs.some((output) => !existsSync(join(packageRoot, output)))) return true
  const bundle = join(packageRoot, "dist", "city.cjs")
  const built = statSync(bundle).mtimeMs
  if (newestIn(join(packageRoot, "src")) > built) return true
  const scripts = ["package.json", "scripts/bundle.mjs", "scripts/stale.cjs"]
  return scripts.some((script) => statSync(join(packageRoot, script)).mtimeMs > built)
}

module.exports = { isStale, outputs }
