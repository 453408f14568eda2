/**
 * Acceptance: spec/plugin-loader-lifecycle.md as issue 9 states it, with real plugin folders
 * written into temp roots (real ESM `.mjs` entries). One test per behaviour.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as fs from "node:fs"
import * as path from "node:path"
import { provideNode } from "../fixtures.ts"
import {
  effectEntry,
  makeRoots,
  manifest,
  marker,
  registerEntry,
  runs,
  startLoader,
  unique,
  withLogs,
  writePlugin
} from "../loaderFixtures.ts"

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
        const { generations, registry } = yield* startLoader(root, { enabled: ["alpha", "beta"], licensed: ["alpha", "beta"] })
        const report = yield* generations.current
        expect(report.loaded.map((p) => [p.name, p.version, p.root])).toEqual([
          ["alpha", "1.0.0", "instance"],
          ["beta", "2.0.0", "instance"]
        ])
        expect(report.skipped).toEqual([])
        const snapshots = yield* registry.snapshots
        expect(snapshots.map((s) => [s.name, s.status, s.version, s.source])).toEqual([
          ["alpha", "ready", "1.0.0", `instance:${path.join(instance, "alpha")}`],
          ["beta", "ready", "2.0.0", `instance:${path.join(instance, "beta")}`]
        ])
        expect(runs().filter((r) => r.startsWith(key))).toEqual([`${key}:alpha`, `${key}:beta`])
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
        const { generations, registry, sessions, workspaces } = yield* startLoader(root, {
          enabled: ["half", "whole"],
          licensed: ["half", "whole"]
        })
        const report = yield* generations.current
        expect(report.loaded.map((p) => p.name)).toEqual(["whole"])
        expect(report.skipped.map((s) => [s.name, s.kind])).toEqual([["half", "RegistrationFailed"]])
        expect(report.skipped[0]?.reason).toContain("register gave up halfway")
        expect(runs().filter((r) => r.startsWith(key))).toEqual([`${key}:half`, `${key}:released`, `${key}:whole`])
        expect(registry.views.view.names).toEqual(["whole"])
        const agent = yield* sessions.agents.add({ id: "ada" })
        const workspace = yield* workspaces.add({ id: "w", path: root })
        const session = yield* agent.sessions.create({ workspace })
        const seen = yield* session.turn((turn) =>
          Effect.gen(function*() {
            const system = yield* turn.step((view) => view.system())
            const hooked = yield* turn.step((view) => view.runHooks("message", "hi"))
            const action = yield* Effect.either(turn.step((view) => view.invoke("half", "go", undefined)))
            return { system, hooked, skills: turn.skills, action: action._tag === "Left" ? action.left._tag : "Right" }
          })
        )
        expect(seen).toEqual({
          system: [{ name: "whole", content: "whole system" }],
          hooked: "hi",
          skills: [],
          action: "PluginNotReady"
        })
      })
    )))
})

// Keep the imports used by tests added below.
void Deferred
void Fiber
void fs
