/**
 * The manifest Schema in the reference loader's shape: what it takes (the string apiVersion,
 * provides as an object of name lists, configSchema arrays, the reference's other keys, unknown
 * keys), one readable reason per violated rule, config fields of the wrong shape refused, the
 * reference's rules between a field's keys as warnings of a manifest that loads, fields of unknown
 * types dropped with a warning, the folder rules, and the published JSON Schema kept in step.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Manifest from "../../src/schema/Manifest.ts"
import * as ManifestFolder from "../../src/services/loader/internal/manifestFolder.ts"

const valid = { name: "notes", version: "1.0.0", apiVersion: "1", description: "Notes", entry: "index.mjs" }

const issues = (json: unknown) => {
  const decoded = Manifest.decode(json)
  return "issues" in decoded ? decoded.issues.map((i) => `${i.field}: ${i.rule}`) : []
}

const field = (extra: Record<string, unknown>) => ({ key: "k", label: "K", type: "string", ...extra })

describe("Manifest", () => {
  it("accepts the reference's keys and keeps unknown ones (such as requires)", () => {
    const json = {
      ...valid,
      description: "",
      entry: "dist/index.js",
      requiresCore: "0.29.0",
      requiresControls: ["microsoftIdentity"],
      requiresSharedApi: 2,
      requires: { plugins: ["other"] },
      provides: { tools: ["Notes*", "NoteGet"], skills: ["notes"], platforms: [], httpRoutes: ["/hook"], mcpTools: [], extra: 1 },
      icons: { "Notes*": "📝", "NoteGet": "⚙️" },
      icon: "icon.svg",
      showOutput: ["NoteGet"],
      planSafe: ["NoteGet"],
      deferLoading: ["Notes*"],
      workspaceSafe: false,
      userGrantable: true,
      capabilities: { mutates: ["prompt", "turnContext", "workflow-dag"], reads: ["db"], network: true },
      web: { entry: "web/index.js", css: "web/index.css", requiresApiVersion: 1, nav: [{ label: "Poznámky", icon: "notebook" }] },
      configSchema: [
        { key: "section", label: "Základní nastavení", type: "section" },
        { key: "limit", label: "Limit", type: "number", min: 1, max: 100, step: 1, default: 20, display: { control: "slider" } },
        { key: "token", label: "Token 🔑", type: "secret", required: true },
        { key: "mode", label: "Mode", type: "enum", options: [{ value: "a", label: "A" }], default: "a" },
        { key: "tags", label: "Tags", type: "tokenList", default: ["x", "y"], browse: "directory" },
        { key: "on", label: "On", type: "boolean", default: false, someFutureKey: "kept" }
      ],
      userConfigSchema: [{ key: "login", label: "Login", type: "string" }],
      userConfigLabel: "Notes"
    }
    const decoded = Manifest.decode(json)
    expect(decoded).toEqual({ manifest: json, warnings: [] })
  })

  it.each([
    [{ version: "1.0.0", apiVersion: "1", description: "Notes", entry: "index.mjs" }, ["name: is missing"]],
    [{ ...valid, description: undefined }, ["description: Expected string, actual undefined"]],
    [{ ...valid, name: "has space" }, ["name: must start with a letter or digit and use only letters, digits, '.', '_' and '-'"]],
    [{ ...valid, version: "" }, ["version: must be a non-empty string"]],
    [{ ...valid, apiVersion: "2" }, ["apiVersion: unsupported plugin API version \"2\": this loader supports \"1\""]],
    [{ ...valid, apiVersion: 1 }, ["apiVersion: must be a string naming a supported plugin API version (\"1\"), got the number 1: write \"1\""]],
    [{ ...valid, entry: "" }, ["entry: must be a non-empty relative path"]],
    [{ ...valid, entry: "/abs/index.mjs" }, ["entry: must be relative to the plugin folder, got the absolute path \"/abs/index.mjs\""]],
    [{ ...valid, entry: "C:/x/index.mjs" }, ["entry: must be relative to the plugin folder, got the absolute path \"C:/x/index.mjs\""]],
    [{ ...valid, provides: ["tools"] }, ["provides: must be an object of name lists (such as { \"tools\": [...], \"skills\": [...] }), got an array"]],
    [{ ...valid, provides: { tools: "a" } }, ["provides.tools: Expected ReadonlyArray<string>, actual \"a\""]],
    [{ ...valid, requiresCore: ">=1.0" }, ["requiresCore: must be a dotted version such as \"0.29.0\""]],
    [{ ...valid, capabilities: { mutates: ["everything"] } }, [
      "capabilities.mutates[0]: must be one of \"prompt\", \"turnContext\", \"tools\", \"memory\", \"events\", \"workflow-dag\", \"users\", got \"everything\""
    ]],
    [{ ...valid, web: { css: "a.css" } }, ["web.entry: is missing"]],
    [{ ...valid, web: { entry: "w.js", requiresApiVersion: 1.5 } }, ["web.requiresApiVersion: Expected an integer, actual 1.5"]],
    [{ ...valid, icons: { a: 1 } }, ["icons.a: Expected string, actual 1"]],
    [{ ...valid, skills: [{ title: "no name" }] }, ["skills[0].name: is missing"]],
    [{ ...valid, version: "", apiVersion: "3" }, ["version: must be a non-empty string", "apiVersion: unsupported plugin API version \"3\": this loader supports \"1\""]],
    [[valid], [": must be a JSON object, got an array"]],
    ["text", [": must be a JSON object, got string text"]],
    [null, [": must be a JSON object, got null"]]
  ])("refuses %j with one reason per violation", (json, expected) => {
    expect(issues(json)).toEqual(expected)
  })

  it.each([
    [field({ label: "" }), "configSchema[0].label: must be a non-empty string"],
    [field({ key: "" }), "configSchema[0].key: must be a non-empty string"],
    [field({ risk: "extreme" }), "configSchema[0].risk: must be one of \"low\", \"medium\", \"high\", got \"extreme\""],
    [field({ type: "number", step: "5" }), "configSchema[0].step: Expected number, actual \"5\""],
    [field({ visibleWhen: { key: "mode" } }), "configSchema[0].visibleWhen.equals: is missing"]
  ])("refuses the config field of the wrong shape %j", (bad, expected) => {
    expect(issues({ ...valid, configSchema: [bad] })).toEqual([expected])
  })

  /** The manifest loads as written, with exactly this one warning. */
  const warnsOnly = (json: Record<string, unknown>, expected: ReadonlyArray<string>) =>
    expect(Manifest.decode(json)).toEqual({ manifest: json, warnings: expected.map((w) => `${w} (loaded anyway: the reference does not check this)`) })

  it.each([
    [field({ type: "number", min: 5, max: 1 }), "configSchema[0].min: must be less than or equal to max"],
    [field({ type: "number", min: -Infinity }), "configSchema[0].min: must be finite"],
    [field({ type: "number", max: NaN }), "configSchema[0].max: must be finite"],
    [field({ type: "number", step: 0 }), "configSchema[0].step: must be finite and greater than 0"],
    [field({ type: "number", min: 0, step: 5, default: 7 }), "configSchema[0].default: must align to step 5 from 0"],
    [field({ type: "number", default: "7" }), "configSchema[0].default: must be a finite number"],
    [field({ type: "number", min: 1, default: 0 }), "configSchema[0].default: must be at least min 1"],
    [field({ type: "number", max: 10, default: 11 }), "configSchema[0].default: must be at most max 10"],
    [field({ type: "number", display: { control: "slider" } }), "configSchema[0].display.control: slider requires min, max and step"],
    [field({ type: "number", min: 3, max: 3, step: 1, display: { control: "slider" } }), "configSchema[0].display.control: slider requires min to be less than max"],
    [field({ type: "number", min: 0, max: 10, step: 3, display: { control: "slider" } }), "configSchema[0].max: must be reachable from min 0 by step 3"],
    [field({ display: { control: "slider" } }), "configSchema[0].display.control: slider requires a number field"],
    [field({ display: { divisor: 0 } }), "configSchema[0].display.divisor: must be finite and greater than 0"],
    [field({ browse: "directory" }), "configSchema[0].browse: is only valid for tokenList fields"],
    [field({ default: ["a"] }), "configSchema[0].default: may be an array only for tokenList fields"],
    [field({ type: "tokenList", default: ["a", "a"] }), "configSchema[0].default: has the item \"a\" twice"],
    [field({ type: "tokenList", default: "a" }), "configSchema[0].default: must be an array of strings"],
    [field({ type: "timezone", default: "Mars/Olympus" }), "configSchema[0].default: is not a known IANA time zone: \"Mars/Olympus\""],
    [field({ type: "timezone", default: " Europe/Prague" }), "configSchema[0].default: must be trimmed"],
    [field({ type: "timezone", default: 1 }), "configSchema[0].default: must be a string for a timezone field"]
  ])("loads the config field %j with the warning of the rule it breaks", (odd, expected) => {
    warnsOnly({ ...valid, configSchema: [odd] }, [expected])
  })

  it("browse in userConfigSchema is a warning there only", () => {
    const tokens = field({ type: "tokenList", browse: "directory" })
    warnsOnly({ ...valid, configSchema: [tokens] }, [])
    warnsOnly({ ...valid, userConfigSchema: [tokens] }, ["userConfigSchema[0].browse: is not allowed in userConfigSchema"])
  })

  it("loads the number fields real manifests carry, warning of each one off its step or with a max its slider cannot reach", () => {
    const number = (key: string, extra: Record<string, unknown>) => ({ key, label: key, type: "number", ...extra })
    const configSchema = [
      { key: "sec_index", label: "Indexing", type: "section" },
      number("onStep", { min: 1000, max: 5000000, step: 1000, default: 300000 }),
      number("noDefault", { min: 0, step: 30000, placeholder: "host default" }),
      number("offStep", { min: 1000, max: 5000000, step: 50000, default: 120000 }),
      number("stepNoMin", { step: 30000, default: 90000 }),
      number("stepNoMinOff", { step: 30000, max: 600000, default: 45000 }),
      number("tenths", { min: 0, max: 1, step: 0.1, default: 0.3 }),
      number("twentieths", { min: 0, max: 1, step: 0.05, default: 0.3 }),
      number("fromATenth", { min: 0.1, max: 0.9, step: 0.1, default: 0.7 }),
      number("tenthsOff", { min: 0, max: 1, step: 0.1, default: 0.25 }),
      number("minutes", { min: 1, max: 1440, step: 5, default: 16, display: { control: "slider", unit: "min" } })
    ]
    warnsOnly({ ...valid, configSchema }, [
      "configSchema[3].default: must align to step 50000 from 1000",
      "configSchema[5].default: must align to step 30000 from 0",
      "configSchema[9].default: must align to step 0.1 from 0",
      "configSchema[10].max: must be reachable from min 1 by step 5"
    ])
  })

  it("drops a config field of a type this build does not know, with one warning naming it, and keeps the others", () => {
    const decoded = Manifest.decode({ ...valid, configSchema: [field({ key: "a" }), field({ key: "fancy", type: "colorWheel" })] })
    expect(decoded).toEqual({
      manifest: { ...valid, configSchema: [field({ key: "a" })] },
      warnings: ["configSchema: ignoring the field \"fancy\": unknown type \"colorWheel\" (needs a newer core)"]
    })
  })

  it("names a config field by its index in the file, the dropped fields of unknown types counted", () => {
    const wheel = field({ key: "wheel", type: "colorWheel" })
    expect(issues({ ...valid, configSchema: [wheel, field({ key: "a" }), wheel, field({ label: "" })] })).toEqual([
      "configSchema[3].label: must be a non-empty string"
    ])
    const offStep = field({ type: "number", step: 5, default: 3 })
    expect(Manifest.decode({ ...valid, configSchema: [wheel, offStep], userConfigSchema: [wheel, wheel, offStep] })).toEqual({
      manifest: { ...valid, configSchema: [offStep], userConfigSchema: [offStep] },
      warnings: [
        "configSchema: ignoring the field \"wheel\": unknown type \"colorWheel\" (needs a newer core)",
        "userConfigSchema: ignoring the field \"wheel\": unknown type \"colorWheel\" (needs a newer core)",
        "userConfigSchema: ignoring the field \"wheel\": unknown type \"colorWheel\" (needs a newer core)",
        "configSchema[1].default: must align to step 5 from 0 (loaded anyway: the reference does not check this)",
        "userConfigSchema[2].default: must align to step 5 from 0 (loaded anyway: the reference does not check this)"
      ]
    })
  })

  it("checks the folder rules lexically: name equals the folder, entry and web files resolve inside it", () => {
    const m = (entry: string, name = "notes", web?: Record<string, unknown>) => ({ ...valid, name, entry, ...(web ? { web } : {}) }) as unknown as Manifest.Manifest
    expect(ManifestFolder.folderIssues(m("index.mjs"), "/plugins/notes")).toEqual([])
    expect(ManifestFolder.folderIssues(m("lib/../index.mjs"), "/plugins/notes")).toEqual([])
    expect(ManifestFolder.folderIssues(m("index.mjs", "other"), "/plugins/notes")).toEqual([
      { field: "name", rule: "must equal the folder name \"notes\", got \"other\"" }
    ])
    for (const escape of ["../index.mjs", "lib/../../notes-evil/index.mjs", ".", "lib/.."]) {
      expect(ManifestFolder.folderIssues(m(escape), "/plugins/notes")).toEqual([
        { field: "entry", rule: `must stay inside the plugin folder, got ${JSON.stringify(escape)}` }
      ])
    }
    expect(ManifestFolder.folderIssues(m("index.mjs", "notes", { entry: "../web.js", css: "../../a.css" }), "/plugins/notes")).toEqual([
      { field: "web.entry", rule: "must stay inside the plugin folder, got \"../web.js\"" },
      { field: "web.css", rule: "must stay inside the plugin folder, got \"../../a.css\"" }
    ])
    // A sibling folder sharing the prefix is outside: the check is folder + separator.
    expect(ManifestFolder.entryInside("/plugins/notes", "../notes-evil/index.mjs")).toBe(false)
  })

  it("publishes the JSON Schema made from the Schema in city-plugin.schema.json", () => {
    const file = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../city-plugin.schema.json")
    expect(JSON.parse(fs.readFileSync(file, "utf8"))).toEqual(Manifest.jsonSchema())
    const root = Manifest.jsonSchema() as { $defs: Record<string, { required?: ReadonlyArray<string>; properties?: Record<string, unknown> }> }
    expect(root.$defs["CityPluginManifest"]?.required).toEqual(["name", "version", "apiVersion", "description", "entry"])
    expect(root.$defs["CityPluginManifest"]?.properties?.["apiVersion"]).toMatchObject({ type: "string", enum: ["1"] })
  })
})
