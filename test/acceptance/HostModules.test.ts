/**
 * Host-provided modules (docs/plugin-loader.md, "Host-provided modules"; docs/design.md,
 * "Third-party plugins"): a folder plugin outside any `node_modules` tree imports `effect`,
 * `@effect/platform` and `effect-city/plugin` and gets the host's copies, through the CLI, the
 * daemon and the library; a plugin's own copy of `effect` is not used, and the load report says so.
 *
 * Every host here is a real process: Node's module hooks act on Node's own loader, which the test
 * runner's module graph does not go through.
 */
import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import { execFile, execFileSync } from "node:child_process"
import * as fs from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { cityProcess, json, tempDir } from "./cityCli.ts"
import { startPluginDaemon, writeSettings } from "../support/pluginDaemon.ts"

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../..")

const live = (name: string, body: () => Effect.Effect<void, unknown, any>) =>
  it.scopedLive(name, () => body().pipe(Effect.provide(NodeContext.layer)), 120_000)

/** The URL Node gives `specifier` imported from the checkout's root: the host's own copy. */
const hostUrl = (specifier: string) =>
  execFileSync(process.execPath, ["--input-type=module", "-e", `process.stdout.write(import.meta.resolve(${JSON.stringify(specifier)}))`], {
    cwd: repo,
    encoding: "utf8"
  })

const manifest = (name: string) =>
  JSON.stringify({ name, version: "1.0.0", apiVersion: "1", description: `${name}, written by someone else`, entry: "index.mjs" })

/**
 * An Effect-style plugin that imports every provided package and writes where each came from to
 * `report`; it also leaves its `effect/Effect` namespace on `globalThis.__cityPluginEffects`.
 */
const effectStyle = (name: string, report: string) =>
  [
    `import * as Effect from "effect/Effect"`,
    `import { Schema } from "effect"`,
    `import * as FileSystem from "@effect/platform/FileSystem"`,
    `import { Plugin } from "effect-city/plugin"`,
    `import { writeFileSync } from "node:fs"`,
    `const effects = (globalThis.__cityPluginEffects ??= {})`,
    `effects[${JSON.stringify(name)}] = Effect`,
    `writeFileSync(${JSON.stringify(report)}, JSON.stringify({`,
    `  effect: import.meta.resolve("effect/Effect"),`,
    `  index: import.meta.resolve("effect"),`,
    `  platform: import.meta.resolve("@effect/platform/FileSystem"),`,
    `  plugin: import.meta.resolve("effect-city/plugin"),`,
    `  decoded: Schema.decodeUnknownSync(Schema.NumberFromString)("42"),`,
    `  tag: FileSystem.FileSystem.key`,
    `}))`,
    `export default Plugin.make({ name: ${JSON.stringify(name)}, initialize: Effect.succeed({ system: () => Effect.succeed("${name} here") }) })`,
    ``
  ].join("\n")

/** A Promise-style plugin with no imports at all. */
const promiseStyle = `export async function register(ctx) {\n  ctx.registerSystem("promise-style here")\n}\n`

/**
 * A state root with three plugins written by "someone else": `notes` (Effect style), `promisey`
 * (Promise style) and `owncopy` (Effect style, shipping a `node_modules/effect` that throws when
 * imported). Each writes its report into `reports/`.
 */
const thirdPartyRoot = Effect.gen(function*() {
  const base = yield* tempDir
  // The premise: nothing above the folders could give them `effect` the usual way.
  for (let dir = base; dir !== dirname(dir); dir = dirname(dir)) {
    expect(fs.existsSync(join(dir, "node_modules", "effect")), `${dir}/node_modules/effect`).toBe(false)
  }
  const root = join(base, "root")
  const reports = join(base, "reports")
  fs.mkdirSync(reports, { recursive: true })
  const plugin = (name: string, entry: string) => {
    const folder = join(root, "plugins", name)
    fs.mkdirSync(folder, { recursive: true })
    fs.writeFileSync(join(folder, "city-plugin.json"), manifest(name))
    fs.writeFileSync(join(folder, "index.mjs"), entry)
    return folder
  }
  plugin("notes", effectStyle("notes", join(reports, "notes.json")))
  plugin("promisey", promiseStyle)
  const own = join(plugin("owncopy", effectStyle("owncopy", join(reports, "owncopy.json"))), "node_modules", "effect")
  fs.mkdirSync(own, { recursive: true })
  fs.writeFileSync(
    join(own, "package.json"),
    JSON.stringify({ name: "effect", version: "2.0.0-own", type: "module", exports: { ".": "./index.js", "./*": "./index.js" } })
  )
  fs.writeFileSync(join(own, "index.js"), `throw new Error("the plugin's own copy of effect was imported")\n`)
  writeSettings(root, { enabled: ["notes", "owncopy", "promisey"], licensed: ["notes", "owncopy", "promisey"] })
  return { base, root, report: (name: string) => JSON.parse(fs.readFileSync(join(reports, `${name}.json`), "utf8")) }
})

const ownCopyWarning = "ships node_modules/effect 2.0.0-own, which is not used: the plugin gets the host's effect (one copy in the process)"

describe("host-provided modules", () => {
  live("the CLI loads an Effect-style and a Promise-style plugin from outside any node_modules tree, with the installed package's modules", () =>
    Effect.gen(function*() {
      const { report, root } = yield* thirdPartyRoot
      const run = yield* cityProcess(["plugins", "list", "--json"], { root })
      expect(run.code, run.stderr).toBe(0)
      const listed = json(run)
      const loaded = listed["loaded"] as ReadonlyArray<{ name: string; status: string; warnings: ReadonlyArray<string> }>
      expect(loaded.map((p) => [p.name, p.status])).toEqual([["notes", "ready"], ["owncopy", "ready"], ["promisey", "ready"]])
      expect(listed["skipped"]).toEqual([])
      expect(loaded.find((p) => p.name === "owncopy")?.warnings).toEqual([ownCopyWarning])
      expect(loaded.find((p) => p.name === "notes")?.warnings).toEqual([])
      for (const name of ["notes", "owncopy"]) {
        expect(report(name)).toEqual({
          effect: hostUrl("effect/Effect"),
          index: hostUrl("effect"),
          platform: hostUrl("@effect/platform/FileSystem"),
          plugin: pathToFileURL(join(repo, "dist", "city-plugin.mjs")).href,
          decoded: 42,
          tag: "@effect/platform/FileSystem"
        })
      }
    }))

  live("the daemon hosts them the same way", () =>
    Effect.gen(function*() {
      const { base, report, root } = yield* thirdPartyRoot
      yield* startPluginDaemon(root, base, "host-modules")
      const run = yield* cityProcess(["plugins", "list", "--json"], { root })
      expect(run.code, run.stderr).toBe(0)
      const listed = json(run)
      expect(listed["source"]).toBe("daemon")
      const loaded = listed["loaded"] as ReadonlyArray<{ name: string; status: string; warnings: ReadonlyArray<string> }>
      expect(loaded.map((p) => [p.name, p.status])).toEqual([["notes", "ready"], ["owncopy", "ready"], ["promisey", "ready"]])
      expect(loaded.find((p) => p.name === "owncopy")?.warnings).toEqual([ownCopyWarning])
      expect(report("notes").effect).toBe(hostUrl("effect/Effect"))
    }))

  live("a library host gives plugins its own Effect: the very module it runs", () =>
    Effect.gen(function*() {
      const { report, root } = yield* thirdPartyRoot
      const out = yield* Effect.async<{ code: number; stdout: string; stderr: string }>((resume) => {
        execFile(
          process.execPath,
          ["--import", "tsx", join(repo, "test", "fixtures", "libraryHost.ts"), root],
          { cwd: repo, encoding: "utf8" },
          (error, stdout, stderr) => resume(Effect.succeed({ code: error === null ? 0 : 1, stdout, stderr }))
        )
      })
      expect(out.code, out.stderr).toBe(0)
      const result = JSON.parse(out.stdout.trim().split("\n").at(-1) ?? "{}")
      expect(result).toEqual({
        loaded: [
          { name: "notes", warnings: [] },
          { name: "owncopy", warnings: [ownCopyWarning] },
          { name: "promisey", warnings: [] }
        ],
        skipped: [],
        sameEffect: { notes: true, owncopy: true }
      })
      expect(report("notes").plugin).toBe(pathToFileURL(join(repo, "src", "plugin.ts")).href)
      expect(report("notes").effect).toBe(hostUrl("effect/Effect"))
    }))
})
