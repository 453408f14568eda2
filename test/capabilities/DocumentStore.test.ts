import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { join } from "node:path"
import { InvalidPeerFile } from "../../src/schema/CapabilityErrors.ts"
import { isName } from "../../src/schema/Name.ts"
import * as DocumentStore from "../../src/services/capabilities/DocumentStore.ts"
import * as StateRoot from "../../src/services/capabilities/StateRoot.ts"

const Note = Schema.Struct({ name: Schema.String, size: Schema.Number })

const store = DocumentStore.make({
  dir: "notes",
  schema: Note,
  invalid: (file, field, rule) => new InvalidPeerFile({ file, field, rule }),
  key: { field: "name", of: (note) => note.name },
  isStem: isName,
  namingRule: "is not a note: expected <name>.json",
  check: (note) => note.size < 0 ? Option.some({ field: "size", rule: "must not be negative" }) : Option.none()
})

describe("DocumentStore", () => {
  it.scoped("writes atomically, reads back, and lists every invalid file beside the valid ones", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const root = yield* fs.makeTempDirectoryScoped()
      const notes = yield* store.pipe(Effect.provide(StateRoot.layer({ root })))
      expect(yield* notes.read("a")).toEqual(Option.none())
      yield* notes.write({ name: "a", size: 1 })
      expect(yield* notes.read("a")).toEqual(Option.some({ name: "a", size: 1 }))
      const dir = join(root, "notes")
      yield* fs.writeFileString(join(dir, "torn.json"), "{ torn")
      yield* fs.writeFileString(join(dir, "array.json"), "[]")
      yield* fs.writeFileString(join(dir, "stem.json"), JSON.stringify({ name: "other", size: 1 }))
      yield* fs.writeFileString(join(dir, "extra.json"), JSON.stringify({ name: "extra", size: 1, more: true }))
      yield* fs.writeFileString(join(dir, "neg.json"), JSON.stringify({ name: "neg", size: -1 }))
      yield* fs.writeFileString(join(dir, "README"), "hello")
      yield* fs.writeFileString(join(dir, "b.json.123.1.tmp"), "half")
      const scan = yield* notes.list
      expect(scan.valid).toEqual([{ name: "a", size: 1 }])
      expect(scan.invalid.map((e) => [e.file.slice(dir.length + 1), e.field, e.rule])).toEqual([
        ["README", "", "is not a note: expected <name>.json"],
        ["array.json", "", "must be a JSON object"],
        ["extra.json", "more", "is not a known field"],
        ["neg.json", "size", "must not be negative"],
        ["stem.json", "name", "must equal the file stem \"stem\", got \"other\""],
        ["torn.json", "", expect.stringContaining("not valid JSON")]
      ])
      yield* notes.remove("a")
      expect(yield* notes.read("a")).toEqual(Option.none())
    }).pipe(Effect.provide(NodeContext.layer)))
})
