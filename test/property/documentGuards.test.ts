/**
 * Property (issue 8, the CLI sweep's speed): the hand-written acceptance checks `isPeer` and
 * `isEndpointRecords` accept exactly what the `Peer` and `EndpointRecords` Schemas decode from the
 * same JSON text (excess properties refused), so the document store's fast path never lets through
 * a document the Schema refuses, and never sends a valid one to the slow path.
 *
 * Generated documents are mostly near-valid: each field is a valid value most of the time and
 * otherwise a value chosen to break one rule of that field, or any JSON value; keys may be missing
 * and extra keys are added. Each document goes through `JSON.stringify` and `JSON.parse`, as a file
 * on disk does, and both sides judge the parsed text.
 *
 * On failure fast-check prints `seed` and `path`; replay with
 * `CITY_PROP_SEED=<seed> CITY_PROP_PATH=<path> npx vitest run test/property/documentGuards.test.ts`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Schema from "effect/Schema"
import { isEndpointRecords, isPeer } from "../../src/schema/DocumentGuards.ts"
import { EndpointRecords } from "../../src/schema/Outcome.ts"
import { Peer } from "../../src/schema/Peer.ts"

const seed = process.env["CITY_PROP_SEED"]
const path = process.env["CITY_PROP_PATH"]
const replay = seed === undefined ? {} : { seed: Number(seed), ...(path === undefined ? {} : { path }) }

/** Mostly `valid`, sometimes one of the rule-breakers, sometimes any JSON value. */
const field = <A>(valid: FastCheck.Arbitrary<A>, breakers: ReadonlyArray<unknown>) =>
  FastCheck.oneof(
    { arbitrary: valid, weight: 40 },
    { arbitrary: FastCheck.constantFrom(...breakers), weight: 2 },
    { arbitrary: FastCheck.jsonValue({ maxDepth: 2 }), weight: 1 }
  )

const nameBreakers = ["", "A", "Claude", "-x", ".x", "_x", "has space", "ä", "x\n", "a".repeat(65), "__proto__", 1, null]
const name = field(FastCheck.stringMatching(/^[a-z0-9][a-z0-9._-]{0,70}$/), nameBreakers)
/** A small pool, so that lists repeat names and the default is sometimes among the runtimes. */
const runtime = field(FastCheck.constantFrom("claude", "codex", "gemini", "x-y", "a.b_c"), nameBreakers)
const one = field(FastCheck.constant(1), [0, 2, -1, 1.5, "1", true])
/** An excess property, now and then. */
const withExtra = <A extends object>(document: FastCheck.Arbitrary<A>) =>
  FastCheck.tuple(document, FastCheck.integer({ min: 0, max: 7 }), FastCheck.jsonValue({ maxDepth: 1 })).map(([d, dice, extra]) =>
    dice === 0 ? { ...d, extra } : d)

const peerFields = {
  schema: one,
  personality: name,
  cwd: field(FastCheck.stringMatching(/^\/[a-z/ .]{0,12}$/), ["", "work", "./work", "~/work", "C:\\work", " /work", 1]),
  runtimes: field(FastCheck.uniqueArray(runtime, { minLength: 1, maxLength: 4 }), [[], "claude", {}, [1], ["claude", "claude"]]),
  default_runtime: runtime
}
/** The default runtime is mostly one of the runtimes listed. */
const listedDefault = <A extends { readonly runtimes?: unknown }>(document: A) => {
  const runtimes = Array.isArray(document.runtimes) && document.runtimes.length > 0 ? document.runtimes : undefined
  return runtimes === undefined || !("default_runtime" in document)
    ? FastCheck.constant(document)
    : FastCheck.oneof(
      { arbitrary: FastCheck.constantFrom(...runtimes).map((d: unknown) => ({ ...document, default_runtime: d })), weight: 4 },
      { arbitrary: FastCheck.constant(document), weight: 1 }
    )
}
const peer = FastCheck.oneof(
  { arbitrary: withExtra(FastCheck.record(peerFields).chain(listedDefault)), weight: 16 },
  { arbitrary: withExtra(FastCheck.record(peerFields, { requiredKeys: [] }).chain(listedDefault)), weight: 2 },
  { arbitrary: FastCheck.jsonValue({ maxDepth: 2 }), weight: 1 }
)

const states = ["ok", "failed", "timeout", "not-executable"]
const occasions = ["birth", "sweep-on", "remove", "off-all"]
const recordFields = {
  state: field(FastCheck.constantFrom(...states), ["OK", "done", "", 0]),
  occasion: field(FastCheck.constantFrom(...occasions), ["sweep", "", 1]),
  at: field(FastCheck.constant("2026-11-30T12:00:00.000Z"), [1, null]),
  exit: field(FastCheck.integer({ min: -1, max: 255 }), ["0", null]),
  detail: field(FastCheck.string({ maxLength: 8 }), [0, null, ["x"]])
}
const record = field(withExtra(FastCheck.record(recordFields, { requiredKeys: ["state", "occasion", "at"] })), [{}, [], null, "ok"])
const key = FastCheck.oneof(
  { arbitrary: FastCheck.constantFrom("ann", "bob", "claude", "codex", "x-y"), weight: 8 },
  { arbitrary: FastCheck.constantFrom("", "Ann", "-x", "has space", "a".repeat(65)), weight: 1 }
)
const endpoints = field(
  FastCheck.dictionary(key, field(FastCheck.dictionary(key, record, { maxKeys: 2 }), [[], null, "x"]), { maxKeys: 2 }),
  [[], null, "endpoints"]
)
const recordsFields = { schema: one, capability: name, endpoints }
const records = FastCheck.oneof(
  { arbitrary: withExtra(FastCheck.record(recordsFields)), weight: 16 },
  { arbitrary: withExtra(FastCheck.record(recordsFields, { requiredKeys: [] })), weight: 2 },
  { arbitrary: FastCheck.jsonValue({ maxDepth: 2 }), weight: 1 }
)

/** The document as a file holds it: its JSON text. */
const text = (document: unknown) => JSON.stringify(document) ?? "null"

const accepts = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownEither(Schema.parseJson(schema), { onExcessProperty: "error" })
  return (json: string) => Either.isRight(decode(json))
}
const peerAccepted = accepts(Peer)
const recordsAccepted = accepts(EndpointRecords)

describe("DocumentGuards", () => {
  it.prop(
    "isPeer accepts exactly what the Peer Schema decodes",
    { document: peer },
    ({ document }) => {
      const json = text(document)
      expect(isPeer(JSON.parse(json))).toBe(peerAccepted(json))
    },
    { fastCheck: { numRuns: 3000, ...replay } }
  )

  it.prop(
    "isEndpointRecords accepts exactly what the EndpointRecords Schema decodes",
    { document: records },
    ({ document }) => {
      const json = text(document)
      expect(isEndpointRecords(JSON.parse(json))).toBe(recordsAccepted(json))
    },
    { fastCheck: { numRuns: 3000, ...replay } }
  )

  it("the generated documents include both valid and invalid ones, in numbers", () => {
    const share = <A>(arbitrary: FastCheck.Arbitrary<A>, ok: (json: string) => boolean) =>
      FastCheck.sample(arbitrary, { numRuns: 1000, seed: 9 }).filter((d) => ok(text(d))).length
    const shares = [share(peer, peerAccepted), share(records, recordsAccepted)]
    for (const accepted of shares) {
      expect(accepted).toBeGreaterThan(100)
      expect(accepted).toBeLessThan(900)
    }
  })

  it.each([
    ["a __proto__ key", `{"schema":1,"personality":"ann","cwd":"/w","runtimes":["claude"],"default_runtime":"claude","__proto__":{}}`],
    ["a repeated runtime", `{"schema":1,"personality":"ann","cwd":"/w","runtimes":["claude","claude"],"default_runtime":"claude"}`],
    ["a default outside the runtimes", `{"schema":1,"personality":"ann","cwd":"/w","runtimes":["codex"],"default_runtime":"claude"}`],
    ["a relative cwd", `{"schema":1,"personality":"ann","cwd":"w","runtimes":["claude"],"default_runtime":"claude"}`]
  ])("isPeer refuses %s, as the Schema does", (_, json) => {
    expect(peerAccepted(json)).toBe(false)
    expect(isPeer(JSON.parse(json))).toBe(false)
  })

  it.each([
    ["a __proto__ personality", `{"schema":1,"capability":"c","endpoints":{"__proto__":{"claude":{"state":"ok","occasion":"birth","at":"t"}}}}`],
    ["an unknown state", `{"schema":1,"capability":"c","endpoints":{"ann":{"claude":{"state":"done","occasion":"birth","at":"t"}}}}`],
    ["an exit that is a string", `{"schema":1,"capability":"c","endpoints":{"ann":{"claude":{"state":"ok","occasion":"birth","at":"t","exit":"0"}}}}`]
  ])("isEndpointRecords refuses %s, as the Schema does", (_, json) => {
    expect(recordsAccepted(json)).toBe(false)
    expect(isEndpointRecords(JSON.parse(json))).toBe(false)
  })
})
