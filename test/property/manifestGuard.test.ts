/**
 * Property (issue 9, cold discovery): the hand-written acceptance check `isManifest` accepts
 * exactly what the `Manifest` Schema accepts, so discovery's fast path never lets through a
 * manifest the Schema refuses, and never sends a valid one to the slow path's reasons.
 *
 * Generated manifests are mostly near-valid: each field is a valid value most of the time and
 * otherwise a value chosen to break one rule of that field (edge cases of white space, length,
 * absolute paths, holes in arrays, wrong types) or anything at all; keys may be missing, extra
 * keys are added, and some documents are not objects. A second property checks that an entry
 * `isPlainRelative` accepts always resolves inside the folder (`entryInside`).
 *
 * On failure fast-check prints `seed` and `path`; replay with
 * `CITY_PROP_SEED=<seed> CITY_PROP_PATH=<path> npx vitest run test/property/manifestGuard.test.ts`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import * as Manifest from "../../src/schema/Manifest.ts"
import { isManifest } from "../../src/schema/ManifestGuard.ts"

const seed = process.env["CITY_PROP_SEED"]
const path = process.env["CITY_PROP_PATH"]
const replay = seed === undefined ? {} : { seed: Number(seed), ...(path === undefined ? {} : { path }) }

/** Mostly `valid`, sometimes one of the rule-breakers, sometimes anything. */
const field = <A>(valid: FastCheck.Arbitrary<A>, breakers: ReadonlyArray<unknown>) =>
  FastCheck.oneof(
    { arbitrary: valid, weight: 16 },
    { arbitrary: FastCheck.constantFrom(...breakers), weight: 2 },
    { arbitrary: FastCheck.anything(), weight: 1 }
  )

const spaces = ["", " ", "\t", "\n", "\u00a0", "\ufeff", "\u2028", "\u3000"]
const text = FastCheck.string({ unit: "grapheme-ascii", maxLength: 12 })

const name = field(FastCheck.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,70}$/), [
  ...spaces,
  " notes",
  "notes ",
  "has space",
  "ä",
  "-notes",
  ".notes",
  "_notes",
  "notes\n",
  "a".repeat(64),
  "a".repeat(65),
  1
])
const version = field(FastCheck.stringMatching(/^\S{1,10}$/), [...spaces, "1.0 beta", "1.0\u00a0", "1.0\ufeff", 1])
const apiVersion = field(FastCheck.constant(1), [0, -0, 1.5, 2, -1, Number.NaN, Number.POSITIVE_INFINITY, "1", true, null])
const description = field(text, [...spaces, " \u3000 ", ` x `, 0])
const entry = field(FastCheck.stringMatching(/^[a-z.]{1,6}(\/[a-z.]{1,6}){0,2}$/), [
  "",
  "/abs/index.mjs",
  "\\abs\\index.mjs",
  "C:/x/index.mjs",
  "c:\\x",
  "C:x",
  "C:",
  "1:/x",
  "a\u0000b",
  "../x",
  ".",
  "//server/share",
  ["index.mjs"]
])
const skill = field(FastCheck.record({ name: text, title: text }, { requiredKeys: ["name"] }), [
  {},
  { title: "no name" },
  { name: 1 },
  ["name"],
  null,
  "skill"
])
// `sparseArray` makes holes, which the Schema reads as `undefined`.
const skills = field(FastCheck.array(skill, { maxLength: 3 }), [
  [],
  {},
  "skills",
  null,
  [undefined],
  ...FastCheck.sample(FastCheck.sparseArray(skill, { minNumElements: 1, maxLength: 3, noTrailingHole: false }), 3)
])
const provides = field(FastCheck.array(field(text, spaces), { maxLength: 3 }), [[], "x", null, {}, [1], [undefined]])

const fields = { name, version, apiVersion, description, entry, skills, provides, icon: FastCheck.anything() }
const manifest = FastCheck.record(fields, { requiredKeys: ["name", "version", "apiVersion", "description", "entry"] })
const document = FastCheck.oneof(
  { arbitrary: manifest, weight: 16 },
  { arbitrary: FastCheck.record(fields, { requiredKeys: [] }), weight: 2 },
  { arbitrary: FastCheck.anything(), weight: 1 },
  { arbitrary: FastCheck.array(manifest, { maxLength: 1 }), weight: 1 }
)

const schemaAccepts = (json: unknown) => "manifest" in Manifest.decode(json)

describe("ManifestGuard", () => {
  it.prop(
    "isManifest accepts exactly what the Manifest Schema decodes",
    { json: document },
    ({ json }) => {
      expect(isManifest(json)).toBe(schemaAccepts(json))
    },
    { fastCheck: { numRuns: 3000, ...replay } }
  )

  it("the generated documents include both valid and invalid manifests, in numbers", () => {
    const accepted = FastCheck.sample(document, { numRuns: 1000, seed: 9 }).filter(schemaAccepts).length
    expect(accepted).toBeGreaterThan(100)
    expect(accepted).toBeLessThan(900)
  })

  it.each([
    ["a missing field", { name: "notes", version: "1", apiVersion: 1, description: "d" }],
    ["a name of 65 characters", { name: "a".repeat(65), version: "1", apiVersion: 1, description: "d", entry: "i.mjs" }],
    ["a drive-absolute entry", { name: "notes", version: "1", apiVersion: 1, description: "d", entry: "C:\\i.mjs" }],
    ["a hole in skills", { name: "notes", version: "1", apiVersion: 1, description: "d", entry: "i.mjs", skills: new Array(1) }],
    ["an array", [{ name: "notes", version: "1", apiVersion: 1, description: "d", entry: "i.mjs" }]]
  ])("refuses %s, as the Schema does", (_, json) => {
    expect(schemaAccepts(json)).toBe(false)
    expect(isManifest(json)).toBe(false)
  })

  it.prop(
    "an entry isPlainRelative accepts always resolves inside the folder",
    {
      folder: FastCheck.array(FastCheck.oneof(FastCheck.stringMatching(/^[a-z.]{1,4}$/), FastCheck.constant("..")), { minLength: 1, maxLength: 3 }),
      entry: FastCheck.oneof(FastCheck.stringMatching(/^[\w./\\:-]{1,12}$/), text)
    },
    ({ entry, folder }) => {
      // Four levels deep: three `..` never reach the file system root.
      const at = `/srv/city/root/plugins/${folder.join("/")}`
      if (Manifest.isPlainRelative(entry)) expect(Manifest.entryInside(at, entry)).toBe(true)
    },
    { fastCheck: { numRuns: 3000, ...replay } }
  )
})
