/**
 * Faults of plugin code on the daemon's own thread are named (docs/plugin-loader.md, "The host's
 * own thread"; src/services/watchdog/HostFaults.ts): a real `city daemon` with plugins trusted on
 * its thread by plugins.json; an unhandled rejection and a `process.exit()` from plugin code end
 * that plugin only, an uncaught exception ends the daemon with one line naming the plugin and
 * quarantines it on the next start. Every wait is a poll with a deadline.
 */
import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import { join } from "node:path"
import { city, tempDir } from "./cityCli.ts"
import { awaitLog, files, jsonOf, logLines, registerEntry, startPluginDaemon, within, writePlugin } from "../support/pluginDaemon.ts"

const live = (name: string, body: () => Effect.Effect<void, unknown, any>) =>
  it.scopedLive(name, () => body().pipe(Effect.provide(NodeContext.layer)), 30_000)

/** A temp state root whose instance root holds `plugins` (name → entry), all trusted on the host's thread. */
const world = (plugins: Record<string, string>) =>
  Effect.gen(function*() {
    const base = yield* tempDir
    const root = join(base, "root")
    const instance = join(root, "plugins")
    fs.mkdirSync(instance, { recursive: true })
    for (const [name, entry] of Object.entries(plugins)) writePlugin(instance, name, entry)
    const names = Object.keys(plugins)
    fs.writeFileSync(join(root, "plugins.json"), JSON.stringify({ enabled: names, licensed: names, isolation: "none" }))
    return { base, root }
  })

/** The daemon's `/api/status` plugin rows. */
const rows = (root: string) =>
  Effect.gen(function*() {
    const page = (yield* city(["status", "--url"], { root })).stdout.trim()
    const document = yield* Effect.promise(async () => (await (await fetch(new URL("/api/status", page))).json()) as { plugins: ReadonlyArray<{ name: string; status: string; last_error?: string }> })
    return document.plugins
  })

describe("the daemon's last word is last", () => {
  live("a stop closes the City first, saying a slow dispose as it goes and a failing one, then says stopped with the close's summary, as its last line", () =>
    Effect.gen(function*() {
      const { base, root } = yield* world({
        slow: registerEntry(`  ctx.onDispose(() => new Promise((resolve) => setTimeout(resolve, 1500)))`),
        sore: registerEntry(`  ctx.onDispose(() => { throw new Error("dispose went wrong") })`),
        steady: registerEntry(`  ctx.registerSystem("steady")`)
      })
      const daemon = yield* startPluginDaemon(root, base, "stop", ["--http", "127.0.0.1:0"])
      yield* daemon.kill("SIGTERM")
      yield* within("the daemon exits", Deferred.isDone(daemon.exited), 20_000)
      const lines = (yield* logLines(daemon, "")).filter((l) => l.trim() !== "")
      const last = lines.at(-1) ?? ""
      expect(last).toMatch(/city daemon stopped: 3 plugins disposed, 1 cleanup failure \(plugin sore\), in \d+ ms; 0 endpoint\(s\) with owed work kept for the next start/)
      const failed = lines.findIndex((l) => l.includes("City close had 1 cleanup failure"))
      expect(failed).toBeGreaterThanOrEqual(0)
      expect(failed).toBeLessThan(lines.length - 1)
      const slow = lines.findIndex((l) => l.includes("closing: still disposing plugin slow after 1s (each at most 10s)"))
      expect(slow).toBeGreaterThanOrEqual(0)
      expect(slow).toBeLessThan(lines.length - 1)
    }))
})

describe("faults of plugin code on the host's thread are named", () => {
  live("an unhandled rejection and a process.exit() from plugin code end that plugin only, with an error snapshot saying why; the daemon and the others go on", () =>
    Effect.gen(function*() {
      const { base, root } = yield* world({
        rejecter: registerEntry(`  setTimeout(() => { Promise.reject(new Error("nobody catches me")) }, 300)`),
        exiter: registerEntry(`  setTimeout(() => { process.exit(7) }, 300)`),
        steady: registerEntry(`  ctx.registerSystem("steady")`)
      })
      const daemon = yield* startPluginDaemon(root, base, "faults", ["--http", "127.0.0.1:0"])
      const statusOf = (name: string) => Effect.map(rows(root), (plugins) => plugins.find((p) => p.name === name))
      yield* within("both faulty plugins are error", Effect.map(rows(root), (plugins) =>
        plugins.filter((p) => p.status === "error").length === 2), 10_000)
      expect((yield* statusOf("rejecter"))?.last_error).toMatch(/^unhandled rejection: Error: nobody catches me \(at file:\/\/\S*\/plugins\/rejecter\/index\.mjs:2:\d+\)$/)
      expect((yield* statusOf("exiter"))?.last_error).toMatch(/^it called process\.exit\(7\) \(at file:\/\/\S*\/plugins\/exiter\/index\.mjs:2:\d+\), which is refused on the host's thread$/)
      expect((yield* statusOf("steady"))?.status).toBe("ready")
      expect(yield* Deferred.isDone(daemon.exited)).toBe(false)
      expect(yield* logLines(daemon, "plugin rejecter ended: unhandled rejection")).toHaveLength(1)
      yield* daemon.kill("SIGTERM")
      expect(yield* Deferred.await(daemon.exited)).toEqual({ code: 0, signal: null })
    }))

  live("an uncaught exception in a plugin's timer ends the daemon with exit 70 and one line naming the plugin; the next start quarantines it in a worker", () =>
    Effect.gen(function*() {
      const { base, root } = yield* world({
        thrower: registerEntry(`  setTimeout(function boom() { throw new Error("boom on the host") }, 300)`)
      })
      const daemon = yield* startPluginDaemon(root, base, "thrower", ["--http", "127.0.0.1:0"])
      yield* within("the daemon exits", Deferred.isDone(daemon.exited), 10_000)
      expect(yield* Deferred.await(daemon.exited)).toEqual({ code: 70, signal: null })
      const lines = yield* logLines(daemon, "uncaught exception")
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(/city daemon: uncaught exception in plugin thrower \(file:\/\/\S*\/plugins\/thrower\/index\.mjs:2:\d+\): Error: boom on the host; exiting 70/)
      expect(lines[0]).toContain("plugin=thrower")

      const again = yield* startPluginDaemon(root, base, "again", ["--http", "127.0.0.1:0"])
      yield* awaitLog(again, "plugin thrower quarantined: it threw Error: boom on the host at file://")
      const published = yield* jsonOf(files(root).generation)
      expect(published?.["report"]["loaded"].map((p: any) => [p.name, p.isolation])).toEqual([["thrower", "worker"]])
      // In its worker the same throw ends only the worker: the daemon runs on.
      yield* within("the worker's end is the plugin's snapshot", Effect.map(rows(root), (plugins) =>
        plugins.some((p) => p.name === "thrower" && (p.last_error ?? "").includes("its worker ended: uncaught Error: boom on the host"))), 10_000)
      expect(yield* Deferred.isDone(again.exited)).toBe(false)
      yield* again.kill("SIGTERM")
      yield* Deferred.await(again.exited)
    }))
})
