/**
 * The JSON Schemas shipped in `schemas/`, generated from the Schemas that decode the same files
 * (`JSONSchema.make`), so an editor's completion and our validation cannot disagree on a field.
 * `npm run schemas` writes them; test/repository/JsonSchemas.test.ts fails when a committed file differs
 * from what the Schema generates now.
 */
import * as JSONSchema from "effect/JSONSchema"
import { Declaration } from "../src/schema/Declaration.ts"
import { StatusDocument } from "../src/schema/StatusDocument.ts"

/** Each shipped JSON Schema: its file under `schemas/` and its content. */
export const jsonSchemas: ReadonlyArray<{ readonly file: string; readonly content: string }> = [
  {
    file: "capability-declaration.schema.json",
    content: JSON.stringify(
      {
        ...JSONSchema.make(Declaration),
        title: "effect-city capability declaration",
        description: "A capability declaration, as `city capability register <file>` reads it (docs/capability-plugin-lifecycle.md, \"Declaration\")."
      },
      null,
      2
    ) + "\n"
  },
  {
    file: "status.schema.json",
    content: JSON.stringify(
      {
        ...JSONSchema.make(StatusDocument),
        title: "effect-city status document",
        description: "What `GET /api/status` of `city daemon --http` serves (docs/status-page.md)."
      },
      null,
      2
    ) + "\n"
  }
]
