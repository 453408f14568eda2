#!/usr/bin/env node
/**
 * The package as a user gets it (`npm test` runs this after the test suite):
 *
 * 1. `npm pack` (its `prepack` builds `dist/`), then `publint` on the package and
 *    `@arethetypeswrong/cli` on the tarball, both with no problem allowed. attw runs with the
 *    `esm-only` profile: the package is ESM only on purpose (`"type": "module"`, no `require`
 *    condition), so the `node10` and `node16-cjs` resolutions are not targets.
 * 2. A fresh temporary project installs the tarball with the peer dependencies at the versions this
 *    checkout pins (from the npm cache: `--prefer-offline`, no audit, no fund), the optional ones
 *    (the SQL drivers of `effect-city/cluster`) left out, as a user who needs none of them does.
 * 3. The consumer is `examples/library.ts` (it imports `effect-city`, as a user's copy does), plus
 *    a file that runs it. It is type-checked under `moduleResolution` `nodenext` with
 *    `skipLibCheck: false`, so our shipped `.d.ts` files are checked too (and emitted and run with
 *    `node`), and under `bundler` (there with `skipLibCheck: true`: the `.d.ts` files were just
 *    checked, and checking them again would double the cost). Then every shipped `examples/*.ts`,
 *    copied from the installed package, is type-checked against it (`noEmit`; the OpenTelemetry
 *    example's packages installed at the versions this checkout pins; every package's declarations
 *    checked, with `@types/ws` and the `DOM` lib, as the README tells such a project), and the README's first
 *    plugin test (`examples/testing.test.ts`) runs under the consumer's own vitest.
 * 4. `npx city --help` runs from the install, and so does the README's "Try it" with the shipped
 *    example declaration and provisioner (peer create, capability register, list, unregister).
 * 5. The status page's stylesheet and script, real files beside the module that reads them
 *    (src/services/status/StatusPage.ts), are found by both shipped forms: the compiled module
 *    (`dist/services/status/StatusPage.js`, imported and asked for both) and the binary
 *    (`city daemon --http 127.0.0.1:0`, asked over HTTP for the page and both); each is the
 *    source file byte for byte.
 * 6. Third-party plugins in a folder outside any `node_modules` tree, one Effect style (importing
 *    `effect` and `effect-city/plugin`, isolated in a worker thread) and one `register(ctx)` style,
 *    load through `city plugins list` of the project's install and of a global install (`npm
 *    install -g` under a temporary prefix): the host provides the modules (docs/plugin-loader.md,
 *    "Host-provided modules", "Isolation").
 *
 * Exits 1 with the failing step's output on the first failure; prints the time each step took.
 */
import { execFileSync, spawn } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const pkg = JSON.parse(readFileSync(join(repo, "package.json"), "utf8"))
const work = mkdtempSync(join(tmpdir(), "city-pack-check-"))
const npmFlags = ["--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"]
const bin = (name) => join(repo, "node_modules", ".bin", name)

const started = Date.now()
const step = (name, file, args, cwd = work, env = process.env) => {
  const t0 = Date.now()
  try {
    const out = execFileSync(file, args, { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
    console.log(`pack-check: ${name} (${((Date.now() - t0) / 1000).toFixed(1)} s)`)
    return out
  } catch (error) {
    console.error(`pack-check: FAILED: ${name}\n${error.stdout ?? ""}${error.stderr ?? ""}`)
    process.exit(1)
  }
}

try {
  const packed = JSON.parse(step("npm pack", "npm", ["pack", "--json", "--pack-destination", work, ...npmFlags], repo))
  const tarball = join(work, packed[0].filename)
  const shipped = packed[0].files.map((f) => f.path)
  for (const required of ["LICENSE", "dist/index.js", "dist/plugin.d.ts", "dist/cluster.d.ts", "dist/city.cjs", "dist/city-plugin.mjs", "dist/city-worker.mjs", "schemas/capability-declaration.schema.json"]) {
    if (!shipped.includes(required)) {
      console.error(`pack-check: FAILED: the tarball lacks ${required}`)
      process.exit(1)
    }
  }

  step("publint", bin("publint"), ["--strict"], repo)
  step("attw", bin("attw"), [tarball, "--profile", "esm-only", "--format", "table-flipped"])

  // The consumer project: the tarball and the peers at our pinned versions.
  const pinned = (name) => `${name}@${pkg.devDependencies[name].replace(/^[~^]/, "")}`
  const peers = Object.keys(pkg.peerDependencies).filter((name) => pkg.peerDependenciesMeta?.[name]?.optional !== true)
  writeFileSync(join(work, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }))
  step("npm install (tarball + peers)", "npm", [
    "install",
    tarball,
    ...peers.map(pinned),
    pinned("@types/node"),
    ...npmFlags
  ])

  // Every map in dist/ carries its sources, so nothing points at a file that is not shipped.
  const installed = join(work, "node_modules", "effect-city")
  for (const map of shipped.filter((f) => f.endsWith(".js.map"))) {
    const json = JSON.parse(readFileSync(join(installed, map), "utf8"))
    if (!Array.isArray(json.sourcesContent) || json.sourcesContent.some((s) => typeof s !== "string")) {
      console.error(`pack-check: FAILED: ${map} does not carry its sources`)
      process.exit(1)
    }
  }

  mkdirSync(join(work, "src"))
  copyFileSync(join(installed, "examples", "library.ts"), join(work, "src", "library.ts"))
  writeFileSync(
    join(work, "src", "main.ts"),
    [
      "import { Effect } from \"effect\"",
      "import { Plugin } from \"effect-city/plugin\"",
      "import { mkdtempSync } from \"node:fs\"",
      "import { tmpdir } from \"node:os\"",
      "import { join } from \"node:path\"",
      "import { greeter, main } from \"./library.js\"",
      "",
      "const same: Plugin.Plugin = greeter",
      "const result = await Effect.runPromise(main(mkdtempSync(join(tmpdir(), \"consumer-\"))))",
      "console.log(JSON.stringify({ plugin: same.name, ...result }))",
      ""
    ].join("\n")
  )
  const compilerOptions = {
    target: "ES2022",
    lib: ["ES2022"],
    types: ["node"],
    strict: true,
    skipLibCheck: false,
    outDir: "out"
  }
  writeFileSync(
    join(work, "tsconfig.nodenext.json"),
    JSON.stringify({ compilerOptions: { ...compilerOptions, module: "NodeNext", moduleResolution: "NodeNext" }, include: ["src"] })
  )
  writeFileSync(
    join(work, "tsconfig.bundler.json"),
    JSON.stringify({
      compilerOptions: { ...compilerOptions, module: "ESNext", moduleResolution: "Bundler", noEmit: true, skipLibCheck: true },
      include: ["src"]
    })
  )
  step("tsc (moduleResolution nodenext)", bin("tsc"), ["-p", "tsconfig.nodenext.json"])
  step("tsc (moduleResolution bundler)", bin("tsc"), ["-p", "tsconfig.bundler.json"])
  const output = step("node out/main.js", "node", [join("out", "main.js")])
  const result = JSON.parse(output.trim().split("\n").at(-1))
  if (result.plugin !== "greeter" || result.reply !== "Hello Grace, from ada in notes") {
    console.error(`pack-check: FAILED: the consumer printed ${output}`)
    process.exit(1)
  }

  // The shipped examples as a user copies them, compiled against the installed package. The
  // OpenTelemetry example needs its packages: at the versions this checkout pins, with the peers
  // of @effect/opentelemetry at the versions installed here (so the npm cache serves them).
  const shippedExamples = shipped.filter((f) => /^examples\/[^/]+\.ts$/.test(f))
  if (shippedExamples.length === 0) {
    console.error("pack-check: FAILED: the tarball ships no examples/*.ts")
    process.exit(1)
  }
  const installedVersion = (name) => `${name}@${JSON.parse(readFileSync(join(repo, "node_modules", name, "package.json"), "utf8")).version}`
  const otelPeers = Object.keys(JSON.parse(readFileSync(join(repo, "node_modules", "@effect", "opentelemetry", "package.json"), "utf8")).peerDependencies)
    .filter((name) => name.startsWith("@opentelemetry/"))
  // The README's test example (examples/testing.test.ts) is a vitest file: a user's project has both.
  step("npm install (the examples' OpenTelemetry packages, @effect/vitest and vitest)", "npm", [
    "install",
    pinned("@effect/opentelemetry"),
    ...otelPeers.map(installedVersion),
    installedVersion("@effect/vitest"),
    installedVersion("vitest"),
    // The README's test kit line: `@effect/platform-node`'s declarations import `ws`'s types.
    pinned("@types/ws"),
    ...npmFlags
  ])
  mkdirSync(join(work, "examples"))
  for (const file of shippedExamples) copyFileSync(join(installed, file), join(work, file))
  writeFileSync(
    join(work, "tsconfig.examples.json"),
    JSON.stringify({
      compilerOptions: {
        ...compilerOptions,
        module: "NodeNext",
        moduleResolution: "NodeNext",
        noEmit: true,
        // As a user's project: no allowImportingTsExtensions (the examples import each other as
        // `.js`), and the declarations of every package checked too (skipLibCheck off).
        exactOptionalPropertyTypes: true,
        lib: ["ES2022", "DOM"],
        skipLibCheck: false
      },
      include: ["examples"]
    })
  )
  step(`tsc: the ${shippedExamples.length} shipped examples against the installed package`, bin("tsc"), ["-p", "tsconfig.examples.json"])
  // The README's first plugin test, run as a user runs it: the consumer's own vitest, no config.
  // Colour off (CI sets FORCE_COLOR), and any escape left stripped, so the summary line reads plain.
  const { FORCE_COLOR: _forced, ...plainEnv } = process.env
  const tested = step("vitest run examples/testing.test.ts (the consumer's vitest)", "npx", ["--no-install", "vitest", "run", "examples/testing.test.ts"], work, {
    ...plainEnv,
    NO_COLOR: "1"
  }).replace(/\u001b\[[0-9;]*m/g, "")
  if (!/Tests\s+\d+ passed/.test(tested)) {
    console.error(`pack-check: FAILED: the README's test example printed\n${tested}`)
    process.exit(1)
  }

  const help = step("npx city --help", "npx", ["--no-install", "city", "--help"])
  if (!help.includes("capability") || !help.includes("peer")) {
    console.error(`pack-check: FAILED: city --help printed\n${help}`)
    process.exit(1)
  }
  // The README's "Try it", after install: the shipped example declaration and provisioner.
  const examples = join(work, "node_modules", "effect-city", "examples")
  const demo = readFileSync(join(examples, "capability", "demo.json"), "utf8")
    .replaceAll("/ABSOLUTE/PATH/TO/examples", examples)
  writeFileSync(join(work, "demo.json"), demo)
  const env = { ...process.env, CITY_ROOT: join(work, "city-root") }
  step("try it: city peer create", "npx", ["--no-install", "city", "peer", "create", "alice", "--cwd", work, "--runtime", "claude", "--runtime", "opencode"], work, env)
  step("try it: city capability register", "npx", ["--no-install", "city", "capability", "register", join(work, "demo.json")], work, env)
  const list = step("try it: city capability list", "npx", ["--no-install", "city", "capability", "list"], work, env)
  if (!list.includes("demo") || !list.includes("ok")) {
    console.error(`pack-check: FAILED: city capability list printed\n${list}`)
    process.exit(1)
  }
  step("try it: city capability unregister", "npx", ["--no-install", "city", "capability", "unregister", "demo"], work, env)

  // The status page's assets, as the compiled module and the binary find them.
  const assets = { "/assets/status.css": "status.css", "/assets/status.js": "status.mjs" }
  const source = (file) => readFileSync(join(repo, "src", "services", "status", "assets", file), "utf8")
  const fail = (what) => {
    console.error(`pack-check: FAILED: ${what}`)
    process.exit(1)
  }
  writeFileSync(
    join(work, "assets.mjs"),
    [
      "import { Effect } from \"effect\"",
      "import * as NodeFileSystem from \"@effect/platform-node/NodeFileSystem\"",
      `const StatusPage = await import(${JSON.stringify(pathToFileURL(join(installed, "dist", "services", "status", "StatusPage.js")).href)})`,
      "const read = (asset) => Effect.runPromise(Effect.provide(StatusPage.read(asset), NodeFileSystem.layer))",
      "console.log(JSON.stringify({ css: (await read(StatusPage.stylesheet)).value, js: (await read(StatusPage.script)).value }))",
      ""
    ].join("\n")
  )
  const compiled = JSON.parse(step("status page: the compiled module reads its assets", "node", ["assets.mjs"]))
  if (compiled.css !== source("status.css") || compiled.js !== source("status.mjs")) fail("the compiled module's assets are not the source files")
  const t0 = Date.now()
  const daemon = spawn(join(work, "node_modules", ".bin", "city"), ["daemon", "--http", "127.0.0.1:0"], { cwd: work, env, stdio: ["ignore", "pipe", "pipe"] })
  let daemonOutput = ""
  daemon.stdout.on("data", (d) => (daemonOutput += d))
  daemon.stderr.on("data", (d) => (daemonOutput += d))
  const exited = new Promise((resolve) => daemon.once("exit", resolve))
  // A failure stops the daemon before it exits.
  let problem
  try {
    const published = join(env.CITY_ROOT, "state", "status-page.json")
    while (!existsSync(published)) {
      if (Date.now() - t0 > 60_000 || daemon.exitCode !== null) throw new Error(`city daemon --http published no address\n${daemonOutput}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const { url } = JSON.parse(readFileSync(published, "utf8"))
    const page = await (await fetch(url)).text()
    if (!page.includes("<script type=\"module\" src=\"/assets/status.js\"></script>")) throw new Error(`the daemon's page does not load its script\n${page}`)
    for (const [path, file] of Object.entries(assets)) {
      const response = await fetch(new URL(path, url))
      if (response.status !== 200 || (await response.text()) !== source(file)) throw new Error(`the daemon serves ${path} as ${response.status}, not the source file`)
    }
  } catch (error) {
    problem = error.message
  } finally {
    daemon.kill("SIGTERM")
    await exited
  }
  if (problem !== undefined) fail(problem)
  console.log(`pack-check: status page: city daemon serves the page, its stylesheet and its script (${((Date.now() - t0) / 1000).toFixed(1)} s)`)

  // Third-party plugins, outside any node_modules tree, through a project install and a global one.
  const pluginRoot = mkdtempSync(join(tmpdir(), "city-pack-plugins-"))
  try {
    const plugin = (name, entry) => {
      mkdirSync(join(pluginRoot, "plugins", name), { recursive: true })
      const manifest = { name, version: "1.0.0", apiVersion: "1", description: "", entry: "index.mjs" }
      writeFileSync(join(pluginRoot, "plugins", name, "city-plugin.json"), JSON.stringify(manifest))
      writeFileSync(join(pluginRoot, "plugins", name, "index.mjs"), entry)
    }
    plugin("notes", [
      "import { Effect } from \"effect\"",
      "import { Plugin } from \"effect-city/plugin\"",
      "export default Plugin.make({ name: \"notes\", initialize: Effect.succeed({}) })",
      ""
    ].join("\n"))
    plugin("hello", "export async function register(ctx) { ctx.registerSystem(\"hello\") }\n")
    // `notes` runs in a worker thread of its own, as an instance-root plugin does by default
    // (docs/plugin-loader.md, "Isolation"): the shipped dist/city-worker.mjs, with the installed
    // effect and dist/city-plugin.mjs in that thread; `hello` is trusted on the host's thread.
    writeFileSync(
      join(pluginRoot, "plugins.json"),
      JSON.stringify({ enabled: ["hello", "notes"], licensed: ["hello", "notes"], isolation: { hello: "none" } })
    )
    const pluginEnv = { ...process.env, CITY_ROOT: pluginRoot }
    const expectLoaded = (what, printed) => {
      const loaded = JSON.parse(printed).loaded.map((p) =>
        `${p.name}:${p.status}:${p.isolation}${p.heap_used_bytes === null ? "" : p.heap_used_bytes > 0 ? ":heap" : ":no-heap"}`
      )
      if (loaded.join(" ") !== "hello:ready:none notes:ready:worker:heap") {
        console.error(`pack-check: FAILED: ${what} loaded ${loaded.join(" ") || "nothing"}\n${printed}`)
        process.exit(1)
      }
    }
    expectLoaded("the project install", step("plugins: city plugins list (project install)", "npx", ["--no-install", "city", "plugins", "list", "--json"], work, pluginEnv))
    const global = join(work, "global")
    step("npm install -g (tarball + peers, temporary prefix)", "npm", [
      "install", "-g", "--prefix", global, tarball, ...peers.map(pinned), ...npmFlags
    ])
    expectLoaded("the global install", step("plugins: city plugins list (global install)", join(global, "bin", "city"), ["plugins", "list", "--json"], tmpdir(), pluginEnv))
  } finally {
    rmSync(pluginRoot, { recursive: true, force: true })
  }
  console.log(`pack-check: ok in ${((Date.now() - started) / 1000).toFixed(1)} s`)
} finally {
  rmSync(work, { recursive: true, force: true })
}
