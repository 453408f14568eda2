/**
 * `city daemon` hosts the plugin loader (docs/plugin-loader-lifecycle.md: "Every daemon start
 * builds the registry generation from disk, and a plugin change is applied by restarting, never
 * by swapping the plugin in place (requestReload). The one exception is a plugin's skill set").
 * A real daemon process on a temp root, real plugin folders, the CLI in process; every wait is
 * bounded and names what it waited for.
 *
 * The daemon offers no way to invoke a plugin action from outside (a hosted Turn calls the tools
 * of its launch-read files, not plugin actions), so the skills-reloading plugin watches a trigger
 * file from a timer it starts in `register` and calls `ctx.requestReload` when it appears.
 */
import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import { join } from "node:path"
import { city, json, tempDir } from "./cityCli.ts"
import { startDaemon } from "../support/daemonProcess.ts"
import * as Loader from "../../src/layers/Loader.ts"
import { City } from "../../src/services/city/CityService.ts"
import { Generations } from "../../src/services/loader/Generations.ts"
import {
  awaitLog,
  files,
  jsonOf,
  logLines,
  registerEntry,
  startPluginDaemon,
  textOf,
  within,
  writePlugin,
  writeSettings
} from "../support/pluginDaemon.ts"

const live = (name: string, body: () => Effect.Effect<void, unknown, any>) =>
  it.scopedLive(name, () => body().pipe(Effect.provide(NodeContext.layer)), 240_000)

/** A temp state root with its instance root. */
const rootWorld = Effect.gen(function*() {
  const base = yield* tempDir
  const root = join(base, "root")
  const instance = join(root, "plugins")
  fs.mkdirSync(instance, { recursive: true })
  return { base, root, instance }
})

const modeOf = (file: string) => fs.statSync(file).mode & 0o777

/** `clock` at `version`: its system text names the version. */
const clockEntry = (version: string) => registerEntry(`ctx.registerSystem(${JSON.stringify(`clock ${version}`)})`)

/**
 * `notes`: starts with the skill `old`; when `trigger` appears, asks for `{ mode: "reload", skills:
 * [fresh] }` and writes what came of it to `result`.
 */
const notesEntry = (trigger: string, result: string) =>
  [
    `import { existsSync, writeFileSync } from "node:fs"`,
    registerEntry([
      `  ctx.registerSkills([{ name: "old" }])`,
      `  const timer = setInterval(() => {`,
      `    if (!existsSync(${JSON.stringify(trigger)})) return`,
      `    clearInterval(timer)`,
      `    ctx.requestReload({ mode: "reload", skills: [{ name: "fresh" }] }).then(`,
      `      () => writeFileSync(${JSON.stringify(result)}, "ok"),`,
      `      (error) => writeFileSync(${JSON.stringify(result)}, "rejected: " + error.message))`,
      `  }, 20)`,
      `  ctx.onDispose(() => clearInterval(timer))`
    ].join("\n"))
  ].join("\n")

describe("Loader.city: the City façade over the loader's core", () => {
  it.scoped("a Session made through City sees generation 1's plugins, and the next generation after a restart", () =>
    Effect.gen(function*() {
      const { instance, root } = yield* rootWorld
      const entry = (version: string) =>
        registerEntry([
          `  ctx.registerSkills([{ name: "skill-${version}" }])`,
          `  ctx.registerAction("version", { handler: () => ${JSON.stringify(version)} })`
        ].join("\n"))
      writePlugin(instance, "clock", entry("1.0.0"))
      const context = yield* Layer.build(Loader.city({ root }, { enabled: ["clock"], licensed: ["clock"] }))
      const city = Context.get(context, City)
      const agent = yield* city.agents.add({ id: "ada" })
      const session = yield* agent.sessions.create({ workspace: yield* city.workspaces.add({ id: "w", path: root }) })
      const seen = session.turn((turn) =>
        Effect.map(turn.step((view) => view.invoke("clock", "version", null)), (version) => ({
          version,
          skills: turn.skills.map((s) => s.skills.map((k) => k.name)).flat()
        })))
      expect(yield* seen).toEqual({ version: "1.0.0", skills: ["skill-1.0.0"] })
      writePlugin(instance, "clock", entry("2.0.0"), "2.0.0")
      expect((yield* Context.get(context, Generations).restart("test")).generation).toBe(2)
      expect(yield* seen).toEqual({ version: "2.0.0", skills: ["skill-2.0.0"] })
      yield* city.close
      expect(yield* city.plugins.snapshots).toEqual([])
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("city daemon hosts the plugin loader", () => {
  live("generation 1 at start, a live skills reload, then `city plugins reload` builds generation 2 from the changed folder", () =>
    Effect.gen(function*() {
      const { base, instance, root } = yield* rootWorld
      const trigger = join(base, "trigger")
      const result = join(base, "result")
      writePlugin(instance, "clock", clockEntry("1.0.0"))
      writePlugin(instance, "notes", notesEntry(trigger, result))
      writeSettings(root, { enabled: ["clock", "notes"], licensed: ["clock", "notes"] })
      const { generation, restart } = files(root)

      const daemon = yield* startPluginDaemon(root, base, "daemon")
      expect(yield* logLines(daemon, "plugin generation 1 ready")).toEqual([
        expect.stringContaining("plugin generation 1 ready: 2 loaded, 0 skipped")
      ])
      const first = yield* jsonOf(generation)
      expect(first).toMatchObject({ pid: daemon.pid, generation: 1, report: { generation: 1, skipped: [] } })
      expect(first?.["report"]["loaded"].map((p: any) => [p.name, p.version, p.root])).toEqual([
        ["clock", "1.0.0", "instance"],
        ["notes", "1.0.0", "instance"]
      ])
      expect(modeOf(generation)).toBe(0o600)

      // The skills reload is live: the plugin's Generations-bound requestReload succeeds, no restart.
      fs.writeFileSync(trigger, "")
      yield* within("the notes plugin wrote the outcome of its requestReload", Effect.map(textOf(result), (t) => t !== ""))
      expect(yield* textOf(result)).toBe("ok")
      yield* awaitLog(daemon, "plugin notes: skills reloaded (1): fresh")
      expect((yield* jsonOf(generation))?.["generation"]).toBe(1)

      // Any other change: the folder changes on disk, then a restart by generation.
      writePlugin(instance, "clock", clockEntry("2.0.0"), "2.0.0")
      const asked = yield* city(["plugins", "reload", "--reason", "clock updated"], { root })
      expect(asked.code).toBe(0)
      expect(asked.stdout.split("\n")[0]).toBe("pending")
      expect(asked.stdout).toContain(`the city daemon (pid ${daemon.pid})`)
      yield* within("generation.json shows generation 2", Effect.map(jsonOf(generation), (g) => g?.["generation"] === 2))
      const second = yield* jsonOf(generation)
      expect(second?.["report"]["loaded"].map((p: any) => [p.name, p.version])).toEqual([["clock", "2.0.0"], ["notes", "1.0.0"]])
      yield* awaitLog(daemon, "plugin generation 2 ready: 2 loaded, 0 skipped (restart request 1: clock updated)")
      expect(yield* logLines(daemon, "plugin restart: pausing Turns")).toHaveLength(1)
      yield* within("the request is recorded as applied", Effect.map(jsonOf(restart), (r) => r?.["applied"] === 1))
      expect(yield* jsonOf(restart)).toMatchObject({ schema: 1, requested: 1, applied: 1, reason: "clock updated" })
      expect(modeOf(restart)).toBe(0o600)

      const listed = yield* city(["plugins", "list", "--json"], { root })
      expect(listed.code).toBe(0)
      expect(json(listed)).toMatchObject({ ok: true, source: "daemon", daemon: { running: true, pid: daemon.pid }, generation: 2 })
      expect((json(listed)["loaded"] as Array<any>).map((p) => [p.name, p.version, p.root])).toEqual([
        ["clock", "2.0.0", "instance"],
        ["notes", "1.0.0", "instance"]
      ])
      const text = yield* city(["plugins", "list"], { root })
      expect(text.stdout).toContain(`generation 2 of the city daemon (pid ${daemon.pid})`)
      expect(text.stdout).toMatch(/clock\s+instance\s+2\.0\.0/)

      // `--wait` waits for the daemon to apply its request.
      const waited = yield* city(["plugins", "reload", "--wait", "--json"], { root })
      expect(waited.code).toBe(0)
      expect(json(waited)).toMatchObject({ ok: true, status: "applied", requested: 2, generation: 3 })

      yield* daemon.kill("SIGTERM")
      expect((yield* Deferred.await(daemon.exited)).code).toBe(0)
      expect(fs.existsSync(generation)).toBe(false)
      // No daemon now: `city plugins list` says so and loads a throwaway City.
      const after = yield* city(["plugins", "list"], { root })
      expect(after.stdout.split("\n")[0]).toContain("no city daemon runs on this root")
    }))

  live("a restart requested while the daemon is down is carried out by its start: generation 1 from disk satisfies it", () =>
    Effect.gen(function*() {
      const { base, instance, root } = yield* rootWorld
      writePlugin(instance, "clock", clockEntry("1.0.0"))
      writeSettings(root, { enabled: ["clock"], licensed: ["clock"] })
      const { generation, restart } = files(root)

      const asked = yield* city(["plugins", "reload", "--reason", "while down"], { root })
      expect(asked.code).toBe(0)
      expect(asked.stdout).toContain("pending\nno city daemon is running on this root")
      expect(yield* jsonOf(restart)).toMatchObject({ requested: 1, applied: 0, reason: "while down" })

      writePlugin(instance, "clock", clockEntry("2.0.0"), "2.0.0")
      const daemon = yield* startPluginDaemon(root, base, "daemon")
      // Applied by the start itself, before the ready line: no restart of its own.
      expect(yield* jsonOf(restart)).toMatchObject({ requested: 1, applied: 1 })
      expect(yield* jsonOf(generation)).toMatchObject({ generation: 1, report: { loaded: [{ name: "clock", version: "2.0.0" }] } })
      expect(yield* logLines(daemon, "made before this start: satisfied by generation 1")).toHaveLength(1)

      // The next request is the next generation: 2, not 3.
      const waited = yield* city(["plugins", "reload", "--wait"], { root })
      expect(waited.stdout.trim()).toBe("applied: generation 2")
      expect(yield* logLines(daemon, "plugin restart: pausing Turns")).toHaveLength(1)
      yield* daemon.kill("SIGTERM")
      expect((yield* Deferred.await(daemon.exited)).code).toBe(0)
    }))

  live("a plugin skipped in the daemon is reported by `city status` with its reason, and the daemon goes on", () =>
    Effect.gen(function*() {
      const { base, instance, root } = yield* rootWorld
      writePlugin(instance, "broken", registerEntry(`  throw new Error("no database configured")`))
      writePlugin(instance, "clock", clockEntry("1.0.0"))
      writePlugin(instance, "stranger", clockEntry("1.0.0"))
      writeSettings(root, { enabled: ["broken", "clock", "stranger"], licensed: ["broken", "clock"] })

      const daemon = yield* startPluginDaemon(root, base, "daemon")
      yield* awaitLog(daemon, "plugin generation 1 ready: 1 loaded, 2 skipped")
      expect(yield* logLines(daemon, "plugin skipped: broken:")).toHaveLength(1)

      const status = yield* city(["status", "--json"], { root })
      expect(status.code).toBe(0)
      const plugins = json(status)["plugins"] as Record<string, any>
      expect(plugins["generation"]).toMatchObject({ number: 1, loaded: 1 })
      const skipped = plugins["generation"]["skipped"] as Array<{ name: string; reason: string }>
      expect(skipped.map((s) => s.name)).toEqual(["broken", "stranger"])
      expect(skipped[0]!.reason).toContain("no database configured")
      expect(skipped[1]!.reason).toContain("not included in this licence")

      const text = yield* city(["status"], { root })
      expect(text.stdout).toContain("plugins: generation 1")
      expect(text.stdout).toContain("1 loaded, 2 skipped")
      expect(text.stdout).toMatch(/skipped broken: .*no database configured/)
      expect(text.stdout).toMatch(/skipped stranger: .*not included in this licence/)

      yield* daemon.kill("SIGTERM")
      expect((yield* Deferred.await(daemon.exited)).code).toBe(0)
    }))

  live("a refused plugins.json stops the daemon before any plugin loads: logged, exit 2", () =>
    Effect.gen(function*() {
      const { base, instance, root } = yield* rootWorld
      const ran = join(base, "ran")
      writePlugin(instance, "clock", registerEntry(`  (await import("node:fs")).writeFileSync(${JSON.stringify(ran)}, "")`))
      fs.writeFileSync(join(root, "plugins.json"), `{ "enabled": "clock" }`)
      const daemon = yield* startDaemon(root, base, "daemon")
      expect((yield* Deferred.await(daemon.exited)).code).toBe(2)
      const log = yield* textOf(daemon.log)
      expect(log).toContain(`city: error: ${join(root, "plugins.json")}: enabled:`)
      expect(log).toMatch(/level=ERROR .*code=plugin\.settings_invalid/)
      expect(fs.existsSync(ran)).toBe(false)
      expect(fs.existsSync(join(root, "daemon.pid"))).toBe(false)
    }))

  live("every failure that stops the daemon carries its exit code: a refused host.json is 2, a second daemon is 1", () =>
    Effect.gen(function*() {
      const { base, root } = yield* rootWorld
      fs.writeFileSync(join(root, "host.json"), "{ broken")
      const refused = yield* startDaemon(root, base, "refused")
      expect((yield* Deferred.await(refused.exited)).code).toBe(2)
      expect(yield* textOf(refused.log)).toContain(`city: error: invalid host configuration ${join(root, "host.json")}`)
      fs.rmSync(join(root, "host.json"))
      const first = yield* startDaemon(root, base, "first")
      yield* awaitLog(first, "plugin generation 1 ready")
      const second = yield* startDaemon(root, base, "second")
      expect((yield* Deferred.await(second.exited)).code).toBe(1)
      yield* first.kill("SIGTERM")
      expect((yield* Deferred.await(first.exited)).code).toBe(0)
    }))
})
