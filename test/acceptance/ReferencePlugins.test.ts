/**
 * Plugin folders as the reference loader's authors write them (docs/plugin-loader-lifecycle.md;
 * docs/plugin-loader.md): eleven manifests in the shape of real reference plugins load once renamed
 * to `city-plugin.json`, number fields the reference does not check (a default off its step) with
 * a warning of the load report; what `provides` does not cover is dropped with a warning naming the
 * plugin, the kind and the name; settings reach the plugin as `ctx.config` in both entry styles;
 * absent web files warn and never skip; and files that fight back (a FIFO, a link to /dev/zero, a
 * 50 MB manifest, a BOM, invalid UTF-8, a directory where a file should be) are skips with one-line
 * reasons while the other folders load.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { provideNode } from "../fixtures.ts"
import { referenceManifests } from "../fixtures/referencePlugins.ts"
import { city, cityProcess, json } from "./cityCli.ts"
import { effectEntry, makeRoots, manifest, registerEntry, startLoader, unique, withLogs, writePlugin } from "../loaderFixtures.ts"

const entryOf = (text: string): string => {
  const parsed: unknown = JSON.parse(text.replace(/^\uFEFF/, ""))
  const entry = typeof parsed === "object" && parsed !== null ? Reflect.get(parsed, "entry") : undefined
  return typeof entry === "string" ? entry : "index.mjs"
}

/** A register(ctx) entry registering these tools (as actions) and skills. */
const registering = (key: string, tools: ReadonlyArray<string>, skills: ReadonlyArray<string>) =>
  registerEntry(
    key,
    [
      ...tools.map((t) => `ctx.registerAction(${JSON.stringify(t)}, { handler: (input) => ${JSON.stringify(`${t} ran`)} })`),
      skills.length === 0 ? "" : `ctx.registerSkills(${JSON.stringify(skills.map((name) => ({ name })))})`
    ].join("\n")
  )

const warningsOf = (logs: ReadonlyArray<{ message: string; annotations: Record<string, unknown> }>, code: string) =>
  logs.filter((l) => l.annotations["code"] === code).map((l) => l.message)

describe("plugins in the reference's shape", () => {
  it.scoped("eleven reference-shaped manifests load, those with a default off its step warned; what provides does not cover is dropped with a warning, and the plugin keeps the rest", () =>
    provideNode(withLogs((logs) =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        for (const plugin of referenceManifests) {
          const folder = path.join(instance, plugin.folder)
          const entry = path.join(folder, entryOf(plugin.text))
          fs.mkdirSync(path.dirname(entry), { recursive: true })
          // The manifest byte for byte as written (BOMs, tabs, no final newline), and a `.js`
          // entry under dist/ with no package.json above it.
          fs.writeFileSync(path.join(folder, "city-plugin.json"), plugin.text)
          fs.writeFileSync(entry, registering(unique(plugin.folder), plugin.tools, plugin.skills))
        }
        const names = referenceManifests.map((p) => p.folder)
        const { generations, sessions, workspaces } = yield* startLoader(root, { enabled: names, licensed: names })
        const report = yield* generations.current
        expect(report.skipped).toEqual([])
        expect(report.loaded.map((p) => p.name)).toEqual([...names].sort())
        const dropped = report.loaded.flatMap((p) => p.dropped.map((d) => `${p.name}:${d.kind}:${d.name}:${d.key}`))
        expect(dropped).toEqual([
          "discord:action:DiscordVoiceJoin:tools",
          "github:action:GithubDeleteBranch:tools",
          "msteams:action:MicrosoftExcel:tools",
          "telegram:action:TgLegacyEcho:tools"
        ])
        expect(warningsOf(logs, "plugin.contribution_dropped")).toEqual([
          "plugin discord: action \"DiscordVoiceJoin\" dropped: not covered by provides.tools",
          "plugin github: action \"GithubDeleteBranch\" dropped: not covered by provides.tools",
          "plugin msteams: action \"MicrosoftExcel\" dropped: not covered by provides.tools",
          "plugin telegram: action \"TgLegacyEcho\" dropped: not covered by provides.tools"
        ])
        // The reference does not check a number's step: codebase loads, and the report says what is off.
        const offStep = [
          "configSchema[3].default: must align to step 50000 from 1000",
          "configSchema[8].default: must align to step 5 from 1",
          "configSchema[8].max: must be reachable from min 1 by step 5"
        ].map((w) => `${w} (loaded anyway: the reference does not check this)`)
        expect(report.loaded.find((p) => p.name === "codebase")?.warnings).toEqual(offStep)
        expect(warningsOf(logs, "plugin.load_warning").filter((w) => w.startsWith("plugin codebase: "))).toEqual(
          offStep.map((w) => `plugin codebase: ${w}`)
        )
        // Only codebase breaks such a rule.
        expect(report.loaded.flatMap((p) => p.warnings).filter((w) => w.includes("loaded anyway"))).toEqual(offStep)

        const agent = yield* sessions.agents.add({ id: "ada" })
        const session = yield* agent.sessions.create({ workspace: yield* workspaces.add({ id: "w", path: root }) })
        const call = (plugin: string, action: string) =>
          session.turn((turn) => turn.step((view) => Effect.either(view.invoke(plugin, action, {}))))
        // Covered by an exact name, by a prefix* pattern, and by a plugin without provides.tools.
        expect(yield* call("discord", "DiscordApi")).toMatchObject({ _tag: "Right", right: "DiscordApi ran" })
        expect(yield* call("mcp", "mcp__github__create_issue")).toMatchObject({ _tag: "Right" })
        expect(yield* call("onedrive", "OneDriveStatus")).toMatchObject({ _tag: "Right" })
        // Dropped: not callable.
        expect((yield* call("discord", "DiscordVoiceJoin"))._tag).toBe("Left")
      })
    )))

  it.scoped("a skill set outside provides.skills is cut to what it covers, at load and at a live reload", () =>
    provideNode(withLogs((logs) =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        const body = [
          `ctx.registerSkills([{ name: "notes-daily" }, { name: "stray" }])`,
          `ctx.registerAction("learn", { handler: (name) => ctx.requestReload({ mode: "reload", skills: [{ name: "notes-weekly" }, { name }] }).then(() => "ok") })`
        ].join("\n")
        writePlugin(instance, "notes", {
          manifest: manifest("notes", { provides: { tools: ["learn"], skills: ["notes-*"] } }),
          files: { "index.mjs": registerEntry(unique("notes"), body) }
        })
        const { generations, sessions, workspaces } = yield* startLoader(root, { enabled: ["notes"], licensed: ["notes"] })
        const report = yield* generations.current
        expect(report.loaded[0]?.dropped).toEqual([{ kind: "skill", name: "stray", key: "skills" }])
        const agent = yield* sessions.agents.add({ id: "ada" })
        const session = yield* agent.sessions.create({ workspace: yield* workspaces.add({ id: "w", path: root }) })
        const seen = () => session.turn((turn) => Effect.succeed(turn.skills.flatMap((p) => p.skills.map((s) => s.name))))
        expect(yield* seen()).toEqual(["notes-daily"])
        yield* session.turn((turn) => turn.step((view) => view.invoke("notes", "learn", "other")))
        expect(yield* seen()).toEqual(["notes-weekly"])
        expect(warningsOf(logs, "plugin.contribution_dropped")).toEqual([
          "plugin notes: skill \"stray\" dropped: not covered by provides.skills",
          "plugin notes: skill \"other\" dropped: not covered by provides.skills"
        ])
      })
    )))

  it.scoped("settings reach the plugin as ctx.config with the defaults applied, in both entry styles; unset required keys are reported, never a skip", () =>
    provideNode(withLogs(() =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        const configSchema = [
          { key: "basics", label: "Základní 🧭", type: "section" },
          { key: "token", label: "Token", type: "secret", required: true },
          { key: "limit", label: "Limit", type: "number", min: 1, max: 50, step: 1, default: 20 },
          { key: "mode", label: "Režim", type: "enum", options: [{ value: "fast", label: "Rychle ⚡️" }, { value: "slow", label: "Pomalu" }], default: "fast" },
          { key: "on", label: "On", type: "boolean", default: true },
          { key: "tags", label: "Štítky", type: "tokenList", default: ["a", "b"] }
        ]
        writePlugin(instance, "promised", {
          manifest: manifest("promised", { configSchema }),
          files: { "index.mjs": registerEntry(unique("promised"), `ctx.registerAction("config", { handler: () => ({ config: ctx.config, unset: ctx.configUnset }) })`) }
        })
        writePlugin(instance, "effected", {
          manifest: manifest("effected", { configSchema }),
          files: {
            "index.mjs": [
              `import { PluginLifecycleContext } from "effect-city/plugin"`,
              effectEntry(
                unique("effected"),
                "effected",
                `const life = yield* PluginLifecycleContext.PluginLifecycleContext; return { actions: { config: { input: (yield* Effect.promise(() => import("effect/Schema"))).Unknown, handler: () => Effect.succeed({ config: life.config, unset: life.configUnset }) } } }`
              )
            ].join("\n")
          }
        })
        writePlugin(instance, "wrong", {
          manifest: manifest("wrong", { configSchema }),
          files: { "index.mjs": registerEntry(unique("wrong")) }
        })
        const names = ["effected", "promised", "wrong"]
        const { generations, sessions, workspaces } = yield* startLoader(root, {
          enabled: names,
          licensed: names,
          config: {
            promised: { mode: "slow", extra: "kept" },
            effected: { token: "s3cret", limit: 7 },
            wrong: { limit: "seven" }
          }
        })
        const report = yield* generations.current
        expect(report.loaded.map((p) => [p.name, p.configUnset])).toEqual([["effected", []], ["promised", ["token"]]])
        expect(report.skipped.map((s) => [s.name, s.kind, s.reason])).toEqual([
          ["wrong", "PluginConfigInvalid", `${path.join(root, "plugins.json")}: config.wrong.limit: must be a finite number, got string`]
        ])
        const agent = yield* sessions.agents.add({ id: "ada" })
        const session = yield* agent.sessions.create({ workspace: yield* workspaces.add({ id: "w", path: root }) })
        const config = (plugin: string) => session.turn((turn) => turn.step((view) => view.invoke(plugin, "config", {})))
        expect(yield* config("promised")).toEqual({
          config: { mode: "slow", extra: "kept", limit: 20, on: true, tags: ["a", "b"] },
          unset: ["token"]
        })
        expect(yield* config("effected")).toEqual({
          config: { token: "s3cret", limit: 7, mode: "fast", on: true, tags: ["a", "b"] },
          unset: []
        })
        expect(report.loaded.find((p) => p.name === "promised")?.warnings).toEqual([
          "config key \"extra\" is declared by no field of configSchema (kept)"
        ])
      })
    )))

  it.scoped("absent web files, an absent icon and config fields of unknown types are warnings, never a skip; a web entry outside the folder is a skip", () =>
    provideNode(withLogs((logs) =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        writePlugin(instance, "ui", {
          manifest: manifest("ui", {
            icon: "icon.svg",
            web: { entry: "web/index.js", css: "web/index.css", requiresApiVersion: 1 },
            configSchema: [{ key: "palette", label: "Palette", type: "colorWheel" }, { key: "name", label: "Name", type: "string" }]
          }),
          files: { "index.mjs": registerEntry(unique("ui")), "web/index.js": "export {}\n" }
        })
        writePlugin(instance, "escape", {
          manifest: manifest("escape", { web: { entry: "../ui/web/index.js" } }),
          files: { "index.mjs": registerEntry(unique("escape")) }
        })
        const { generations } = yield* startLoader(root, { enabled: ["escape", "ui"], licensed: ["escape", "ui"] })
        const report = yield* generations.current
        expect(report.loaded.map((p) => [p.name, p.warnings])).toEqual([[
          "ui",
          [
            "configSchema: ignoring the field \"palette\": unknown type \"colorWheel\" (needs a newer core)",
            "icon: \"icon.svg\" does not exist",
            "web.css: \"web/index.css\" does not exist"
          ]
        ]])
        expect(warningsOf(logs, "plugin.load_warning")).toHaveLength(3)
        expect(report.skipped.map((s) => s.reason)).toEqual([
          `${path.join(instance, "escape", "city-plugin.json")}: web.entry: must stay inside the plugin folder, got "../ui/web/index.js"`
        ])
      })
    )))
})

describe("files that fight back", () => {
  it.scoped("a FIFO, a link to /dev/zero, a 50 MB manifest, invalid UTF-8 and a directory are skips with one-line reasons; a BOM and a symlinked folder load", () =>
    provideNode(withLogs((logs) =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        const file = (folder: string) => path.join(instance, folder, "city-plugin.json")
        const folder = (name: string) => {
          fs.mkdirSync(path.join(instance, name), { recursive: true })
          fs.writeFileSync(path.join(instance, name, "index.mjs"), registerEntry(unique(name)))
        }
        folder("a-fifo")
        execFileSync("mkfifo", [file("a-fifo")])
        folder("b-zero")
        fs.symlinkSync("/dev/zero", file("b-zero"))
        folder("c-huge")
        fs.writeFileSync(file("c-huge"), `{"name":"c-huge","description":"${"x".repeat(50 * 1024 * 1024)}"}`)
        folder("d-utf8")
        fs.writeFileSync(file("d-utf8"), Buffer.concat([Buffer.from(`{"name":"d-utf8","description":"`), Buffer.from([0xc3, 0x28]), Buffer.from(`"}`)]))
        folder("e-directory")
        fs.mkdirSync(file("e-directory"))
        folder("f-bom")
        fs.writeFileSync(file("f-bom"), `\uFEFF${JSON.stringify(manifest("f-bom"))}`)
        folder("g-prompt-fifo")
        fs.writeFileSync(file("g-prompt-fifo"), JSON.stringify(manifest("g-prompt-fifo")))
        fs.mkdirSync(path.join(instance, "g-prompt-fifo", "prompt"))
        execFileSync("mkfifo", [path.join(instance, "g-prompt-fifo", "prompt", "a.md")])
        const elsewhere = path.join(root, "elsewhere", "h-linked")
        fs.mkdirSync(elsewhere, { recursive: true })
        fs.writeFileSync(path.join(elsewhere, "city-plugin.json"), JSON.stringify(manifest("h-linked")))
        fs.writeFileSync(path.join(elsewhere, "index.mjs"), registerEntry(unique("h-linked")))
        fs.symlinkSync(elsewhere, path.join(instance, "h-linked"))
        folder("z-good")
        fs.writeFileSync(file("z-good"), JSON.stringify(manifest("z-good")))

        const names = fs.readdirSync(instance)
        const { generations } = yield* startLoader(root, { enabled: names, licensed: names })
        const report = yield* generations.current
        expect(report.loaded.map((p) => p.name)).toEqual(["f-bom", "h-linked", "z-good"])
        expect(report.skipped.map((s) => [s.name, s.reason])).toEqual([
          ["a-fifo", `${file("a-fifo")}: is a FIFO, not a regular file`],
          ["b-zero", `${file("b-zero")}: is a character device, not a regular file`],
          ["c-huge", `${file("c-huge")}: is ${fs.statSync(file("c-huge")).size} bytes, over the 1048576-byte cap for a plugin manifest`],
          ["d-utf8", `${file("d-utf8")}: is not valid UTF-8 (at byte 32)`],
          ["e-directory", `${file("e-directory")}: is a directory, not a regular file`],
          ["g-prompt-fifo", `${path.join(instance, "g-prompt-fifo", "prompt", "a.md")}: is a FIFO, not a regular file`]
        ])
        for (const line of logs.map((l) => l.message)) {
          expect(line.length).toBeLessThan(2000)
          expect(line).not.toContain("\n")
        }
      })
    )))

  it.live("the real `city` process: discover and list answer at once beside a FIFO and a 50 MB manifest, with short reasons", () =>
    provideNode(Effect.scoped(Effect.gen(function*() {
      const { instance, root } = yield* makeRoots
      const dir = (name: string) => {
        fs.mkdirSync(path.join(instance, name), { recursive: true })
        return path.join(instance, name, "city-plugin.json")
      }
      execFileSync("mkfifo", [dir("fifo")])
      fs.writeFileSync(dir("huge"), `{"name":"${"\u001b[31m".repeat(8 * 1024 * 1024)}"}`)
      writePlugin(instance, "fine", { manifest: manifest("fine"), files: { "index.mjs": registerEntry(unique("fine")) } })
      fs.writeFileSync(path.join(root, "plugins.json"), JSON.stringify({ licensed: ["fine", "fifo", "huge"] }))
      const discovered = yield* cityProcess(["plugins", "discover", "--json"], { root })
      expect(discovered.code).toBe(0)
      expect(discovered.stdout.length).toBeLessThan(10_000)
      const rows = json(discovered)["plugins"] as ReadonlyArray<{ name: string; status: string; reason: string | null }>
      expect(rows.map((r) => [r.name, r.status])).toEqual([["fifo", "invalid"], ["fine", "valid"], ["huge", "invalid"]])
      expect(rows.find((r) => r.name === "huge")?.reason).toMatch(/over the 1048576-byte cap for a plugin manifest$/)
      const listed = yield* cityProcess(["plugins", "list"], { root })
      expect(listed.code).toBe(0)
      expect(listed.stdout).toMatch(/fine\s+instance/)
      expect(listed.stderr).toContain("city: warning: plugin skipped: fifo: ")
      expect(listed.stderr.length).toBeLessThan(10_000)
    }))))
})

describe("the licence gate, closed by default", () => {
  it.live("without plugins.json no instance-root plugin loads, said once; plugins list names the unlicensed and the not-enabled folders", () =>
    provideNode(Effect.scoped(Effect.gen(function*() {
      const { bundled, instance, root } = yield* makeRoots
      for (const name of ["alpha", "beta", "gamma"]) {
        writePlugin(instance, name, { manifest: manifest(name), files: { "index.mjs": registerEntry(unique(name)) } })
      }
      writePlugin(bundled, "base", { manifest: manifest("base"), files: { "index.mjs": registerEntry(unique("base")) } })
      const closed = yield* city(["plugins", "list", "--bundled", bundled, "--json"], { root })
      expect(closed.code).toBe(0)
      const report = json(closed)
      expect((report["loaded"] as ReadonlyArray<{ name: string }>).map((p) => p.name)).toEqual(["base"])
      expect((report["skipped"] as ReadonlyArray<{ name: string; kind: string }>).map((s) => [s.name, s.kind])).toEqual([
        ["alpha", "NotLicensed"],
        ["beta", "NotLicensed"],
        ["gamma", "NotLicensed"]
      ])
      expect(report["notices"]).toEqual(["3 plugin folders in the instance root, none licensed"])

      fs.writeFileSync(path.join(root, "plugins.json"), JSON.stringify({ enabled: ["alpha", "beta"], licensed: ["alpha"] }))
      const table = yield* city(["plugins", "list"], { root })
      expect(table.code).toBe(0)
      const text = table.stdout
      expect(text).toMatch(/alpha\s+instance\s+1\.0\.0\s+ready/)
      expect(text).toMatch(/beta\s+instance\s+unlicensed: not included in this licence/)
      expect(text).toContain("not enabled (not in plugins.json's \"enabled\"): gamma (instance)")

      fs.writeFileSync(path.join(root, "plugins.json"), JSON.stringify({ licenced: ["alpha", "beta", "gamma"] }))
      const misspelt = yield* city(["plugins", "list"], { root })
      expect(misspelt.code).toBe(2)
      expect(misspelt.stderr).toContain(`${path.join(root, "plugins.json")}: licenced: is not a known key (did you mean "licensed"?`)
    }))))
})
