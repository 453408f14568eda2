import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { join } from "node:path"
import * as Faults from "../../../src/schema/Faults.ts"
import { InvalidFile } from "../../../src/schema/FileErrors.ts"
import { isName } from "../../../src/schema/Name.ts"
import { EndpointRecords } from "../../../src/schema/Outcome.ts"
import * as DocumentStore from "../../../src/services/capabilities/DocumentStore.ts"
import * as Peers from "../../../src/services/capabilities/internal/peers.ts"
import * as StateRoot from "../../../src/services/root/StateRoot.ts"

const Note = Schema.Struct({ name: Schema.String, size: Schema.Number })

const store = DocumentStore.make({
  dir: "notes",
  schema: Note,
  invalid: (file, faults) => new InvalidFile({ reason: "PeerFile", file, ...faults }),
  key: { field: "name", of: (note) => note.name },
  isStem: isName,
  namingRule: "is not a note: expected <name>.json",
  checks: [
    Faults.check(Schema.Struct({ size: Schema.Number }), ({ size }) => size < 0 ? [{ field: "size", rule: "must not be negative" }] : [])
  ]
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

/** The file system of the test, with every `open` counted by path (a read opens; a stat does not). */
const countingOpens = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const opened: Array<string> = []
  const counting = FileSystem.FileSystem.of({
    ...fs,
    open: (path, options) => Effect.zipRight(Effect.sync(() => opened.push(path)), fs.open(path, options))
  })
  return { fs, opened, counting }
})

const noteName = (i: number) => `n${String(i).padStart(5, "0")}`

/** `count` valid notes written directly into `<root>/notes`. */
const writeNotes = (fs: FileSystem.FileSystem, root: string, count: number) =>
  Effect.zipRight(
    fs.makeDirectory(join(root, "notes")),
    Effect.forEach(
      Array.from({ length: count }, (_, i) => i),
      (i) => fs.writeFileString(join(root, "notes", `${noteName(i)}.json`), JSON.stringify({ name: noteName(i), size: i })),
      { concurrency: 16, discard: true }
    )
  )

describe("DocumentStore memory", () => {
  it.scoped("an unchanged file is not read again; one changed in size, mtime or inode is decoded again", () =>
    Effect.gen(function*() {
      const { counting, fs, opened } = yield* countingOpens
      const root = yield* fs.makeTempDirectoryScoped()
      const notes = yield* store.pipe(Effect.provide(StateRoot.layer({ root })), Effect.provideService(FileSystem.FileSystem, counting))
      const dir = join(root, "notes")
      const file = (name: string) => join(dir, `${name}.json`)
      yield* notes.write({ name: "a", size: 1 })
      yield* notes.write({ name: "b", size: 2 })
      yield* fs.writeFileString(file("bad"), "{ torn")
      const reads = (run: Effect.Effect<unknown, unknown>) =>
        Effect.gen(function*() {
          opened.length = 0
          yield* run
          return opened.filter((p) => p.startsWith(dir) && !p.endsWith(".tmp")).map((p) => p.slice(dir.length + 1)).sort()
        })

      // What the store wrote itself it remembers (with the stat the write left): only the file
      // written by someone else is read.
      expect(yield* reads(notes.list)).toEqual(["bad.json"])
      expect(yield* reads(notes.list)).toEqual([]) // nothing changed: no file opened
      expect(yield* reads(notes.read("a"))).toEqual([])

      // In place, another size (same inode).
      yield* fs.writeFileString(file("b"), JSON.stringify({ name: "b", size: 20 }))
      // In place, the same size, another mtime.
      const before = yield* fs.stat(file("a"))
      yield* fs.writeFileString(file("a"), JSON.stringify({ name: "a", size: 7 }, null, 2) + "\n")
      yield* fs.utimes(file("a"), new Date(0), new Date(1_000_000))
      expect((yield* fs.stat(file("a"))).size).toBe(before.size)
      expect(yield* reads(notes.list)).toEqual(["a.json", "b.json"])
      expect((yield* notes.list).valid).toEqual([{ name: "a", size: 7 }, { name: "b", size: 20 }])

      // Replaced by a rename: the same size and mtime, a new inode.
      const tmp = join(root, "elsewhere.json")
      yield* fs.writeFileString(tmp, JSON.stringify({ name: "a", size: 8 }, null, 2) + "\n")
      yield* fs.utimes(tmp, new Date(0), new Date(1_000_000))
      yield* fs.rename(tmp, file("a"))
      expect(yield* reads(notes.read("a"))).toEqual(["a.json"])
      expect(yield* notes.read("a")).toEqual(Option.some({ name: "a", size: 8 }))

      // A refused file stays refused while unchanged, and is decoded again once fixed.
      expect((yield* notes.list).invalid.map((e) => e.file)).toEqual([file("bad")])
      yield* fs.writeFileString(file("bad"), JSON.stringify({ name: "bad", size: 3 }))
      expect((yield* notes.list).valid).toContainEqual({ name: "bad", size: 3 })

      // The store's own writes and removals are never answered from memory.
      yield* notes.write({ name: "b", size: 21 })
      expect(yield* notes.read("b")).toEqual(Option.some({ name: "b", size: 21 }))
      yield* notes.remove("b")
      expect(yield* notes.read("b")).toEqual(Option.none())
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a folder larger than rememberedDocuments is remembered whole: a second list opens no file", () =>
    Effect.gen(function*() {
      const { counting, fs, opened } = yield* countingOpens
      const root = yield* fs.makeTempDirectoryScoped()
      const notes = yield* store.pipe(Effect.provide(StateRoot.layer({ root })), Effect.provideService(FileSystem.FileSystem, counting))
      const count = DocumentStore.rememberedDocuments + 100
      yield* writeNotes(fs, root, count)
      expect((yield* notes.list).valid).toHaveLength(count)
      opened.length = 0
      expect((yield* notes.list).valid).toHaveLength(count)
      expect(opened).toEqual([])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("memory is bounded: past rememberedDocuments documents read one by one, the oldest is read again", () =>
    Effect.gen(function*() {
      const { counting, fs, opened } = yield* countingOpens
      const root = yield* fs.makeTempDirectoryScoped()
      const notes = yield* store.pipe(Effect.provide(StateRoot.layer({ root })), Effect.provideService(FileSystem.FileSystem, counting))
      const count = DocumentStore.rememberedDocuments + 1
      yield* writeNotes(fs, root, count)
      // No list: the bound is rememberedDocuments, whatever the folder holds.
      yield* Effect.forEach(Array.from({ length: count }, (_, i) => i), (i) => notes.read(noteName(i)), { discard: true })
      opened.length = 0
      yield* notes.read(noteName(count - 1)) // the newest is remembered
      expect(opened).toEqual([])
      yield* notes.read(noteName(0)) // the oldest was forgotten when the last one came in
      expect(opened).toEqual([join(root, "notes", `${noteName(0)}.json`)])
    }).pipe(Effect.provide(NodeContext.layer)))
})

/**
 * The Schemas are the only judges of the documents a sweep reads by the hundred: each accepts what
 * it must and refuses what it must, with the field and the rule, odd JSON included (a `__proto__`
 * key, a JSON array or null, numbers where names go, names one character too long).
 */
describe("document Schemas", () => {
  const peer = (fields: Record<string, unknown>) =>
    JSON.stringify({ schema: 1, personality: "ann", cwd: "/work/ann", runtimes: ["claude"], default_runtime: "claude", ...fields })
  const decodePeer = (text: string) => Effect.either(Peers.validate("/r/peers/ann.json", "ann", text))
  const long = "a".repeat(64)

  it.effect.each([
    ["the plain peer", peer({})],
    ["several runtimes, the default among them", peer({ runtimes: ["codex", "claude", "x-y", "a.b_c"], default_runtime: "x-y" })],
    ["a 64-character runtime name", peer({ runtimes: [long], default_runtime: long })],
    ["a cwd with spaces and dots", peer({ cwd: "/work/my project/./x" })],
    ["keys in another order", `{"default_runtime":"claude","runtimes":["claude"],"cwd":"/w","personality":"ann","schema":1}`]
  ] as const)("Peer accepts %s", ([, text]) =>
    Effect.map(decodePeer(text), (result) => expect(result._tag).toBe("Right")))

  it.effect.each([
    ["a __proto__ key", peer({}).replace("{", `{"__proto__":{},`), "__proto__", "is not a known field"],
    ["an extra key", peer({ extra: true }), "extra", "is not a known field"],
    ["schema 2", peer({ schema: 2 }), "schema", "must be 1"],
    ["schema \"1\"", peer({ schema: "1" }), "schema", "must be 1"],
    ["an upper-case personality", peer({ personality: "Ann" }), "personality", "must be 1-64 characters"],
    ["a name of 65 characters", peer({ runtimes: [`${long}a`], default_runtime: `${long}a` }), "runtimes[0]", "must be 1-64 characters"],
    ["a name with a leading dot", peer({ personality: ".ann" }), "personality", "must be 1-64 characters"],
    ["a number for a name", peer({ default_runtime: 1 }), "default_runtime", "string"],
    ["a relative cwd", peer({ cwd: "work" }), "cwd", "must be an absolute path"],
    ["a cwd starting with ~", peer({ cwd: "~/work" }), "cwd", "must be an absolute path"],
    ["no runtimes", peer({ runtimes: [] }), "runtimes", "must be a non-empty list"],
    ["a repeated runtime", peer({ runtimes: ["claude", "claude"] }), "runtimes", "must not list a runtime twice"],
    ["runtimes as a string", peer({ runtimes: "claude" }), "runtimes", "Expected ReadonlyArray<Name>"],
    ["a default outside the runtimes", peer({ runtimes: ["codex"] }), "default_runtime", "must be one of the peer's runtimes"],
    ["a missing cwd", JSON.stringify({ schema: 1, personality: "ann", runtimes: ["claude"], default_runtime: "claude" }), "cwd", "is missing"],
    ["a personality that is not the stem", peer({ personality: "bob" }), "personality", "must equal the file stem"],
    ["an array", "[]", "", "must be a JSON object"],
    ["null", "null", "", "must be a JSON object"],
    ["torn JSON", "{\"schema\":1,", "", "not valid JSON"]
  ] as const)("Peer refuses %s", ([, text, field, rule]) =>
    Effect.map(decodePeer(text), (result) => {
      expect(result._tag).toBe("Left")
      if (result._tag === "Left") {
        expect(result.left.field).toBe(field)
        expect(result.left.rule).toContain(rule)
      }
    }))

  const decodeRecords = DocumentStore.decodeDocument(
    EndpointRecords,
    (file, faults) => new InvalidFile({ reason: "EndpointRecords", file, ...faults })
  )
  const records = (endpoints: unknown, fields: Record<string, unknown> = {}) =>
    JSON.stringify({ schema: 1, capability: "mail", endpoints, ...fields })
  const call = (fields: Record<string, unknown> = {}) => ({ state: "ok", occasion: "birth", at: "2026-11-30T12:00:00.000Z", ...fields })

  it.effect.each([
    ["no endpoints", records({})],
    ["every state and occasion", records({
      ann: { claude: call(), codex: call({ state: "failed", occasion: "sweep-on", exit: 1, detail: "boom" }) },
      bob: { claude: call({ state: "timeout", occasion: "remove" }), x: call({ state: "not-executable", occasion: "off-all" }) }
    })],
    ["an exit of -1 and an empty detail", records({ ann: { claude: call({ exit: -1, detail: "" }) } })],
    ["a personality with no runtimes", records({ ann: {} })]
  ] as const)("EndpointRecords accepts %s", ([, text]) =>
    Effect.map(Effect.either(decodeRecords("/r/mail.json", text)), (result) => expect(result._tag).toBe("Right")))

  it.effect.each([
    ["a __proto__ personality", `{"schema":1,"capability":"mail","endpoints":{"__proto__":{"claude":${JSON.stringify(call())}}}}`, "endpoints.__proto__ is not a known field"],
    ["an upper-case runtime", records({ ann: { Claude: call() } }), "endpoints.ann.Claude is not a known field"],
    ["an unknown state", records({ ann: { claude: call({ state: "done" }) } }), "endpoints.ann.claude.state Expected"],
    ["an unknown occasion", records({ ann: { claude: call({ occasion: "sweep" }) } }), "endpoints.ann.claude.occasion Expected"],
    ["an exit that is a string", records({ ann: { claude: call({ exit: "0" }) } }), "number"],
    ["a detail that is a list", records({ ann: { claude: call({ detail: ["x"] }) } }), "string"],
    ["a record without at", records({ ann: { claude: { state: "ok", occasion: "birth" } } }), "is missing"],
    ["an extra key in a record", records({ ann: { claude: call({ pid: 1 }) } }), "is not a known field"],
    ["endpoints as a list", records([]), "endpoints"],
    ["schema 0", records({}, { schema: 0 }), "must be 1"],
    ["a capability name with a slash", records({}, { capability: "a/b" }), "must be 1-64 characters"],
    ["a number", "1", "must be a JSON object"]
  ] as const)("EndpointRecords refuses %s", ([, text, rule]) =>
    Effect.map(Effect.either(decodeRecords("/r/mail.json", text)), (result) => {
      expect(result._tag).toBe("Left")
      if (result._tag === "Left") expect(`${result.left.field} ${result.left.rule}`).toContain(rule)
    }))
})
