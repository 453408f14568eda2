/**
 * Containment by default, as an operator meets it through the `city` binary (docs/plugin-loader.md,
 * "Isolation", "Liveness"): a three-line instance-root plugin that spins, with nothing in
 * plugins.json but its name enabled and licensed. The daemon's status page answers throughout, the
 * plugin is `unresponsive` within 5 s on every surface, SIGTERM ends the daemon at once; the same
 * spin in `register` cannot hang `city plugins list`. Each end is one log line naming the plugin.
 */
import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import { join } from "node:path"
import { city, json, tempDir } from "./cityCli.ts"
import { logLines, startPluginDaemon, within, writePlugin, writeSettings } from "../support/pluginDaemon.ts"

const live = (name: string, body: () => Effect.Effect<void, unknown, any>) =>
  it.scopedLive(name, () => body().pipe(Effect.provide(NodeContext.layer)), 40_000)

/** A state root with `spin` (its entry as given) and `steady`, both enabled and licensed, nothing else said. */
const world = (spin: string) =>
  Effect.gen(function*() {
    const base = yield* tempDir
    const root = join(base, "root")
    const instance = join(root, "plugins")
    fs.mkdirSync(instance, { recursive: true })
    writePlugin(instance, "spin", spin)
    writePlugin(instance, "steady", `export function register(ctx) { ctx.registerSystem("steady") }\n`)
    writeSettings(root, { enabled: ["spin", "steady"], licensed: ["spin", "steady"] })
    return { base, root }
  })

/** Fetches `path` of the page, failing if it takes more than a second. */
const fetchWithin = (page: string, path: string) =>
  Effect.tryPromise(() => fetch(new URL(path, page), { signal: AbortSignal.timeout(1_000) }).then((r) => r.text())).pipe(
    Effect.orDieWith((e) => new Error(`${path} did not answer within 1 s: ${String(e)}`))
  )

describe("containment by default, through the binary", () => {
  live("a spin in an instance-root plugin's timer: the page answers within 1 s throughout, the plugin is unresponsive within 5 s on /api/status, /metrics, city status and city plugins list, and SIGTERM ends the daemon", () =>
    Effect.gen(function*() {
      const { base, root } = yield* world(`export function register(ctx) {\n  setTimeout(() => { for (;;) {} }, 1000)\n}\n`)
      const daemon = yield* startPluginDaemon(root, base, "spin", ["--http", "127.0.0.1:0"])
      const page = (yield* city(["status", "--url"], { root })).stdout.trim()
      const started = Date.now()
      const statusOf = Effect.map(fetchWithin(page, "/api/status"), (text) =>
        (JSON.parse(text) as { plugins: ReadonlyArray<{ name: string; status: string; last_error?: string }> }).plugins)
      let seen: { status: string; last_error?: string } | undefined
      yield* within("spin is unresponsive on /api/status", Effect.map(statusOf, (plugins) => {
        seen = plugins.find((p) => p.name === "spin" && p.status === "unresponsive")
        return seen !== undefined
      }), 10_000)
      expect(Date.now() - started).toBeLessThan(6_000)
      expect(seen?.last_error).toMatch(/^its worker ended: it was unresponsive: no heartbeat for 3\.\d s, running \S+ \(file:\/\/\S*\/plugins\/spin\/index\.mjs\?\S*:2:\d+\)$/)
      // Every surface says so while it is (it starts again after 1 s, 2 s, 4 s …, and spins again).
      yield* within("/metrics counts it unresponsive", Effect.map(fetchWithin(page, "/metrics"), (text) => /city_plugins\{status="unresponsive"\} 1/.test(text)), 15_000)
      yield* within("city status names it unresponsive", Effect.map(city(["status"], { root }), (run) =>
        run.stdout.includes("daemon: running") && /\n {2}spin: unresponsive \(its worker ended: it was unresponsive: no heartbeat/.test(run.stdout)), 15_000)
      yield* within("city plugins list says it is unresponsive", Effect.map(city(["plugins", "list", "--json"], { root }), (run) => {
        const loaded = json(run)["loaded"] as ReadonlyArray<{ name: string; status: string }>
        return loaded.some((p) => p.name === "spin" && p.status === "unresponsive") && loaded.some((p) => p.name === "steady" && p.status === "ready")
      }), 15_000)
      // It starts again by itself after 1 s, and spins again: the page still answers.
      yield* within("spin starts again", Effect.map(statusOf, (plugins) => plugins.some((p) => p.name === "spin" && p.status === "ready")), 10_000)
      yield* fetchWithin(page, "/healthz")
      // Each end is one line naming the plugin and why; the platform's own stack is not in the log.
      expect((yield* logLines(daemon, "plugin spin lost: its worker ended: it was unresponsive")).length).toBeGreaterThan(0)
      expect(yield* logLines(daemon, "WorkerError")).toEqual([])
      const stopping = Date.now()
      yield* daemon.kill("SIGTERM")
      yield* within("the daemon exits", Deferred.isDone(daemon.exited), 15_000)
      expect(yield* Deferred.await(daemon.exited)).toEqual({ code: 0, signal: null })
      expect(Date.now() - stopping).toBeLessThan(6_000)
    }))

  live("the same spin in register cannot hang city plugins list: the plugin is skipped as unresponsive and the command ends", () =>
    Effect.gen(function*() {
      const { root } = yield* world(`export function register(ctx) {\n  for (;;) {}\n}\n`)
      const started = Date.now()
      const listed = yield* city(["plugins", "list", "--json"], { root })
      expect(Date.now() - started).toBeLessThan(15_000)
      const out = json(listed)
      expect((out["loaded"] as ReadonlyArray<{ name: string }>).map((p) => p.name)).toEqual(["steady"])
      const skipped = out["skipped"] as ReadonlyArray<{ name: string; reason: string }>
      expect(skipped.map((s) => s.name)).toEqual(["spin"])
      expect(skipped[0]?.reason).toMatch(/it was unresponsive: no heartbeat for 3\.\d s, running register \(file:\/\/\S*\/plugins\/spin\/index\.mjs\?\S*:2:\d+\)/)
    }))
})
