/**
 * Discovery: code-unit order, manifest-less folders and plain files passed over, a missing root
 * is empty, an unreadable root fails, the reused validation never goes stale, and a config field
 * the reference accepts unchecked (a default off its step) is a warning of a valid folder.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { discover, discoverRoot } from "../../../src/services/loader/Discovery.ts"
import { provideNode } from "../../fixtures.ts"
import { makeRoots, manifest, writePlugin } from "../../loaderFixtures.ts"

describe("Discovery", () => {
  it.scoped("lists plugin folders in code-unit order and passes over folders without a manifest and plain files", () =>
    provideNode(Effect.gen(function*() {
      const { instance } = yield* makeRoots
      for (const name of ["zz", "Zz", "a.b", "a-b", "ä"]) writePlugin(instance, name, { manifest: manifest(name === "ä" ? "ae" : name) })
      writePlugin(instance, "no-manifest", { manifest: null, files: { "index.mjs": "" } })
      fs.writeFileSync(path.join(instance, "notes.txt"), "not a folder")
      const found = yield* discoverRoot({ kind: "instance", path: instance })
      expect(found.map((d) => d.name)).toEqual(["Zz", "a-b", "a.b", "zz", "ä"])
      expect(found.map((d) => d._tag)).toEqual(["Valid", "Valid", "Valid", "Valid", "Invalid"])
    })))

  it.scoped("a root that does not exist is empty; one that cannot be listed fails with PluginRootUnreadable", () =>
    provideNode(Effect.gen(function*() {
      const { root } = yield* makeRoots
      expect(yield* discover([{ kind: "bundled", path: path.join(root, "absent") }])).toEqual([])
      const file = path.join(root, "a-file")
      fs.writeFileSync(file, "")
      const error = yield* Effect.flip(discover([{ kind: "bundled", path: file }]))
      expect(error).toMatchObject({ _tag: "PluginLoadError", reason: "PluginRootUnreadable" })
      expect(error.message).toMatch(new RegExp(`^plugin root ${file} cannot be read: .*ENOTDIR`))
    })))

  it.scoped("a manifest changed on disk is validated again: the reused validation is keyed by the text", () =>
    provideNode(Effect.gen(function*() {
      const { instance } = yield* makeRoots
      writePlugin(instance, "notes", { manifest: manifest("notes") })
      const root = { kind: "instance" as const, path: instance }
      expect((yield* discoverRoot(root)).map((d) => d._tag)).toEqual(["Valid"])
      writePlugin(instance, "notes", { manifest: manifest("notes", { apiVersion: "5" }) })
      const again = yield* discoverRoot(root)
      expect(again.map((d) => d._tag)).toEqual(["Invalid"])
      writePlugin(instance, "notes", { manifest: manifest("notes", { version: "1.0.1" }) })
      const third = yield* discoverRoot(root)
      expect(third.map((d) => (d._tag === "Valid" ? d.manifest.version : "invalid"))).toEqual(["1.0.1"])
    })))

  it.scoped("an edit of the same size whose modification time reads the same (the kernel's coarse clock) is seen", () =>
    provideNode(Effect.gen(function*() {
      const { instance } = yield* makeRoots
      writePlugin(instance, "notes", { manifest: manifest("notes", { version: "1.0.0" }) })
      const file = path.join(instance, "notes", "city-plugin.json")
      const root = { kind: "instance" as const, path: instance }
      const before = fs.statSync(file)
      expect((yield* discoverRoot(root)).map((d) => (d._tag === "Valid" ? d.manifest.version : "invalid"))).toEqual(["1.0.0"])
      writePlugin(instance, "notes", { manifest: manifest("notes", { version: "1.0.9" }) })
      fs.utimesSync(file, before.atime, before.mtime)
      expect(fs.statSync(file).size).toBe(before.size)
      expect((yield* discoverRoot(root)).map((d) => (d._tag === "Valid" ? d.manifest.version : "invalid"))).toEqual(["1.0.9"])
    })))

  it.scoped("manifests off the fast path are decided by the Schema and the folder rules, with every reason", () =>
    provideNode(Effect.gen(function*() {
      const { instance } = yield* makeRoots
      // Valid, but not a plain entry (`..` inside the folder): the full check accepts it.
      writePlugin(instance, "a-dotted", { manifest: manifest("a-dotted", { entry: "lib/../index.mjs" }) })
      writePlugin(instance, "b-mismatch", { manifest: manifest("other", { entry: "../x.mjs" }) })
      writePlugin(instance, "c-rules", { manifest: manifest("c-rules", { version: "", apiVersion: "2", skills: [{}] }) })
      const found = yield* discoverRoot({ kind: "instance", path: instance })
      const file = (name: string) => path.join(instance, name, "city-plugin.json")
      expect(found.map((d) => (d._tag === "Valid" ? "valid" : d.error.message))).toEqual([
        "valid",
        // A line per fault, each naming the file.
        `${file("b-mismatch")}: name: must equal the folder name "b-mismatch", got "other"\n` +
        `${file("b-mismatch")}: entry: must stay inside the plugin folder, got "../x.mjs"`,
        `${file("c-rules")}: version: must be a non-empty string\n` +
        `${file("c-rules")}: apiVersion: unsupported plugin API version \"2\": this loader supports \"1\"\n` +
        `${file("c-rules")}: skills[0].name: is missing`
      ])
    })))

  it.scoped("a config field off its step, or a slider whose max its step cannot reach, leaves the folder valid, with one warning per rule", () =>
    provideNode(Effect.gen(function*() {
      const { instance } = yield* makeRoots
      writePlugin(instance, "sizes", {
        manifest: manifest("sizes", {
          configSchema: [
            { key: "sec", label: "Sizes", type: "section" },
            { key: "fine", label: "Fine", type: "number", min: 0, max: 1, step: 0.1, default: 0.3 },
            { key: "bytes", label: "Bytes", type: "number", min: 1000, max: 5000000, step: 50000, default: 120000 },
            { key: "every", label: "Every", type: "number", min: 1, max: 1440, step: 5, default: 15, display: { control: "slider" } }
          ],
          userConfigSchema: [{ key: "repos", label: "Repos", type: "tokenList", browse: "directory" }]
        })
      })
      const found = yield* discoverRoot({ kind: "instance", path: instance })
      expect(found.map((d) => (d._tag === "Valid" ? d.warnings : d.error.message))).toEqual([[
        "configSchema[2].default: must align to step 50000 from 1000",
        "configSchema[3].default: must align to step 5 from 1",
        "configSchema[3].max: must be reachable from min 1 by step 5",
        "userConfigSchema[0].browse: is not allowed in userConfigSchema"
      ].map((w) => `${w} (loaded anyway: the reference does not check this)`)])
    })))
})
