/**
 * The fault table of docs/plugin-loader.md ("Faults, mode by mode"), the rows that hold alike in a
 * worker thread and in a child process: a spin at initialize, a spin in a timer, an unhandled
 * rejection, a throw in a timer and a spin at dispose, each in a real plugin folder beside a steady
 * plugin whose calls go on answering. The test process is the host.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { eventually, provideNode } from "../fixtures.ts"
import { makeRoots, manifest, registerEntry, startLoader, unique, withLogs, writePlugin } from "../loaderFixtures.ts"
import { errorOf, sessionOn, watchStatuses } from "./isolated.ts"

describe.each(["worker", "process"] as const)("faults in a %s of its own", (mode) => {
  it.scopedLive("a spin at initialize, a spin in a timer, an unhandled rejection, a throw in a timer and a spin at dispose each end only that plugin, saying why", () =>
    provideNode(withLogs(() =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        const plugin = (name: string, body: string) =>
          writePlugin(instance, name, { manifest: manifest(name, { isolation: mode }), files: { "index.mjs": registerEntry(unique(name), body) } })
        plugin("initspin", `for (;;) {}`)
        plugin("timer", `ctx.registerAction("arm", { handler: () => { setTimeout(function spinInTimer() { for (;;) {} }, 10); return "armed" } })`)
        plugin("rejecter", `ctx.registerAction("arm", { handler: () => { setTimeout(() => { Promise.reject(new Error("nobody catches me")) }, 10); return "armed" } })`)
        plugin("thrower", `ctx.registerAction("arm", { handler: () => { setTimeout(() => { throw new Error("boom in a timer") }, 10); return "armed" } })`)
        plugin("disposer", `ctx.onDispose(function spinAtDispose() { for (;;) {} })`)
        plugin("steady", `ctx.registerAction("ping", { handler: () => "pong" })`)
        const names = ["disposer", "initspin", "rejecter", "steady", "thrower", "timer"]
        const loaded = yield* startLoader(root, { enabled: names, licensed: names })
        const report = yield* loaded.generations.current
        // A spin at initialize: skipped, unresponsive, blamed by its line.
        expect(report.skipped.map((s) => s.name)).toEqual(["initspin"])
        expect(report.skipped[0]?.reason).toMatch(/it was unresponsive: no heartbeat for 3\.\d s, running register \(file:.*\/initspin\/index\.mjs\?[^:]*:3:\d+\)/)
        const session = yield* sessionOn(loaded, root)
        const ping = session.turn((turn) => turn.step((view) => view.invoke("steady", "ping", null)))
        const watched = {
          timer: yield* watchStatuses(loaded, "timer"),
          rejecter: yield* watchStatuses(loaded, "rejecter"),
          thrower: yield* watchStatuses(loaded, "thrower")
        }
        for (const name of ["timer", "rejecter", "thrower"]) {
          expect(yield* session.turn((turn) => turn.step((view) => view.invoke(name, "arm", null)))).toBe("armed")
        }
        const armed = Date.now()
        const ended = (seen: ReadonlyArray<{ status: string }>) => seen.some((s) => s.status === "error" || s.status === "unresponsive")
        yield* eventually(Effect.sync(() => ended(watched.timer) && ended(watched.rejecter) && ended(watched.thrower)), 10_000)
        expect(Date.now() - armed).toBeLessThan(5_000)
        const why = (seen: ReadonlyArray<{ status: string; last_error: string | undefined }>) => seen.find((s) => s.status === "error" || s.status === "unresponsive")
        expect(why(watched.timer)?.status).toBe("unresponsive")
        expect(why(watched.timer)?.last_error).toMatch(new RegExp(`^its ${mode} ended: it was unresponsive: no heartbeat for 3\\.\\d s, running spinInTimer \\(file:.*timer\\/index\\.mjs`))
        expect(why(watched.rejecter)).toEqual({ status: "error", last_error: `its ${mode} ended: uncaught Error: nobody catches me` })
        expect(why(watched.thrower)).toEqual({ status: "error", last_error: `its ${mode} ended: uncaught Error: boom in a timer` })
        expect(yield* ping).toBe("pong")
        // Each comes back by itself.
        yield* eventually(Effect.sync(() => Object.values(watched).every((seen) => seen.at(-1)?.status === "ready")), 15_000)
        // A spin at dispose: ended at its silence, before the 10 s dispose timeout; the remove says it failed.
        const removing = Date.now()
        const removed = yield* Effect.exit(Effect.flatMap(loaded.registry.remove("disposer"), (removal) => removal._tag === "Some" ? removal.value.disposal : Effect.void))
        expect(Date.now() - removing).toBeLessThan(8_000)
        expect(errorOf(removed)).toContain("disposer")
        expect(yield* ping).toBe("pong")
      })
    )), 45_000)
})
