/**
 * The host's own thread has a watchdog (docs/plugin-loader.md, "The host's own thread";
 * docs/design.md, "Containment by default": "a daemon blocked past its freeze limit ends itself
 * naming the plugin, and quarantines it on the next start"). Real `city` processes on a temp root,
 * a plugin folder that spins on the host's thread, real signals; every wait is a poll with a
 * deadline.
 */
import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import { join } from "node:path"
import { execFileSync } from "node:child_process"
import { city, cityProcess, json, tempDir } from "./cityCli.ts"
import { startCity } from "../support/daemonProcess.ts"
import { awaitLog, files, jsonOf, logLines, registerEntry, startPluginDaemon, within, writePlugin } from "../support/pluginDaemon.ts"

const live = (name: string, body: () => Effect.Effect<void, unknown, any>) =>
  it.scopedLive(name, () => body().pipe(Effect.provide(NodeContext.layer)), 30_000)

/** A temp state root whose instance root holds `spin`, licensed, enabled, on the host's thread. */
const spinWorld = (entry: string) =>
  Effect.gen(function*() {
    const base = yield* tempDir
    const root = join(base, "root")
    const instance = join(root, "plugins")
    fs.mkdirSync(instance, { recursive: true })
    const folder = writePlugin(instance, "spin", entry)
    fs.writeFileSync(join(root, "plugins.json"), JSON.stringify({ enabled: ["spin"], licensed: ["spin"], isolation: "none" }))
    return { base, root, folder }
  })

/**
 * Line 2 of the entry (registerEntry's body): 1.5 s after register, writes `marker`, then loops
 * forever.
 */
const spinLater = (marker: string) =>
  registerEntry(`  setTimeout(function spinLoop() { writeFileSync(${JSON.stringify(marker)}, ""); for (;;) {} }, 1500)`) +
  `import { writeFileSync } from "node:fs"\n`

describe("the host's own thread has a watchdog", () => {
  live(
    "a plugin spinning on the daemon's thread: city status says frozen naming it, the daemon ends at --freeze-limit with exit 70 and one line naming it and its file:line, even after SIGTERM; the next start quarantines it in a worker until cleared",
    () =>
      Effect.gen(function*() {
        const marker = join(yield* tempDir, "spinning")
        const { base, root } = yield* spinWorld(spinLater(marker))
        const daemon = yield* startPluginDaemon(root, base, "daemon", ["--http", "127.0.0.1:0", "--freeze-limit", "4"])
        const location = /file:\/\/\S*\/plugins\/spin\/index\.mjs:2 in spinLoop/

        // Frozen: the watchdog's record names the plugin, where and since when.
        yield* within(
          "city status --json says the daemon is frozen in plugin spin",
          Effect.map(city(["status", "--json"], { root }), (run) => (json(run)["daemon"] as any)?.frozen?.plugin === "spin"),
          8_000
        )
        const status = yield* city(["status"], { root })
        expect(status.stdout).toMatch(new RegExp(`daemon: frozen \\(pid ${daemon.pid}\\): its thread is blocked since \\S+ in plugin spin \\(${location.source}\\)`))
        expect(status.stdout).not.toContain("daemon: running")

        // A blocked thread cannot run a signal handler: SIGTERM takes effect at the freeze limit at the latest.
        yield* daemon.kill("SIGTERM")
        yield* within("the daemon exits", Deferred.isDone(daemon.exited), 8_000)
        expect(yield* Deferred.await(daemon.exited)).toEqual({ code: 70, signal: null })
        const ended = yield* logLines(daemon, "past the freeze limit")
        expect(ended).toHaveLength(1)
        expect(ended[0]).toMatch(new RegExp(`city daemon: the host's thread was blocked for 4 s in plugin spin \\(${location.source}\\), past the freeze limit of 4 s: exiting 70`))
        expect(ended[0]).toContain("plugin=spin")
        expect(yield* jsonOf(join(root, "daemon.freeze.json"))).toMatchObject({ plugin: "spin", ended: true, limit_ms: 4000 })

        // The next start quarantines it: one log line, and it runs in a worker thread of its own.
        const again = yield* startPluginDaemon(root, base, "again", ["--http", "127.0.0.1:0", "--freeze-limit", "4"])
        yield* awaitLog(again, "plugin spin quarantined: it froze the host's thread for 4 s at file://")
        expect((yield* logLines(again, "quarantined"))[0]).toMatch(
          new RegExp(`${location.source}; it runs in a worker thread of its own until \`city plugins clear-quarantine spin\``)
        )
        const published = yield* jsonOf(files(root).generation)
        expect(published?.["report"]["loaded"].map((p: any) => [p.name, p.isolation])).toEqual([["spin", "worker"]])
        expect(fs.existsSync(join(root, "daemon.freeze.json"))).toBe(false)
        // Its spin is its worker's: the daemon's own thread serves meanwhile.
        fs.rmSync(marker, { force: true })
        yield* within("the plugin spins again, in its worker", Effect.sync(() => fs.existsSync(marker)), 8_000)
        const page = (yield* city(["status", "--url"], { root })).stdout.trim()
        const health = yield* Effect.promise(() => fetch(new URL("/healthz", page)))
        expect(health.status).toBe(200)
        expect((json(yield* city(["status", "--json"], { root }))["daemon"] as any).frozen).toBeNull()
        yield* again.kill("SIGKILL")
        yield* Deferred.await(again.exited)

        // Cleared by the operator: the next start loads it where plugins.json says.
        const cleared = yield* city(["plugins", "clear-quarantine", "spin"], { root })
        expect(cleared.code).toBe(0)
        expect(cleared.stdout).toContain("spin: out of quarantine")
        expect(fs.existsSync(join(root, "state", "plugins", "quarantine.json"))).toBe(false)
        expect((yield* city(["plugins", "clear-quarantine", "spin"], { root })).stdout).toContain("spin: not quarantined")
      })
  )

  live("a freeze that ends before the limit: the record goes, one line says the thread is free again, the daemon runs on", () =>
    Effect.gen(function*() {
      // Blocks the host's thread for 4.5 s, 1.5 s after register; reported at 3 s, the limit is 6 s.
      const { base, root } = yield* spinWorld(
        registerEntry("  setTimeout(function busyWait() { const t = Date.now(); while (Date.now() - t < 4500) {} }, 1500)")
      )
      const daemon = yield* startPluginDaemon(root, base, "daemon", ["--freeze-limit", "6"])
      const record = join(root, "daemon.freeze.json")
      yield* within("the freeze is recorded", Effect.sync(() => fs.existsSync(record)), 8_000)
      yield* awaitLog(daemon, "city daemon: the host's thread is free again after", 8_000)
      expect(yield* logLines(daemon, "free again")).toEqual([
        expect.stringMatching(/free again after \d+ s \(plugin spin \(file:\/\/\S*\/index\.mjs:2 in busyWait\)\)/)
      ])
      expect(fs.existsSync(record)).toBe(false)
      const status = yield* city(["status"], { root })
      expect(status.stdout).toContain(`daemon: running (pid ${daemon.pid})`)
      expect(yield* Deferred.isDone(daemon.exited)).toBe(false)
    }))

  live("a whole daemon stopped past its freeze limit (SIGSTOP, then SIGCONT) is not a blocked thread: no freeze is reported, the daemon runs on", () =>
    Effect.gen(function*() {
      const { base, root } = yield* spinWorld(registerEntry(""))
      const daemon = yield* startPluginDaemon(root, base, "daemon", ["--freeze-limit", "2"])
      process.kill(daemon.pid, "SIGSTOP")
      yield* Effect.sleep("3500 millis")
      process.kill(daemon.pid, "SIGCONT")
      // Past the limit again after the resume: a wrongly blamed thread would have ended the daemon by now.
      yield* Effect.sleep("3 seconds")
      expect(yield* Deferred.isDone(daemon.exited)).toBe(false)
      expect(yield* logLines(daemon, "thread was blocked")).toEqual([])
      expect(yield* logLines(daemon, "thread is blocked")).toEqual([])
      expect(fs.existsSync(join(root, "daemon.freeze.json"))).toBe(false)
    }))

  live("city plugins list with a plugin whose register spins ends with exit 1 naming the plugin at --freeze-limit, never a hang", () =>
    Effect.gen(function*() {
      const { root } = yield* spinWorld(registerEntry("  ;(function spinInRegister() { for (;;) {} })()"))
      const started = Date.now()
      const run = yield* cityProcess(["plugins", "list", "--freeze-limit", "2"], { root })
      const took = Date.now() - started
      expect(run.code).toBe(1)
      const lines = run.stderr.split("\n").filter((l) => l.includes("spin"))
      expect(lines).toEqual([
        expect.stringMatching(
          /^city: error: plugins list: the host's thread was blocked for 2 s in plugin spin \(file:\/\/\S*\/plugins\/spin\/index\.mjs:2 in spinInRegister\), past the freeze limit of 2 s: ended \(exit 1\)$/
        )
      ])
      expect(took).toBeLessThan(10_000)
    }))

  live("a thread blocked outside JavaScript (a read of a FIFO nobody writes) cannot be paused: at the limit the line says so and the process gets SIGKILL", () =>
    Effect.gen(function*() {
      const fifo = join(yield* tempDir, "fifo")
      execFileSync("mkfifo", [fifo])
      const { base, root } = yield* spinWorld(
        `import { readFileSync } from "node:fs"\n${registerEntry(`  readFileSync(${JSON.stringify(fifo)})`)}`
      )
      const listing = yield* startCity(root, base, "list", ["plugins", "list", "--freeze-limit", "2"])
      yield* within("city plugins list ends", Deferred.isDone(listing.exited), 10_000)
      expect(yield* Deferred.await(listing.exited)).toEqual({ code: null, signal: "SIGKILL" })
      // The watchdog waited a second for a pause that could not come: blocked for 3 s by then.
      expect(yield* logLines(listing, "past the freeze limit")).toEqual([
        expect.stringMatching(
          /^city: error: plugins list: the host's thread was blocked for \d+ s in code outside JavaScript \(no frame could be taken\), past the freeze limit of 2 s: killing the process with SIGKILL \(exit status 137\): its thread is blocked outside JavaScript$/
        )
      ])
    }))
})
