/**
 * The manifest Schema: one readable reason per violated rule, extra keys allowed, the folder
 * rules (name equals folder, entry lexically inside), and the published JSON Schema kept in step
 * with the Schema.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Manifest from "../../src/schema/Manifest.ts"

const valid = { name: "notes", version: "1.0.0", apiVersion: 1, description: "Notes", entry: "index.mjs" }

const issues = (json: unknown) => {
  const decoded = Manifest.decode(json)
  return "issues" in decoded ? decoded.issues.map((i) => `${i.field}: ${i.rule}`) : []
}

describe("Manifest", () => {
  it("accepts a valid manifest and keeps unknown extra keys", () => {
    const decoded = Manifest.decode({ ...valid, icon: "icon.svg", ui: { color: "blue" }, skills: [{ name: "s", extra: 1 }], provides: ["x"] })
    expect(decoded).toEqual({ manifest: { ...valid, icon: "icon.svg", ui: { color: "blue" }, skills: [{ name: "s", extra: 1 }], provides: ["x"] } })
  })

  it.each([
    [{ version: "1.0.0", apiVersion: 1, description: "Notes", entry: "index.mjs" }, ["name: is required"]],
    [{ ...valid, name: "has space" }, ["name: must start with a letter or digit and use only letters, digits, '.', '_' and '-'"]],
    [{ ...valid, version: "" }, ["version: must be a non-empty string"]],
    [{ ...valid, version: "1.0 beta" }, ["version: must not contain white space"]],
    [{ ...valid, apiVersion: 2 }, ["apiVersion: must be a supported API version (1), got 2"]],
    [{ ...valid, apiVersion: "1" }, ["apiVersion: Expected number, actual \"1\""]],
    [{ ...valid, description: " " }, ["description: must be a non-empty string"]],
    [{ ...valid, entry: "" }, ["entry: must be a non-empty relative path"]],
    [{ ...valid, entry: "/abs/index.mjs" }, ["entry: must be relative to the plugin folder, got the absolute path \"/abs/index.mjs\""]],
    [{ ...valid, entry: "C:/x/index.mjs" }, ["entry: must be relative to the plugin folder, got the absolute path \"C:/x/index.mjs\""]],
    [{ ...valid, skills: [{ title: "no name" }] }, ["skills[0].name: is required"]],
    [{ ...valid, provides: ["ok", ""] }, ["provides[1]: must be a non-empty name"]],
    [{ ...valid, version: "", apiVersion: 3 }, ["version: must be a non-empty string", "apiVersion: must be a supported API version (1), got 3"]],
    [[valid], [": must be a JSON object, got an array"]],
    ["text", [": must be a JSON object, got string"]],
    [null, [": must be a JSON object, got null"]]
  ])("refuses %j with one reason per violation", (json, expected) => {
    expect(issues(json)).toEqual(expected)
  })

  it("checks the folder rules lexically: name equals the folder, entry resolves inside it", () => {
    const m = (entry: string, name = "notes") => ({ ...valid, name, entry }) as Manifest.Manifest
    expect(Manifest.folderIssues(m("index.mjs"), "/plugins/notes")).toEqual([])
    expect(Manifest.folderIssues(m("lib/../index.mjs"), "/plugins/notes")).toEqual([])
    expect(Manifest.folderIssues(m("index.mjs", "other"), "/plugins/notes")).toEqual([
      { field: "name", rule: "must equal the folder name \"notes\", got \"other\"" }
    ])
    for (const escape of ["../index.mjs", "lib/../../notes-evil/index.mjs", ".", "lib/.."]) {
      expect(Manifest.folderIssues(m(escape), "/plugins/notes")).toEqual([
        { field: "entry", rule: `must stay inside the plugin folder, got ${JSON.stringify(escape)}` }
      ])
    }
    // A sibling folder sharing the prefix is outside: the check is folder + separator.
    expect(Manifest.entryInside("/plugins/notes", "../notes-evil/index.mjs")).toBe(false)
  })

  it("publishes the JSON Schema made from the Schema in city-plugin.schema.json", () => {
    const file = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../city-plugin.schema.json")
    expect(JSON.parse(fs.readFileSync(file, "utf8"))).toEqual(Manifest.jsonSchema())
    expect(Manifest.jsonSchema()).toMatchObject({ $defs: { CityPluginManifest: { required: ["name", "version", "apiVersion", "description", "entry"] } } })
  })
})
