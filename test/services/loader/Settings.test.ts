/**
 * `plugins.json` (schema/LoaderSettings.ts): the licence gate closed by default, unknown keys
 * refused with the known key they resemble, every refusal naming the file, the field and the rule
 * in one line, and the file read through the one reader (a FIFO in its place never hangs).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Settings from "../../../src/services/loader/Settings.ts"
import { provideNode } from "../../fixtures.ts"
import { makeRoots, manifest, writePlugin } from "../../loaderFixtures.ts"

describe("plugins.json", () => {
  it.scoped("without the file: every folder found is enabled (\"all\") and none licensed (the gate is closed)", () =>
    provideNode(Effect.gen(function*() {
      const { instance, root } = yield* makeRoots
      writePlugin(instance, "notes", { manifest: manifest("notes") })
      const options = yield* Settings.options(root, undefined)
      expect(options.enabled).toBe("all")
      expect([...options.licensed]).toEqual([])
      expect(options.settingsExist).toBe(false)
    })))

  it.scoped("a file without `licensed` licenses nothing either", () =>
    provideNode(Effect.gen(function*() {
      const { root } = yield* makeRoots
      fs.writeFileSync(path.join(root, "plugins.json"), JSON.stringify({ enabled: ["notes"] }))
      expect([...(yield* Settings.options(root, undefined)).licensed]).toEqual([])
    })))

  it.scoped.each([
    [{ licenced: ["notes"] }, "licenced: is not a known key (did you mean \"licensed\"? the keys are bundledRoot, enabled, licensed, config, isolation, workerLimits)"],
    [{ Enabled: [] }, "Enabled: is not a known key (did you mean \"enabled\"? the keys are bundledRoot, enabled, licensed, config, isolation, workerLimits)"],
    [{ plugins: [] }, "plugins: is not a known key (the keys are bundledRoot, enabled, licensed, config, isolation, workerLimits)"],
    [{ licensed: "notes" }, "licensed: Expected ReadonlyArray<string>, actual \"notes\""],
    [{ config: { notes: 5 } }, "config.notes: Expected { readonly [x: string]: unknown }, actual 5"],
    [{ isolation: "thread" }, "isolation: Expected \"none\" | \"worker\" | \"process\", or an object of plugin names to one of them, actual \"thread\""],
    [{ isolation: { notes: 1 } }, "isolation.notes: Expected \"none\" | \"worker\" | \"process\", actual 1"]
  ])("%j is refused naming the file, the field and the rule", ([json, rule]) =>
    provideNode(Effect.gen(function*() {
      const { root } = yield* makeRoots
      const file = path.join(root, "plugins.json")
      fs.writeFileSync(file, JSON.stringify(json))
      const error = yield* Effect.flip(Settings.read(root))
      expect(error).toMatchObject({ _tag: "InvalidFile", reason: "LoaderSettings" })
      expect(error.message).toBe(`${file}: ${rule}`)
    })))

  it.scoped("a file with several faults names each at once, a line per fault", () =>
    provideNode(Effect.gen(function*() {
      const { root } = yield* makeRoots
      const file = path.join(root, "plugins.json")
      fs.writeFileSync(file, JSON.stringify({
        licenced: ["notes"],
        enabled: ["notes", 7],
        isolation: { notes: "thread" },
        workerLimits: { heapMb: 8, stackMb: 4 }
      }))
      const error = yield* Effect.flip(Settings.read(root))
      const keys = "the keys are bundledRoot, enabled, licensed, config, isolation, workerLimits"
      expect(error.message.split("\n")).toEqual([
        `${file}: licenced: is not a known key (did you mean "licensed"? ${keys})`,
        `${file}: enabled[1]: Expected string, actual 7`,
        `${file}: isolation.notes: Expected "none" | "worker" | "process", actual "thread"`,
        `${file}: workerLimits.stackMb: is not a known field`,
        `${file}: workerLimits.heapMb: Expected a number between 16 and 65536, actual 8`
      ])
      expect(error.faults).toHaveLength(5)
    })))

  it.scoped("a file with 30 faults lists 20 and counts the other 10", () =>
    provideNode(Effect.gen(function*() {
      const { root } = yield* makeRoots
      const file = path.join(root, "plugins.json")
      fs.writeFileSync(file, JSON.stringify({ enabled: Array.from({ length: 30 }, (_, i) => i) }))
      const lines = (yield* Effect.flip(Settings.read(root))).message.split("\n")
      expect(lines).toHaveLength(21)
      expect(lines[0]).toBe(`${file}: enabled[0]: Expected string, actual 0`)
      expect(lines[20]).toBe("… and 10 more faults")
    })))

  it.scoped("a FIFO, invalid JSON or a huge file in its place is a one-line refusal, never a hang", () =>
    provideNode(Effect.gen(function*() {
      const { root } = yield* makeRoots
      const file = path.join(root, "plugins.json")
      execFileSync("mkfifo", [file])
      expect((yield* Effect.flip(Settings.read(root))).message).toBe(`${file}: is a FIFO, not a regular file`)
      fs.rmSync(file)
      fs.writeFileSync(file, `{ "enabled": [\n${"\"x\",\n".repeat(10)}`)
      const invalid = (yield* Effect.flip(Settings.read(root))).message
      expect(invalid).toMatch(new RegExp(`^${file}: not valid JSON \\(`))
      expect(invalid).not.toContain("\n")
      fs.writeFileSync(file, " ".repeat(2 * 1024 * 1024))
      expect((yield* Effect.flip(Settings.read(root))).message).toBe(`${file}: is 2097152 bytes, over the 1048576-byte cap for a plugin settings file`)
    })))

  it.scoped("a UTF-8 byte-order mark is accepted", () =>
    provideNode(Effect.gen(function*() {
      const { root } = yield* makeRoots
      fs.writeFileSync(path.join(root, "plugins.json"), `\uFEFF${JSON.stringify({ licensed: ["notes"], config: { notes: { emoji: "☕️" } } })}`)
      expect(yield* Settings.read(root)).toEqual({ licensed: ["notes"], config: { notes: { emoji: "☕️" } }, exists: true })
    })))
})
