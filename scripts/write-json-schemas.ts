/** `npm run schemas`: writes `schemas/*.schema.json` from their Schemas (scripts/json-schemas.ts). */
import { writeFileSync } from "node:fs"
import { jsonSchemas } from "./json-schemas.ts"

for (const { content, file } of jsonSchemas) {
  writeFileSync(new URL(`../schemas/${file}`, import.meta.url), content)
  console.log(`schemas/${file}`)
}
