/**
 * `npm run schemas`: writes `schemas/*.schema.json` from their Schemas (scripts/json-schemas.ts),
 * and the plugin manifest's `city-plugin.schema.json` at the package root (`Manifest.jsonSchema`).
 */
import { writeFileSync } from "node:fs"
import * as Manifest from "../src/schema/Manifest.ts"
import { jsonSchemas } from "./json-schemas.ts"

for (const { content, file } of jsonSchemas) {
  writeFileSync(new URL(`../schemas/${file}`, import.meta.url), content)
  console.log(`schemas/${file}`)
}
writeFileSync(new URL("../city-plugin.schema.json", import.meta.url), `${JSON.stringify(Manifest.jsonSchema(), null, 2)}\n`)
console.log("city-plugin.schema.json")
