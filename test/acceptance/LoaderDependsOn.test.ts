/**
 * Folder plugins with `dependsOn` (docs/plugin-loader.md, "Dependencies"): loaded after what they
 * depend on whatever their names, disposed before it at a restart by generation, skipped with the
 * reason when a dependency was skipped, and a cycle skipped naming it.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import {
  makeRoots,
  manifest,
  marker,
  runs,
  startLoader,
  unique,
  withLogs,
  writePlugin
} from "../loaderFixtures.ts"
import { provideNode } from "../fixtures.ts"

/** A register(ctx) entry that records its registration and its dispose under `key`. */
const entry = (key: string) =>
  `${marker(`${key}:import`)}export async function register(ctx) {\n` +
  `  (globalThis.__cityLoaderRuns ??= []).push(${JSON.stringify(`${key}:register`)})\n` +
  `  ctx.onDispose(() => { globalThis.__cityLoaderRuns.push(${JSON.stringify(`${key}:dispose`)}) })\n}\n`

describe("folder plugins with dependsOn", () => {
  it.scoped("load after what they depend on and are disposed before it at a restart; a skipped dependency skips its dependents, a cycle skips itself", () =>
    provideNode(withLogs(() =>
      Effect.gen(function*() {
        const { instance, root } = yield* makeRoots
        const key = unique("deps")
        // Name order would load alpha (the dependent) first.
        writePlugin(instance, "alpha", { manifest: manifest("alpha", { dependsOn: ["zulu"] }), files: { "index.mjs": entry(`${key}:alpha`) } })
        writePlugin(instance, "zulu", { manifest: manifest("zulu"), files: { "index.mjs": entry(`${key}:zulu`) } })
        writePlugin(instance, "maybe", {
          manifest: manifest("maybe", { dependsOn: [{ name: "absent", optional: true }] }),
          files: { "index.mjs": entry(`${key}:maybe`) }
        })
        // A dependency whose entry is missing: skipped, and its dependent with it.
        writePlugin(instance, "broken", { manifest: manifest("broken"), files: {} })
        writePlugin(instance, "needs-broken", { manifest: manifest("needs-broken", { dependsOn: ["broken"] }), files: { "index.mjs": entry(`${key}:nb`) } })
        writePlugin(instance, "ping", { manifest: manifest("ping", { dependsOn: ["pong"] }), files: { "index.mjs": entry(`${key}:ping`) } })
        writePlugin(instance, "pong", { manifest: manifest("pong", { dependsOn: ["ping"] }), files: { "index.mjs": entry(`${key}:pong`) } })
        const names = ["alpha", "zulu", "maybe", "broken", "needs-broken", "ping", "pong"]
        const { generations } = yield* startLoader(root, { enabled: names, licensed: names })
        const report = yield* generations.current
        expect(report.loaded.map((p) => p.name)).toEqual(["maybe", "zulu", "alpha"])
        const skipped = new Map(report.skipped.map((s) => [s.name, s.reason]))
        expect(skipped.get("needs-broken")).toMatch(/^dependency broken failed: /)
        expect(skipped.get("ping")).toBe("its dependencies form a cycle: ping -> pong -> ping")
        expect(skipped.get("pong")).toBe("its dependencies form a cycle: ping -> pong -> ping")
        const mine = () => runs().filter((r) => r.startsWith(key) && !r.endsWith(":import")).map((r) => r.slice(key.length + 1))
        expect(mine()).toEqual(["maybe:register", "zulu:register", "alpha:register"])
        // A restart by generation disposes the old one in reverse load order: alpha before zulu.
        yield* generations.restart("dependencies changed")
        const disposals = mine().filter((r) => r.endsWith(":dispose"))
        expect(disposals.indexOf("alpha:dispose")).toBeLessThan(disposals.indexOf("zulu:dispose"))
        expect((yield* generations.current).loaded.map((p) => p.name)).toEqual(["maybe", "zulu", "alpha"])
      })
    )))
})
