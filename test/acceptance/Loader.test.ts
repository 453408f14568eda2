/**
 * Acceptance: docs/plugin-loader-lifecycle.md as issue 9 states it, with real plugin folders
 * written into temp roots (real ESM `.mjs` entries). One test per behaviour.
 */
import { describe, expect, it } from "@effect/vitest"
import * as LoaderExample from "../../examples/loader.ts"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import * as Scope from "effect/Scope"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { ModuleImporter } from "../../src/services/entry/ModuleImporter.ts"
import * as Plugin from "../../src/services/Plugin.ts"
import { blocked, eventually, provideNode } from "../fixtures.ts"
import { city, cityProcess, json } from "./cityCli.ts"
import {
  effectEntry,
  makeRoots,
  manifest,
  marker,
  record,
  registerEntry,
  runs,
  startLoader,
  unique,
  withLogs,
  writePlugin
} from "../loaderFixtures.ts"

/**
 * Waits until the restart worker logged that it pauses Turns; it closes the Turn gate in the same
 * run of its fiber (no asynchronous step in between), so a Turn started after this waits.
 */
const pausing = (logs: ReadonlyArray<{ message: string }>) =>
  Effect.zipRight(
    eventually(Effect.sync(() => logs.some((l) => l.message.startsWith("plugin restart: pausing Turns")))),
    Effect.forEach(Array.from({ length: 10 }), () => Effect.yieldNow(), { discard: true })
  )

const skipLines = (logs: ReadonlyArray<{ message: string; annotations: Record<string, unknown> }>) =>
  logs.filter((l) => l.annotations["code"] === "plugin.load_failed").map((l) => l.message)

describe("Plugin loader", () => {
  it.scoped("loads an Effect-style plugin and a register(ctx) plugin, each with its root and folder as source", () =>
    provideNode(withLogs(() =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        const key = unique("basic")
        writePlugin(instance, "alpha", { manifest: manifest("alpha"), files: { "index.mjs": effectEntry(`${key}:alpha`, "alpha") } })
        writePlugin(instance, "beta", {
          manifest: manifest("beta", { version: "2.0.0" }),
          files: { "index.mjs": registerEntry(`${key}:beta`, "ctx.registerSystem('beta speaks')") }
        })
        writePlugin(instance, "gamma", {
          manifest: manifest("gamma"),
          files: { "index.mjs": effectEntry(`${key}:gamma`, "gamma").replace("export default Plugin.make", "export const plugin = Plugin.make") }
        })
        const names = ["alpha", "beta", "gamma"]
        const { generations, registry } = yield* startLoader(root, { enabled: names, licensed: names })
        const report = yield* generations.current
        expect(report.loaded.map((p) => [p.name, p.version, p.root])).toEqual([
          ["alpha", "1.0.0", "instance"],
          ["beta", "2.0.0", "instance"],
          ["gamma", "1.0.0", "instance"]
        ])
        expect(report.skipped).toEqual([])
        const snapshots = yield* registry.snapshots
        expect(snapshots.map((s) => [s.name, s.status, s.version, s.source])).toEqual([
          ["alpha", "ready", "1.0.0", `instance:${path.join(instance, "alpha")}`],
          ["beta", "ready", "2.0.0", `instance:${path.join(instance, "beta")}`],
          ["gamma", "ready", "1.0.0", `instance:${path.join(instance, "gamma")}`]
        ])
        expect(runs().filter((r) => r.startsWith(key))).toEqual([`${key}:alpha`, `${key}:beta`, `${key}:gamma`])
      })
    )))

  it.scoped("imports each entry through a provided ModuleImporter, with the cache-busting URL", () =>
    provideNode(withLogs(() =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        const key = unique("importer")
        writePlugin(instance, "alpha", { manifest: manifest("alpha"), files: { "index.mjs": effectEntry(`${key}:alpha`, "alpha") } })
        const imported: Array<string> = []
        const importer = { import: (url: string): Promise<unknown> => (imported.push(url), import(url)) }
        const { generations } = yield* startLoader(root, { enabled: ["alpha"], licensed: ["alpha"] }).pipe(
          Effect.provideService(ModuleImporter, importer)
        )
        expect((yield* generations.current).loaded.map((p) => p.name)).toEqual(["alpha"])
        expect(imported).toHaveLength(1)
        expect(imported[0]).toMatch(/^file:\/\/.*\/alpha\/index\.mjs\?v=1\.0\.0&mtime=\d+$/)
        expect(runs().filter((r) => r.startsWith(key))).toEqual([`${key}:alpha`])
      })
    )))

  it.scoped("processes folders in code-unit name order whatever the order they were created in", () =>
    provideNode(withLogs(() =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        const key = unique("order")
        // Created in reverse and mixed case: code units put "B" before "a", and "a" before "a-b".
        for (const name of ["c", "a-b", "a", "B"]) {
          writePlugin(instance, name, { manifest: manifest(name), files: { "index.mjs": registerEntry(`${key}:${name}`) } })
        }
        const names = ["a", "a-b", "B", "c"]
        const { generations } = yield* startLoader(root, { enabled: names, licensed: names })
        const report = yield* generations.current
        expect(report.loaded.map((p) => p.name)).toEqual(["B", "a", "a-b", "c"])
        expect(runs().filter((r) => r.startsWith(key))).toEqual(["B", "a", "a-b", "c"].map((n) => `${key}:${n}`))
      })
    )))

  it.scoped("a bundled copy that fails is logged and the instance copy of the same name loads", () =>
    provideNode(withLogs((logs) =>
      Effect.gen(function*() {
        const { bundled, instance, root } = yield* makeRoots
        const key = unique("fallback")
        writePlugin(bundled, "notes", {
          manifest: manifest("notes"),
          files: { "index.mjs": `${marker(`${key}:bundled`)}throw new Error("bundled copy is broken")\n` }
        })
        writePlugin(instance, "notes", { manifest: manifest("notes", { version: "1.1.0" }), files: { "index.mjs": registerEntry(`${key}:instance`) } })
        const { generations, loader, registry } = yield* startLoader(root, {
          bundledRoot: bundled,
          enabled: ["notes"],
          licensed: ["notes"]
        })
        const report = yield* generations.current
        expect(report.loaded.map((p) => [p.name, p.root, p.version])).toEqual([["notes", "instance", "1.1.0"]])
        expect(report.skipped.map((s) => [s.name, s.root, s.kind])).toEqual([["notes", "bundled", "EntryImportFailed"]])
        expect(skipLines(logs)).toEqual([
          `plugin skipped: notes: import of ${path.join(bundled, "notes", "index.mjs")} failed: bundled copy is broken`
        ])
        expect((yield* registry.get("notes")).pipe((o) => o._tag === "Some" && o.value.source)).toBe(`instance:${path.join(instance, "notes")}`)
        // The alert was raised for the bundled copy and cleared once the name loaded.
        expect(yield* loader.alerts).toEqual([])
      })
    )))

  it.scoped("a bundled copy whose register throws leaves nothing, and the instance copy of the same name loads", () =>
    provideNode(withLogs(() =>
      Effect.gen(function*() {
        const { bundled, instance, root } = yield* makeRoots
        writePlugin(bundled, "notes", {
          manifest: manifest("notes"),
          files: { "index.mjs": `export function register(ctx) { ctx.registerSystem("bundled"); throw new Error("bundled register fails") }\n` }
        })
        writePlugin(instance, "notes", {
          manifest: manifest("notes", { version: "1.1.0" }),
          files: { "index.mjs": registerEntry(unique("notes"), `ctx.registerSystem("instance")`) }
        })
        const { generations, loader, registry } = yield* startLoader(root, { bundledRoot: bundled, enabled: ["notes"], licensed: ["notes"] })
        const report = yield* generations.current
        expect(report.skipped.map((s) => [s.root, s.kind])).toEqual([["bundled", "RegistrationFailed"]])
        expect(report.loaded.map((p) => [p.root, p.version])).toEqual([["instance", "1.1.0"]])
        const snapshot = yield* registry.get("notes")
        expect(snapshot._tag === "Some" && [snapshot.value.status, snapshot.value.source]).toEqual(["ready", `instance:${path.join(instance, "notes")}`])
        expect(yield* loader.alerts).toEqual([])
      })
    )))

  it.scoped("a manifest-less bundled folder is not a plugin: nothing is logged for it and the instance copy loads", () =>
    provideNode(withLogs((logs) =>
      Effect.gen(function*() {
        const { bundled, instance, root } = yield* makeRoots
        const key = unique("manifestless")
        writePlugin(bundled, "notes", { manifest: null, files: { "index.mjs": registerEntry(`${key}:bundled`), "README.md": "not a plugin" } })
        writePlugin(instance, "notes", { manifest: manifest("notes"), files: { "index.mjs": registerEntry(`${key}:instance`) } })
        const { generations } = yield* startLoader(root, { bundledRoot: bundled, enabled: ["notes"], licensed: ["notes"] })
        const report = yield* generations.current
        expect(report.loaded.map((p) => [p.name, p.root])).toEqual([["notes", "instance"]])
        expect(report.skipped).toEqual([])
        expect(logs.filter((l) => l.message.includes(path.join(bundled, "notes")) || JSON.stringify(l.annotations).includes(bundled))).toEqual([])
        expect(runs().filter((r) => r.startsWith(key))).toEqual([`${key}:instance`])
      })
    )))

  it.scoped("refuses an unlicensed instance plugin before its entry runs; a bundled plugin is never gated", () =>
    provideNode(withLogs((logs) =>
      Effect.gen(function*() {
        const { bundled, instance, root } = yield* makeRoots
        const key = unique("licence")
        writePlugin(instance, "premium", { manifest: manifest("premium"), files: { "index.mjs": registerEntry(`${key}:premium`) } })
        writePlugin(bundled, "core", { manifest: manifest("core"), files: { "index.mjs": registerEntry(`${key}:core`) } })
        const { generations, registry } = yield* startLoader(root, {
          bundledRoot: bundled,
          enabled: ["premium", "core"],
          licensed: []
        })
        const report = yield* generations.current
        expect(report.loaded.map((p) => p.name)).toEqual(["core"])
        expect(report.skipped.map((s) => [s.name, s.reason])).toEqual([["premium", "not included in this licence"]])
        expect(skipLines(logs)).toEqual(["plugin skipped: premium: not included in this licence"])
        // The side effect of its top-level code did not happen: the entry was never imported.
        expect(runs().filter((r) => r.startsWith(key))).toEqual([`${key}:core`])
        expect((yield* registry.get("premium"))._tag).toBe("None")
      })
    )))

  it.scoped("reports the enabled names no root provides once, at the end, sorted", () =>
    provideNode(withLogs((logs) =>
      Effect.gen(function*() {
        const { bundled, instance, root } = yield* makeRoots
        writePlugin(instance, "present", { manifest: manifest("present"), files: { "index.mjs": registerEntry(unique("present")) } })
        writePlugin(instance, "zeta", { manifest: null, files: {} })
        const { generations } = yield* startLoader(root, {
          bundledRoot: bundled,
          enabled: ["zeta", "present", "Alpha", "beta"],
          licensed: ["present"]
        })
        const report = yield* generations.current
        expect(report.missing).toEqual(["Alpha", "beta", "zeta"])
        const missing = logs.filter((l) => l.annotations["code"] === "plugin.enabled_missing")
        expect(missing.map((l) => l.message)).toEqual(["plugins enabled but provided by no root: Alpha, beta, zeta"])
        expect(missing[0]).toBe(logs[logs.length - 1])
      })
    )))

  it.scoped("discover parses manifests only and never runs plugin code", () =>
    provideNode(withLogs(() =>
      Effect.gen(function*() {
        const { bundled, instance, root } = yield* makeRoots
        const key = unique("discover")
        writePlugin(bundled, "one", { manifest: manifest("one"), files: { "index.mjs": registerEntry(`${key}:one`) } })
        writePlugin(instance, "two", { manifest: manifest("two"), files: { "index.mjs": registerEntry(`${key}:two`) } })
        writePlugin(instance, "bad", { manifest: "{ not json", files: {} })
        const { loader } = yield* startLoader(root, { bundledRoot: bundled, enabled: [], licensed: [] })
        const found = yield* loader.discover
        expect(found.map((d) => [d.name, d.root, d._tag])).toEqual([
          ["one", "bundled", "Valid"],
          ["bad", "instance", "Invalid"],
          ["two", "instance", "Valid"]
        ])
        const again = yield* loader.discover
        expect(again).toEqual(found)
        expect(runs().filter((r) => r.startsWith(key))).toEqual([])
      })
    )))

  it.scoped("a register that throws halfway leaves no action, hook, system or skill, and releases what it acquired", () =>
    provideNode(withLogs(() =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        const key = unique("halfway")
        writePlugin(instance, "half", {
          manifest: manifest("half"),
          files: {
            "index.mjs": registerEntry(
              `${key}:half`,
              [
                `ctx.registerAction("go", { handler: () => "went" })`,
                `ctx.registerHook("message", (v) => v)`,
                `ctx.registerSystem("half system")`,
                `ctx.registerSkills([{ name: "half-skill" }])`,
                `ctx.onDispose(() => { globalThis.__cityLoaderRuns.push(${JSON.stringify(`${key}:released`)}) })`,
                `await Promise.resolve()`,
                `throw new Error("register gave up halfway")`
              ].join("\n")
            )
          }
        })
        writePlugin(instance, "whole", { manifest: manifest("whole"), files: { "index.mjs": registerEntry(`${key}:whole`, `ctx.registerSystem("whole system")`) } })
        const { generations, views, sessions, workspaces } = yield* startLoader(root, {
          enabled: ["half", "whole"],
          licensed: ["half", "whole"]
        })
        const report = yield* generations.current
        expect(report.loaded.map((p) => p.name)).toEqual(["whole"])
        expect(report.skipped.map((s) => [s.name, s.kind])).toEqual([["half", "RegistrationFailed"]])
        expect(report.skipped[0]?.reason).toContain("register gave up halfway")
        expect(runs().filter((r) => r.startsWith(key))).toEqual([`${key}:half`, `${key}:released`, `${key}:whole`])
        expect(views.current().names).toEqual(["whole"])
        const agent = yield* sessions.agents.add({ id: "ada" })
        const workspace = yield* workspaces.add({ id: "w", path: root })
        const session = yield* agent.sessions.create({ workspace })
        const seen = yield* session.turn((turn) =>
          Effect.gen(function*() {
            const system = yield* turn.step((view) => view.system())
            const hooked = yield* turn.step((view) => view.runHooks("message", "hi"))
            const action = yield* Effect.either(turn.step((view) => view.invoke("half", "go", undefined)))
            return { system, hooked, skills: turn.skills, action: action._tag === "Left" ? `${action.left._tag}/${action.left.name}` : "Right" }
          })
        )
        expect(seen).toEqual({
          system: [{ name: "whole", content: "whole system" }],
          hooked: "hi",
          skills: [],
          action: "ActionRejected/PluginNotReady"
        })
      })
    )))

  it.scoped("an Effect-style plugin whose initialize fails contributes nothing and releases what it acquired", () =>
    provideNode(withLogs(() =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        const key = unique("effect-fail")
        writePlugin(instance, "failing", {
          manifest: manifest("failing"),
          files: {
            "index.mjs": effectEntry(
              `${key}:top`,
              "failing",
              `yield* Effect.acquireRelease(Effect.void, () => Effect.sync(() => globalThis.__cityLoaderRuns.push(${JSON.stringify(`${key}:released`)})))
               return yield* Effect.fail("database unreachable")`
            )
          }
        })
        const { generations, views } = yield* startLoader(root, { enabled: ["failing"], licensed: ["failing"] })
        const report = yield* generations.current
        expect(report.skipped.map((s) => [s.name, s.kind, s.reason])).toEqual([
          ["failing", "RegistrationFailed", "registration failed: Error: database unreachable"]
        ])
        expect(views.current().names).toEqual([])
        expect(runs().filter((r) => r.startsWith(key))).toEqual([`${key}:top`, `${key}:released`])
      })
    )))

  it.scoped("each bad input is one skip with a precise reason, and the rest load", () =>
    provideNode(withLogs((logs) =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        const key = unique("bad")
        const outside = path.join(root, "outside")
        fs.mkdirSync(outside, { recursive: true })
        fs.writeFileSync(path.join(outside, "index.mjs"), registerEntry(`${key}:outside`))
        const ok = (name: string) => registerEntry(`${key}:${name}`)
        const at = (folder: string, file = "index.mjs") => path.join(instance, folder, file)
        writePlugin(instance, "a-bad-json", { manifest: "{ \"name\": ", files: { "index.mjs": ok("a-bad-json") } })
        writePlugin(instance, "b-not-object", { manifest: "[1, 2]", files: { "index.mjs": ok("b-not-object") } })
        writePlugin(instance, "c-mismatch", { manifest: manifest("other-name"), files: { "index.mjs": ok("c-mismatch") } })
        writePlugin(instance, "d-api", { manifest: manifest("d-api", { apiVersion: "2" }), files: { "index.mjs": ok("d-api") } })
        writePlugin(instance, "e-absolute", { manifest: manifest("e-absolute", { entry: path.join(outside, "index.mjs") }) })
        writePlugin(instance, "f-escape", { manifest: manifest("f-escape", { entry: "../../outside/index.mjs" }) })
        writePlugin(instance, "g-missing", { manifest: manifest("g-missing", { entry: "dist/index.mjs" }) })
        writePlugin(instance, "h-exports", { manifest: manifest("h-exports"), files: { "index.mjs": "export const version = 1\nexport function setup() {}\n" } })
        writePlugin(instance, "i-throws", { manifest: manifest("i-throws"), files: { "index.mjs": "throw new Error('top-level boom')\n" } })
        writePlugin(instance, "j-register-throws", { manifest: manifest("j-register-throws"), files: { "index.mjs": "export function register(ctx) { throw new Error('sync boom') }\n" } })
        writePlugin(instance, "k-register-rejects", { manifest: manifest("k-register-rejects"), files: { "index.mjs": "export async function register(ctx) { await null; throw new Error('async boom') }\n" } })
        writePlugin(instance, "l-directory", { manifest: manifest("l-directory", { entry: "lib" }), files: { "lib/index.mjs": ok("l-directory") } })
        writePlugin(instance, "m-two-errors", { manifest: { ...manifest("m-two-errors", { version: "" }), description: 5 } })
        writePlugin(instance, "p-plugin-name", { manifest: manifest("p-plugin-name"), files: { "index.mjs": effectEntry(`${key}:p`, "another-name") } })
        writePlugin(instance, "z-good", { manifest: manifest("z-good"), files: { "index.mjs": ok("z-good") } })
        // Lexical check only (the spec's): a symlinked entry, or an entry under a symlinked folder,
        // that points outside the plugin folder passes the containment check and loads.
        writePlugin(instance, "n-symlink-file", { manifest: manifest("n-symlink-file") })
        fs.symlinkSync(path.join(outside, "index.mjs"), at("n-symlink-file"))
        writePlugin(instance, "o-symlink-folder", { manifest: manifest("o-symlink-folder", { entry: "lib/index.mjs" }) })
        fs.symlinkSync(outside, at("o-symlink-folder", "lib"))
        const names = fs.readdirSync(instance)
        const { generations } = yield* startLoader(root, { enabled: names, licensed: names })
        const report = yield* generations.current
        const manifestOf = (folder: string) => path.join(instance, folder, "city-plugin.json")
        expect(report.skipped.map((s) => [s.name, s.kind, s.reason])).toEqual([
          ["a-bad-json", "ManifestInvalid", expect.stringMatching(new RegExp(`^${manifestOf("a-bad-json")}: not valid JSON \\(`))],
          ["b-not-object", "ManifestInvalid", `${manifestOf("b-not-object")}: must be a JSON object, got an array`],
          ["c-mismatch", "ManifestInvalid", `${manifestOf("c-mismatch")}: name: must equal the folder name "c-mismatch", got "other-name"`],
          ["d-api", "ManifestInvalid", `${manifestOf("d-api")}: apiVersion: unsupported plugin API version \"2\": this loader supports \"1\"`],
          ["e-absolute", "ManifestInvalid", `${manifestOf("e-absolute")}: entry: must be relative to the plugin folder, got the absolute path ${JSON.stringify(path.join(outside, "index.mjs"))}`],
          ["f-escape", "ManifestInvalid", `${manifestOf("f-escape")}: entry: must stay inside the plugin folder, got "../../outside/index.mjs"`],
          ["g-missing", "EntryNotFound", `entry: ${at("g-missing", "dist/index.mjs")} does not exist`],
          ["h-exports", "EntryShapeInvalid", `${at("h-exports")}: exports neither a Plugin (default or \`plugin\` export, made with Plugin.make) nor a \`register(ctx)\` function; found exports setup, version`],
          ["i-throws", "EntryImportFailed", `import of ${at("i-throws")} failed: top-level boom`],
          ["j-register-throws", "RegistrationFailed", "registration failed: PluginCallbackFailed: Plugin j-register-throws: register threw: sync boom"],
          ["k-register-rejects", "RegistrationFailed", "registration failed: PluginCallbackFailed: Plugin k-register-rejects: register threw: async boom"],
          ["l-directory", "EntryNotFound", `entry: ${at("l-directory", "lib")} is a directory, not a file`],
          // Both faults at once, a line each naming the file.
          ["m-two-errors", "ManifestInvalid", `${manifestOf("m-two-errors")}: version: must be a non-empty string\n${manifestOf("m-two-errors")}: description: Expected string, actual 5`],
          ["p-plugin-name", "EntryShapeInvalid", `${at("p-plugin-name")}: exports a Plugin named "another-name"; the manifest names "p-plugin-name"`]
        ])
        expect(report.loaded.map((p) => p.name)).toEqual(["n-symlink-file", "o-symlink-folder", "z-good"])
        // A log line per line of a reason: m-two-errors logs its two faults.
        expect(skipLines(logs)).toEqual(report.skipped.flatMap((s) => s.reason.split("\n").map((line) => `plugin skipped: ${s.name}: ${line}`)))
        // Only entries that were imported ran: the loadable ones, and the Plugin whose name is
        // wrong (known only once imported; it contributed nothing). Both symlinks lead to one real
        // file with one mtime, and an ES module is keyed by its real path and query: it ran once.
        expect(runs().filter((r) => r.startsWith(key))).toEqual([`${key}:outside`, `${key}:p`, `${key}:z-good`])
      })
    )))

  it.scoped("keeps the current load failures as an alert naming root and folder, cleared when the name loads", () =>
    provideNode(withLogs(() =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        writePlugin(instance, "flaky", { manifest: manifest("flaky", { apiVersion: "9" }), files: { "index.mjs": registerEntry(unique("flaky")) } })
        const { generations, loader } = yield* startLoader(root, { enabled: ["flaky"], licensed: ["flaky"] })
        const alerts = yield* loader.alerts
        expect(alerts.map((a) => [a.name, a.status, a.source, a.attempts])).toEqual([
          ["flaky", "error", `instance:${path.join(instance, "flaky")}`, 1]
        ])
        expect(alerts[0]?.last_error).toContain("apiVersion: unsupported plugin API version \"9\": this loader supports \"1\"")
        writePlugin(instance, "flaky", { manifest: manifest("flaky") })
        const report = yield* generations.restart("fixed the manifest")
        expect(report.loaded.map((p) => p.name)).toEqual(["flaky"])
        expect(yield* loader.alerts).toEqual([])
      })
    )))

  it.scoped("prompt/*.md files become system content in name order, before the plugin's own text", () =>
    provideNode(withLogs(() =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        writePlugin(instance, "guide", {
          manifest: manifest("guide"),
          files: {
            "index.mjs": registerEntry(unique("guide"), `ctx.registerSystem(() => "own text")`),
            "prompt/b.md": "second\n",
            "prompt/a.md": "first\n",
            "prompt/notes.txt": "ignored",
            "icon.svg": "<svg/>",
            "i18n/cs.json": "{}"
          }
        })
        writePlugin(instance, "huge", {
          manifest: manifest("huge"),
          files: { "index.mjs": registerEntry(unique("huge")), "prompt/big.md": "x".repeat(64 * 1024 + 1) }
        })
        const { generations, sessions, workspaces } = yield* startLoader(root, { enabled: ["guide", "huge"], licensed: ["guide", "huge"] })
        const report = yield* generations.current
        expect(report.skipped.map((s) => s.reason)).toEqual([
          `${path.join(instance, "huge", "prompt", "big.md")}: is 65537 bytes, over the 65536-byte cap for a prompt file`
        ])
        const agent = yield* sessions.agents.add({ id: "ada" })
        const session = yield* agent.sessions.create({ workspace: yield* workspaces.add({ id: "w", path: root }) })
        const system = yield* session.turn((turn) => turn.step((view) => view.system()))
        expect(system).toEqual([{ name: "guide", content: "first\n\nsecond\n\nown text" }])
      })
    )))

  it.scoped("a plugin reaches a sibling through its context, resolved at the time of use (both entry styles)", () =>
    provideNode(withLogs(() =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        writePlugin(instance, "caller", {
          manifest: manifest("caller"),
          files: {
            "index.mjs": registerEntry(
              unique("caller"),
              `ctx.registerAction("ask", { handler: async (input, call) => "caller got " + await call.invoke("callee", "answer", input) })`
            )
          }
        })
        writePlugin(instance, "asker", {
          manifest: manifest("asker"),
          files: {
            "index.mjs": [
              `import * as Effect from "effect/Effect"`,
              `import * as Schema from "effect/Schema"`,
              `import { Contributions, Plugin, Siblings } from "effect-city/plugin"`,
              `export default Plugin.make({ name: "asker", initialize: Effect.gen(function*() {`,
              `  const siblings = yield* Siblings.Siblings // stable; each invoke resolves at the time of use`,
              `  return { actions: { ask: Contributions.action({ input: Schema.String, handler: (q) =>`,
              `    Effect.map(siblings.invoke("callee", "answer", q), (a) => "asker got " + a) }) } }`,
              `}) })`,
              ``
            ].join("\n")
          }
        })
        const callee = (answer: string) =>
          registerEntry(unique("callee"), `ctx.registerAction("answer", { handler: (q) => ${JSON.stringify(answer)} + ":" + q })`)
        writePlugin(instance, "callee", { manifest: manifest("callee"), files: { "index.mjs": callee("v1") } })
        const names = ["asker", "caller", "callee"]
        const { generations, sessions, workspaces } = yield* startLoader(root, { enabled: names, licensed: names })
        const agent = yield* sessions.agents.add({ id: "ada" })
        const session = yield* agent.sessions.create({ workspace: yield* workspaces.add({ id: "w", path: root }) })
        const ask = session.turn((turn) => turn.step((view) => view.invoke("caller", "ask", "q")))
        const askEffect = session.turn((turn) => turn.step((view) => view.invoke("asker", "ask", "q")))
        expect(yield* ask).toBe("caller got v1:q")
        expect(yield* askEffect).toBe("asker got v1:q")
        writePlugin(instance, "callee", { manifest: manifest("callee", { version: "2.0.0" }), files: { "index.mjs": callee("v2") } })
        yield* generations.restart("callee updated")
        expect(yield* ask).toBe("caller got v2:q")
        expect(yield* askEffect).toBe("asker got v2:q")
      })
    )))

  it.scoped("a skills reload is seen by the next Turn, not by the running one, and replaces only the caller's own set", () =>
    provideNode(withLogs(() =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        writePlugin(instance, "skilled", {
          manifest: manifest("skilled", { skills: [{ name: "from-manifest" }] }),
          files: {
            "index.mjs": registerEntry(
              unique("skilled"),
              `ctx.registerAction("learn", { handler: async (skills) => { await ctx.requestReload({ mode: "reload", skills }); return "learned" } })
               ctx.registerAction("garble", { handler: async () => { try { await ctx.requestReload({ mode: "reload", skills: [{}] }) } catch (e) { return e._tag + ": " + e.message } } })`
            )
          }
        })
        writePlugin(instance, "other", {
          manifest: manifest("other"),
          files: { "index.mjs": registerEntry(unique("other"), `ctx.registerSkills([{ name: "other-skill" }])`) }
        })
        const { sessions, workspaces } = yield* startLoader(root, { enabled: ["skilled", "other"], licensed: ["skilled", "other"] })
        const agent = yield* sessions.agents.add({ id: "ada" })
        const session = yield* agent.sessions.create({ workspace: yield* workspaces.add({ id: "w", path: root }) })
        const running = yield* session.turn((turn) =>
          Effect.gen(function*() {
            const before = turn.skills
            yield* turn.step((view) => view.invoke("skilled", "learn", [{ name: "new-a" }, { name: "new-b", body: "..." }]))
            const garbled = yield* turn.step((view) => view.invoke("skilled", "garble", undefined))
            return { before, after: turn.skills, garbled }
          })
        )
        const initial = [{ plugin: "other", skills: [{ name: "other-skill" }] }, { plugin: "skilled", skills: [{ name: "from-manifest" }] }]
        expect(running.before).toEqual(initial)
        expect(running.after).toEqual(initial)
        expect(running.garbled).toMatch(/^ReloadRejected: Plugin skilled asked for a reload, not applied: invalid change/)
        const next = yield* session.turn((turn) => Effect.succeed(turn.skills))
        expect(next).toEqual([
          { plugin: "other", skills: [{ name: "other-skill" }] },
          { plugin: "skilled", skills: [{ name: "new-a" }, { name: "new-b", body: "..." }] }
        ])
      })
    )))
})

describe("Restart by generation", () => {
  /** A register(ctx) entry whose top-level code and dispose are recorded, answering `version`. */
  const versioned = (key: string, version: string) =>
    registerEntry(
      `${key}:top:${version}`,
      `ctx.registerAction("version", { handler: () => ${JSON.stringify(version)} })
       ctx.onDispose(() => { globalThis.__cityLoaderRuns.push(${JSON.stringify(`${key}:dispose:${version}`)}) })`
    )
  /** Rewrites a plugin in place: new version, new code, an mtime later than before. */
  const update = (folder: string, key: string, version: string) => {
    writePlugin(path.dirname(folder), path.basename(folder), {
      manifest: manifest(path.basename(folder), { version }),
      files: { "index.mjs": versioned(key, version) }
    })
    const later = new Date(fs.statSync(path.join(folder, "index.mjs")).mtimeMs + 5_000)
    fs.utimesSync(path.join(folder, "index.mjs"), later, later)
  }

  it.scoped("an in-place update re-runs the module's top-level code on restart; the old generation is disposed first", () =>
    provideNode(withLogs(() =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        const key = unique("inplace")
        const folder = writePlugin(instance, "worker", { manifest: manifest("worker"), files: { "index.mjs": versioned(key, "v1") } })
        const { generations, registry, sessions, workspaces } = yield* startLoader(root, { enabled: ["worker"], licensed: ["worker"] })
        const agent = yield* sessions.agents.add({ id: "ada" })
        const session = yield* agent.sessions.create({ workspace: yield* workspaces.add({ id: "w", path: root }) })
        const ask = session.turn((turn) => turn.step((view) => view.invoke("worker", "version", undefined)))
        expect(yield* ask).toBe("v1")
        update(folder, key, "v2")
        const report = yield* generations.restart("updated on disk")
        expect(report.generation).toBe(2)
        expect(report.loaded.map((p) => [p.name, p.version])).toEqual([["worker", "v2"]])
        expect(runs().filter((r) => r.startsWith(key))).toEqual([`${key}:top:v1`, `${key}:dispose:v1`, `${key}:top:v2`])
        // The same Session goes on, now served by the new generation.
        expect(yield* ask).toBe("v2")
        expect((yield* registry.get("worker")).pipe((o) => o._tag === "Some" && o.value.version)).toBe("v2")
      })
    )))

  it.scoped("a new generation in which a plugin fails is served, with that plugin skipped and nothing of it left", () =>
    provideNode(withLogs(() =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        const key = unique("partial")
        writePlugin(instance, "steady", { manifest: manifest("steady"), files: { "index.mjs": versioned(key, "steady") } })
        const folder = writePlugin(instance, "fragile", { manifest: manifest("fragile"), files: { "index.mjs": versioned(key, "fragile") } })
        const { generations, views } = yield* startLoader(root, { enabled: ["steady", "fragile"], licensed: ["steady", "fragile"] })
        fs.writeFileSync(path.join(folder, "index.mjs"), `export function register(ctx) { ctx.registerAction("x", { handler: () => 1 }); throw new Error("broken by the update") }\n`)
        fs.utimesSync(path.join(folder, "index.mjs"), new Date(Date.now() + 10_000), new Date(Date.now() + 10_000))
        const report = yield* generations.restart("fragile updated")
        expect(report.loaded.map((p) => p.name)).toEqual(["steady"])
        expect(report.skipped.map((s) => [s.name, s.kind])).toEqual([["fragile", "RegistrationFailed"]])
        expect(views.current().names).toEqual(["steady"])
        // Disposed in reverse load order; steady's unchanged entry is the same module (same URL),
        // registered anew; fragile's new code registered nothing that reached the City.
        expect(runs().filter((r) => r.startsWith(key))).toEqual([
          `${key}:top:fragile`,
          `${key}:top:steady`,
          `${key}:dispose:steady`,
          `${key}:dispose:fragile`
        ])
      })
    )))

  it.scoped("a restart waits for a running Turn, holds new Turns, disposes the old plugins, and the Session survives with the new code", () =>
    provideNode(withLogs((logs) =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        const key = unique("waits")
        const slow = (version: string) =>
          registerEntry(
            `${key}:top:${version}`,
            `ctx.registerAction("version", { handler: () => ${JSON.stringify(version)} })
             ctx.registerAction("slow", { handler: async () => { globalThis[${JSON.stringify(key)}].entered(); await globalThis[${JSON.stringify(key)}].gate; return ${JSON.stringify(version)} } })
             ctx.onDispose(() => { globalThis.__cityLoaderRuns.push(${JSON.stringify(`${key}:dispose:${version}`)}) })`
          )
        const folder = writePlugin(instance, "worker", { manifest: manifest("worker"), files: { "index.mjs": slow("v1") } })
        let release = () => {}
        let entered = () => {}
        const enteredOnce = new Promise<void>((resolve) => (entered = resolve))
        Reflect.set(globalThis, key, { entered, gate: new Promise<void>((resolve) => (release = resolve)) })
        const { generations, sessions, workspaces } = yield* startLoader(root, { enabled: ["worker"], licensed: ["worker"] })
        const agent = yield* sessions.agents.add({ id: "ada" })
        const workspace = yield* workspaces.add({ id: "w", path: root })
        const busy = yield* agent.sessions.create({ workspace })
        const other = yield* agent.sessions.create({ workspace })

        const running = yield* Effect.fork(busy.turn((turn) => turn.step((view) => view.invoke("worker", "slow", undefined))))
        yield* Effect.promise(() => enteredOnce)
        writePlugin(instance, "worker", { manifest: manifest("worker", { version: "2.0.0" }), files: { "index.mjs": slow("v2") } })
        fs.utimesSync(path.join(folder, "index.mjs"), new Date(Date.now() + 10_000), new Date(Date.now() + 10_000))
        const restart = yield* Effect.fork(generations.restart("worker updated"))
        yield* pausing(logs)
        // A new Turn waits at its boundary; the restart waits for the running Turn.
        const waiting = yield* Effect.fork(other.turn((turn) =>
          Effect.zipRight(
            Effect.sync(() => record(`${key}:turn`)),
            turn.step((view) => view.invoke("worker", "version", undefined))
          )
        ))
        yield* blocked(restart, waiting)
        expect(restart.unsafePoll()).toBe(null)
        expect(waiting.unsafePoll()).toBe(null)
        expect(runs().filter((r) => r.startsWith(key))).toEqual([`${key}:top:v1`])

        release()
        expect(yield* Fiber.join(running)).toBe("v1")
        const report = yield* Fiber.join(restart)
        expect(report.loaded.map((p) => [p.name, p.version])).toEqual([["worker", "2.0.0"]])
        expect(yield* Fiber.join(waiting)).toBe("v2")
        expect(runs().filter((r) => r.startsWith(key))).toEqual([
          `${key}:top:v1`,
          `${key}:dispose:v1`,
          `${key}:top:v2`,
          `${key}:turn`
        ])
        // The Session that was running survives and is served by the new generation.
        expect(yield* busy.status).toBe("idle")
        expect(yield* busy.turn((turn) => turn.step((view) => view.invoke("worker", "version", undefined)))).toBe("v2")
      })
    )))

  it.scoped("a Turn still running after drainTimeout is interrupted so the restart goes on", () =>
    provideNode(withLogs((logs) =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        const key = unique("stuck")
        writePlugin(instance, "stuck", {
          manifest: manifest("stuck"),
          files: {
            "index.mjs": registerEntry(
              key,
              `ctx.registerAction("hang", { handler: () => { globalThis[${JSON.stringify(key)}](); return new Promise(() => {}) } })`
            )
          }
        })
        let entered = () => {}
        const enteredOnce = new Promise<void>((resolve) => (entered = resolve))
        Reflect.set(globalThis, key, entered)
        const { generations, sessions, workspaces } = yield* startLoader(
          root,
          { enabled: ["stuck"], licensed: ["stuck"] },
          { drainTimeout: "1 second" }
        )
        const agent = yield* sessions.agents.add({ id: "ada" })
        const session = yield* agent.sessions.create({ workspace: yield* workspaces.add({ id: "w", path: root }) })
        const hanging = yield* Effect.fork(session.turn((turn) => turn.step((view) => view.invoke("stuck", "hang", undefined))))
        yield* Effect.promise(() => enteredOnce)
        const restart = yield* Effect.fork(generations.restart("must go on"))
        yield* pausing(logs)
        yield* TestClock.adjust("1 second")
        const report = yield* Fiber.join(restart)
        expect(report.generation).toBe(2)
        const exit = yield* Fiber.await(hanging)
        expect(Exit.isInterrupted(exit)).toBe(true)
        expect(yield* session.status).toBe("idle")
      })
    )))

  it.scoped("a restart disposes the old generation in reverse load order, collects dispose failures, and goes on", () =>
    provideNode(withLogs((logs) =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        const key = unique("disposefail")
        const disposing = (name: string, fails: boolean) =>
          registerEntry(
            `${key}:top:${name}`,
            `ctx.onDispose(() => { globalThis.__cityLoaderRuns.push(${JSON.stringify(`${key}:dispose:${name}`)}); ${fails ? `throw new Error("${name} cannot let go")` : ""} })`
          )
        for (const [name, fails] of [["a", false], ["b", true], ["c", false]] as const) {
          writePlugin(instance, name, { manifest: manifest(name), files: { "index.mjs": disposing(name, fails) } })
        }
        const { generations, views } = yield* startLoader(root, { enabled: ["a", "b", "c"], licensed: ["a", "b", "c"] })
        const report = yield* generations.restart("all of them")
        expect(runs().filter((r) => r.startsWith(`${key}:dispose`))).toEqual([`${key}:dispose:c`, `${key}:dispose:b`, `${key}:dispose:a`])
        expect(report.disposeFailures?.map((f) => f.name)).toEqual(["b"])
        expect(report.disposeFailures?.[0]?.reason).toContain("b cannot let go")
        expect(report.loaded.map((p) => p.name)).toEqual(["a", "b", "c"])
        expect(views.current().names).toEqual(["a", "b", "c"])
        expect(logs.filter((l) => l.annotations["code"] === "plugin.dispose_failed")).toHaveLength(1)
      })
    )))

  it.scoped("plugins added by code are not part of a generation: they survive a restart, and a folder of the same name is skipped", () =>
    provideNode(withLogs(() =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        const { generations, registry } = yield* startLoader(root, { enabled: ["manual"], licensed: ["manual"] })
        expect((yield* generations.current).missing).toEqual(["manual"])
        yield* registry.add(Plugin.make({ name: "manual", version: "9.9.9", initialize: Effect.succeed({}) }))
        writePlugin(instance, "manual", { manifest: manifest("manual"), files: { "index.mjs": registerEntry(unique("manual")) } })
        const report = yield* generations.restart("a folder appeared")
        expect(report.loaded).toEqual([])
        expect(report.skipped.map((s) => [s.name, s.kind, s.reason])).toEqual([
          ["manual", "PluginAlreadyRegistered", "Plugin already exists in City: manual"]
        ])
        const snapshot = yield* registry.get("manual")
        expect(snapshot._tag === "Some" && [snapshot.value.status, snapshot.value.source, snapshot.value.version]).toEqual(["ready", "code", "9.9.9"])
      })
    )))

  it.scoped("concurrent restart requests coalesce into one new generation", () =>
    provideNode(withLogs((logs) =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        const key = unique("coalesce")
        const folder = writePlugin(instance, "worker", { manifest: manifest("worker"), files: { "index.mjs": versioned(key, "v1") } })
        const { generations } = yield* startLoader(root, { enabled: ["worker"], licensed: ["worker"] })
        update(folder, key, "v2")
        const reports = yield* Effect.all(
          [generations.restart("one", "a"), generations.restart("two", "b"), generations.restart("three", "c")],
          { concurrency: "unbounded" }
        )
        expect(reports.map((r) => r.generation)).toEqual([2, 2, 2])
        expect((yield* generations.current).generation).toBe(2)
        expect(runs().filter((r) => r.startsWith(key))).toEqual([`${key}:top:v1`, `${key}:dispose:v1`, `${key}:top:v2`])
        expect(logs.filter((l) => l.message.startsWith("plugin generation")).map((l) => l.message)).toEqual([
          "plugin generation 2 ready: 1 loaded, 0 skipped (a: one; b: two; c: three)"
        ])
      })
    )))

  it.scoped("a restart requested from inside a call returns once queued and applies after that Turn or call", () =>
    provideNode(withLogs(() =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        const key = unique("inturn")
        writePlugin(instance, "settings", {
          manifest: manifest("settings"),
          files: {
            "index.mjs": registerEntry(
              `${key}:top`,
              `ctx.registerAction("save", { handler: async () => { await ctx.requestReload({ mode: "restart", reason: "settings changed" }); return "saved and restart queued" } })`
            )
          }
        })
        const { calls, generations, sessions, workspaces } = yield* startLoader(root, { enabled: ["settings"], licensed: ["settings"] })
        const agent = yield* sessions.agents.add({ id: "ada" })
        const session = yield* agent.sessions.create({ workspace: yield* workspaces.add({ id: "w", path: root }) })
        const saved = yield* session.turn((turn) => turn.step((view) => view.invoke("settings", "save", undefined)))
        expect(saved).toBe("saved and restart queued")
        yield* eventually(Effect.map(generations.current, (r) => r.generation === 2))
        expect(yield* session.status).toBe("idle")
        // The same from a call outside any Session (it holds a lease on the plugin it calls).
        const outside = yield* calls({ agent: { id: "ada" }, workspace: { id: "w", path: root } }).invoke("settings", "save", undefined)
        expect(outside).toBe("saved and restart queued")
        yield* eventually(Effect.map(generations.current, (r) => r.generation === 3))
      })
    )))

  it.scoped("a restart whose new generation cannot be built fails with ReloadRejected and the old generation keeps serving", () =>
    provideNode(withLogs(() =>
      Effect.gen(function*() {
        const { bundled, instance, root } = yield* makeRoots
        const key = unique("unbuildable")
        writePlugin(instance, "keeper", { manifest: manifest("keeper"), files: { "index.mjs": versioned(key, "keeper") } })
        const { generations, views } = yield* startLoader(root, { bundledRoot: bundled, enabled: ["keeper"], licensed: ["keeper"] })
        // The bundled root is no longer a directory: it cannot be listed.
        fs.rmSync(bundled, { recursive: true })
        fs.writeFileSync(bundled, "not a directory")
        const error = yield* Effect.flip(generations.restart("try", "keeper"))
        expect(error._tag).toBe("ReloadRejected")
        expect(error.message).toMatch(new RegExp(`^Plugin keeper asked for a restart, not applied: the new generation cannot be built: plugin root ${bundled} cannot be read: `))
        expect(views.current().names).toEqual(["keeper"])
        expect((yield* generations.current).generation).toBe(1)
        expect(runs().filter((r) => r.startsWith(key))).toEqual([`${key}:top:keeper`])
      })
    )))

  it.scoped("a restart is refused with ReloadRejected once the City is closing; a plugin sees the rejection", () =>
    provideNode(withLogs(() =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        const key = unique("closing")
        writePlugin(instance, "late", {
          manifest: manifest("late"),
          files: { "index.mjs": registerEntry(key, `globalThis[${JSON.stringify(key)}] = ctx`) }
        })
        const scope = yield* Scope.make()
        const { generations } = yield* startLoader(root, { enabled: ["late"], licensed: ["late"] }).pipe(Scope.extend(scope))
        yield* Scope.close(scope, Exit.void)
        const error = yield* Effect.flip(generations.restart("too late"))
        expect(error.message).toBe("Plugin host asked for a restart, not applied: the City is closing")
        const ctx: unknown = Reflect.get(globalThis, key)
        const rejection = yield* Effect.promise(() =>
          (ctx as { requestReload: (c: unknown) => Promise<void> }).requestReload({ mode: "restart", reason: "settings changed" })
            .then(() => "applied", (e: unknown) => (e instanceof Error ? `${e.name}: ${e.message}` : String(e)))
        )
        expect(rejection).toBe("ReloadRejected: Plugin late asked for a restart, not applied: the City is closing")
      })
    )))
})

describe("examples/plugins", () => {
  it.scoped("the example folders load from two roots: an Effect-style and a register(ctx) plugin, one skip with its reason", () =>
    provideNode(withLogs((logs) =>
      Effect.gen(function*() {
        const { root } = yield* makeRoots
        const examples = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../examples/plugins")
        const { generations } = yield* startLoader(root, {
          bundledRoot: path.join(examples, "bundled"),
          instanceRoot: path.join(examples, "instance"),
          enabled: ["clock", "greeter", "broken"],
          licensed: ["greeter", "broken"]
        })
        const report = yield* generations.current
        expect(report.loaded.map((p) => [p.name, p.root])).toEqual([["clock", "bundled"], ["greeter", "instance"]])
        expect(report.skipped.map((s) => [s.name, s.reason])).toEqual([
          ["broken", "registration failed: PluginCallbackFailed: Plugin broken: register threw: the weather service is unreachable"]
        ])
        expect(skipLines(logs)).toHaveLength(1)
      })
    )))
})

describe("discovery from code", () => {
  it.scoped("the loader snippet's `folders` lists every plugin folder of both roots through the public Loader.PluginLoader, from manifests alone", () =>
    provideNode(Effect.gen(function*() {
      const { root } = yield* makeRoots
      const examples = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../examples/plugins")
      fs.cpSync(path.join(examples, "instance"), path.join(root, "plugins"), { recursive: true })
      const found = yield* Effect.provide(LoaderExample.folders, LoaderExample.services(root, path.join(examples, "bundled")))
      expect(found.map((p) => [p.name, p.root, p._tag])).toEqual([["clock", "bundled", "Valid"], ["broken", "instance", "Valid"], ["greeter", "instance", "Valid"]])
    })))

  it.live("the loader snippet runs as a user runs it: its Layer needs nothing more than NodeContext gives", () =>
    Effect.gen(function*() {
      const root = fs.mkdtempSync(path.join(os.tmpdir(), "city-loader-example-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(root, { recursive: true, force: true })))
      const examples = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../examples/plugins")
      fs.cpSync(path.join(examples, "instance"), path.join(root, "plugins"), { recursive: true })
      const report = yield* Effect.promise(() => LoaderExample.main(root, path.join(examples, "bundled")))
      expect(report.loaded.map((p) => p.name).sort()).toEqual(["clock", "greeter"])
    }).pipe(Effect.scoped))
})

describe("city plugins", () => {
  const fileMarker = (file: string) => `import { appendFileSync } from "node:fs"\nappendFileSync(${JSON.stringify(file)}, "ran\\n")\n`

  it.live("discover lists both roots' folders from their manifests and runs no plugin code; list loads them", () =>
    provideNode(Effect.scoped(Effect.gen(function*() {
      const { bundled, instance, root } = yield* makeRoots
      const ran = path.join(root, "ran.log")
      writePlugin(bundled, "base", { manifest: manifest("base"), files: { "index.mjs": `${fileMarker(ran)}export function register(ctx) {}\n` } })
      writePlugin(instance, "extra", { manifest: manifest("extra", { version: "3.1.0" }), files: { "index.mjs": `${fileMarker(ran)}export function register(ctx) {}\n` } })
      writePlugin(instance, "wrong", { manifest: manifest("wrong", { apiVersion: "7" }) })
      fs.writeFileSync(path.join(root, "plugins.json"), JSON.stringify({ bundledRoot: bundled, enabled: ["base", "extra", "wrong", "gone"], licensed: ["extra", "wrong"] }))

      const discovered = yield* city(["plugins", "discover", "--json"], { root })
      expect(discovered.code).toBe(0)
      expect(json(discovered)["plugins"]).toEqual([
        expect.objectContaining({ name: "base", root: "bundled", version: "1.0.0", status: "valid", enabled: true }),
        expect.objectContaining({ name: "extra", root: "instance", version: "3.1.0", status: "valid", enabled: true }),
        expect.objectContaining({
          name: "wrong",
          root: "instance",
          status: "invalid",
          reason: `${path.join(instance, "wrong", "city-plugin.json")}: apiVersion: unsupported plugin API version \"7\": this loader supports \"1\"`
        })
      ])
      expect(fs.existsSync(ran)).toBe(false)

      const listed = yield* city(["plugins", "list", "--json"], { root })
      expect(listed.code).toBe(0)
      const out = json(listed)
      expect(out["loaded"]).toEqual([
        { name: "base", version: "1.0.0", root: "bundled", folder: path.join(bundled, "base"), status: "ready", isolation: "none", heap_used_bytes: null, dropped: [], warnings: [], config_unset: [] },
        // An instance-root plugin runs in a worker by default (docs/plugin-loader.md, "Isolation").
        { name: "extra", version: "3.1.0", root: "instance", folder: path.join(instance, "extra"), status: "ready", isolation: "worker", heap_used_bytes: expect.any(Number), dropped: [], warnings: [], config_unset: [] }
      ])
      expect(out["skipped"]).toEqual([expect.objectContaining({ name: "wrong", root: "instance", kind: "ManifestInvalid" })])
      expect(out["missing"]).toEqual(["gone"])
      expect(fs.readFileSync(ran, "utf8")).toBe("ran\nran\n")

      // The real binary: the table, and each skip as a warning on stderr.
      const table = yield* cityProcess(["plugins", "list", "--bundled", bundled], { root })
      expect(table.code).toBe(0)
      expect(table.stderr).toContain("city: warning: plugin skipped: wrong: ")
      expect(table.stdout).toMatch(/NAME\s+ROOT\s+VERSION\s+STATUS\s+ISOLATION\s+HEAP\s+FOLDER\nbase\s+bundled\s+1\.0\.0\s+ready\s+none/)
      expect(table.stdout).toMatch(/SKIPPED\s+ROOT\s+REASON\nwrong\s+instance\s+.*apiVersion: unsupported plugin API version/)
      expect(table.stdout).toContain("enabled but provided by no root: gone")
    }))))

  it.live("a throwaway City prints its plugins' warnings and errors on stderr, on the host's thread and from a worker, and not their info lines", () =>
    provideNode(Effect.scoped(Effect.gen(function*() {
      const { bundled, instance, root } = yield* makeRoots
      const talk = (name: string) =>
        `export function register(ctx) { ctx.log.info("${name}: info"); ctx.log.warn("${name}: careful"); ctx.log.error("${name}: broke") }\n`
      writePlugin(bundled, "near", { manifest: manifest("near"), files: { "index.mjs": talk("near") } })
      writePlugin(instance, "far", { manifest: manifest("far"), files: { "index.mjs": talk("far") } })
      fs.writeFileSync(path.join(root, "plugins.json"), JSON.stringify({ bundledRoot: bundled, licensed: ["far"] }))
      const listed = yield* cityProcess(["plugins", "list"], { root })
      expect(listed.code).toBe(0)
      const said = listed.stderr.split("\n").filter((line) => /: (info|careful|broke)$/.test(line)).sort()
      expect(said).toEqual(["city: error: far: broke", "city: error: near: broke", "city: warning: far: careful", "city: warning: near: careful"])
    }))))

  it.live("discover shows each folder's licence: an enabled instance plugin outside the licence set is not licensed, with list's reason; the bundled root is not gated", () =>
    provideNode(Effect.scoped(Effect.gen(function*() {
      const { bundled, instance, root } = yield* makeRoots
      writePlugin(bundled, "base", { manifest: manifest("base"), files: { "index.mjs": "export function register(ctx) {}\n" } })
      writePlugin(instance, "extra", { manifest: manifest("extra"), files: { "index.mjs": "export function register(ctx) {}\n" } })
      writePlugin(instance, "stray", { manifest: manifest("stray", { version: "2.0.0" }), files: { "index.mjs": "export function register(ctx) {}\n" } })
      fs.writeFileSync(path.join(root, "plugins.json"), JSON.stringify({ bundledRoot: bundled, enabled: ["base", "extra", "stray"], licensed: ["extra"] }))

      const discovered = yield* city(["plugins", "discover", "--json"], { root })
      expect(discovered.code).toBe(0)
      expect(json(discovered)["plugins"]).toEqual([
        expect.objectContaining({ name: "base", root: "bundled", status: "valid", enabled: true, licensed: null, reason: null }),
        expect.objectContaining({ name: "extra", root: "instance", status: "valid", enabled: true, licensed: true, reason: null }),
        expect.objectContaining({ name: "stray", root: "instance", status: "valid", enabled: true, licensed: false, reason: "not included in this licence" })
      ])

      // What list then does with it: the same words.
      const listed = yield* city(["plugins", "list", "--json"], { root })
      expect(json(listed)["skipped"]).toEqual([
        expect.objectContaining({ name: "stray", root: "instance", kind: "NotLicensed", reason: "not included in this licence" })
      ])

      // The real binary's table (an empty cell prints as `-`).
      const table = yield* cityProcess(["plugins", "discover"], { root })
      expect(table.code).toBe(0)
      expect(table.stdout).toMatch(/NAME\s+ROOT\s+VERSION\s+MANIFEST\s+ENABLED\s+LICENSED\s+REASON\n/)
      expect(table.stdout).toMatch(/\nbase\s+bundled\s+1\.0\.0\s+valid\s+yes\s+not gated\s+-\n/)
      expect(table.stdout).toMatch(/\nextra\s+instance\s+1\.0\.0\s+valid\s+yes\s+yes\s+-\n/)
      expect(table.stdout).toMatch(/\nstray\s+instance\s+2\.0\.0\s+valid\s+yes\s+no\s+unlicensed: not included in this licence\s*(\n|$)/)
    }))))
})
