/**
 * The JSON Schemas shipped in `schemas/` are generated from the Schemas (scripts/json-schemas.ts):
 * a committed file that differs from what `JSONSchema.make` gives now fails here (`npm run schemas`
 * rewrites them), and the example declaration names its JSON Schema and is valid for City.
 */
import { expect, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import { readFileSync } from "node:fs"
import { Declaration } from "../../src/schema/Declaration.ts"
import { jsonSchemas } from "../../scripts/json-schemas.ts"

it("every shipped JSON Schema is what its Schema generates", () => {
  expect(jsonSchemas.map((s) => s.file)).toContain("capability-declaration.schema.json")
  for (const { content, file } of jsonSchemas) {
    expect(readFileSync(new URL(`../../schemas/${file}`, import.meta.url), "utf8"), `schemas/${file} (npm run schemas)`).toBe(content)
  }
})

it("the capability declaration's JSON Schema carries the Schema's rules", () => {
  const json = JSON.parse(readFileSync(new URL("../../schemas/capability-declaration.schema.json", import.meta.url), "utf8"))
  expect(json.additionalProperties).toBe(false)
  expect(json.required).toEqual(["schema", "capability", "runtimes", "provision", "unprovision"])
  expect(json.properties.runtimes).toMatchObject({ minItems: 1, uniqueItems: true })
  expect(json.$defs.Name.pattern).toBe("^[a-z0-9][a-z0-9._-]{0,63}$")
})

it("the example declaration references the JSON Schema and decodes as a Declaration", () => {
  const demo = JSON.parse(readFileSync(new URL("../../examples/capability/demo.json", import.meta.url), "utf8"))
  expect(demo.$schema).toBe("../../schemas/capability-declaration.schema.json")
  const decoded = Schema.decodeUnknownSync(Declaration, { onExcessProperty: "error" })(demo)
  expect(decoded.capability).toBe("demo")
})
