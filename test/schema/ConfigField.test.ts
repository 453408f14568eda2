/**
 * A plugin's stored settings decoded against its `configSchema` (docs/plugin-loader.md,
 * "Configuration"): defaults applied, a wrong-typed value refused naming the key and the rule,
 * required fields without value or default reported unset, undeclared keys kept with a warning, a
 * default that does not fit its field passed on as written; and the reference's rules between a
 * field's keys as warnings, one line each.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import { ConfigSchema, decodeSettings, dropUnknownTypes, fieldWarnings, UserConfigSchema } from "../../src/schema/ConfigField.ts"

const fields = Schema.decodeUnknownSync(ConfigSchema)([
  { key: "basics", label: "Základní", type: "section" },
  { key: "token", label: "Token", type: "secret", required: true },
  { key: "limit", label: "Limit", type: "number", min: 1, max: 50, default: 20 },
  { key: "mode", label: "Mode", type: "enum", options: [{ value: "fast", label: "⚡️" }, { value: "slow", label: "🐢" }], default: "fast" },
  { key: "tags", label: "Tags", type: "tokenList", default: ["a"] },
  { key: "picked", label: "Picked", type: "multiSelect", options: [{ value: "x", label: "X" }] },
  { key: "raw", label: "Raw", type: "json" },
  { key: "on", label: "On", type: "boolean" }
])

describe("decodeSettings", () => {
  it("applies the defaults, keeps stored values, reports unset required keys", () => {
    expect(decodeSettings(fields, { mode: "slow", raw: { any: ["json", 1] } })).toEqual({
      values: { mode: "slow", raw: { any: ["json", 1] }, limit: 20, tags: ["a"] },
      unset: ["token"],
      warnings: []
    })
  })

  it("keeps an undeclared key, with a warning; a plugin without configSchema gets its values as they are", () => {
    expect(decodeSettings(fields, { token: "t", extra: 1 })).toMatchObject({
      warnings: ["config key \"extra\" is declared by no field of configSchema (kept)"]
    })
    expect(decodeSettings(undefined, { anything: true })).toEqual({ values: { anything: true }, unset: [], warnings: [] })
  })

  it.each([
    [{ limit: "7" }, "limit", "must be a finite number, got string"],
    [{ limit: 0 }, "limit", "must be at least 1, got 0"],
    [{ limit: 99 }, "limit", "must be at most 50, got 99"],
    [{ mode: "turbo" }, "mode", "must be one of \"fast\", \"slow\", got \"turbo\""],
    [{ token: 5 }, "token", "must be a string (a secret field), got number"],
    [{ tags: ["a", "a"] }, "tags", "has the item \"a\" twice"],
    [{ tags: [" a"] }, "tags", "item 1 must be trimmed"],
    [{ picked: ["y"] }, "picked", "must hold only \"x\", got \"y\""],
    [{ on: "yes" }, "on", "must be true or false, got string"],
    [{ basics: 1 }, "basics", "is a section, which carries no value"]
  ])("refuses %j at %s: %s", (stored, key, rule) => {
    expect(decodeSettings(fields, stored)).toEqual({ key, rule })
  })

  it("passes a default that does not fit its field on as written (the load report warned of it); a stored value is still checked", () => {
    const odd = Schema.decodeUnknownSync(ConfigSchema)([
      { key: "limit", label: "Limit", type: "number", min: 1, max: 10, step: 2, default: "7" },
      { key: "size", label: "Size", type: "number", min: 1000, step: 50000, default: 120000 },
      { key: "far", label: "Far", type: "number", max: 10, default: 99 },
      { key: "zone", label: "Zone", type: "timezone", default: "Mars/Olympus" },
      { key: "tags", label: "Tags", type: "tokenList", default: ["a", "a"] },
      { key: "name", label: "Name", type: "string", default: ["x"] }
    ])
    expect(decodeSettings(odd, undefined)).toEqual({
      values: { limit: "7", size: 120000, far: 99, zone: "Mars/Olympus", tags: ["a", "a"], name: ["x"] },
      unset: [],
      warnings: []
    })
    expect(decodeSettings(odd, { limit: "7" })).toEqual({ key: "limit", rule: "must be a finite number, got string" })
    expect(decodeSettings(odd, { far: 99 })).toEqual({ key: "far", rule: "must be at most 10, got 99" })
  })
})

describe("fieldWarnings", () => {
  const anyway = "(loaded anyway: the reference does not check this)"

  it("names each rule a field breaks, one line each, by the schema's key, the field's index and the key", () => {
    const odd = Schema.decodeUnknownSync(UserConfigSchema)([
      { key: "ok", label: "OK", type: "number", min: 0, max: 1, step: 0.1, default: 0.3 },
      { key: "both", label: "Both", type: "number", min: 5, max: 1, default: 7, display: { control: "slider" } },
      { key: "dir", label: "Dir", type: "string", browse: "directory" }
    ])
    expect(fieldWarnings(odd, "userConfigSchema", true)).toEqual([
      `userConfigSchema[1].min: must be less than or equal to max ${anyway}`,
      `userConfigSchema[1].default: must be at most max 1 ${anyway}`,
      `userConfigSchema[1].display.control: slider requires min, max and step ${anyway}`,
      `userConfigSchema[2].browse: is only valid for tokenList fields ${anyway}`,
      `userConfigSchema[2].browse: is not allowed in userConfigSchema ${anyway}`
    ])
    expect(fieldWarnings(odd, "configSchema", false)).toHaveLength(4)
    expect(fieldWarnings(fields, "configSchema", false)).toEqual([])
  })
})

describe("dropUnknownTypes", () => {
  it("drops the fields of a type this build does not know, one warning each, and leaves the rest alone, saying where each kept one was", () => {
    expect(dropUnknownTypes([{ key: "b", type: "hologram" }, { key: "a", type: "string" }, 7, { key: "c" }], "configSchema")).toEqual({
      fields: [{ key: "a", type: "string" }, 7, { key: "c" }],
      warnings: ["configSchema: ignoring the field \"b\": unknown type \"hologram\" (needs a newer core)"],
      positions: [1, 2, 3]
    })
    expect(dropUnknownTypes("not an array", "configSchema")).toEqual({ fields: "not an array", warnings: [], positions: [] })
  })
})
