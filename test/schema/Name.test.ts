/**
 * The name rule (src/schema/Name.ts): 1-64 characters of a-z, 0-9, '.', '_' or '-', starting with
 * a letter or digit; so lower-case (two names never collide on a case-insensitive file system) and
 * never a path (no `/`, no leading dot).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as JSONSchema from "effect/JSONSchema"
import * as Schema from "effect/Schema"
import { isName, Name, nameRule } from "../../src/schema/Name.ts"
import { anyText, holds, withAwkward } from "./strings.ts"

/** The rule as the doc comment words it, character by character. */
const byTheRule = (s: string) =>
  s.length >= 1 && s.length <= 64 &&
  "abcdefghijklmnopqrstuvwxyz0123456789".includes(s[0]!) &&
  [...s].every((c) => "abcdefghijklmnopqrstuvwxyz0123456789._-".includes(c))

/** Strings near the rule: names' characters (any length up to past the limit), now and then another one. */
const nameLike = FastCheck.oneof(
  FastCheck.string({ unit: FastCheck.constantFrom(..."abcdefghijklmnopqrstuvwxyz0123456789._-"), maxLength: 70, size: "max" }),
  anyText.map((s) => s.toLowerCase().replace(/[^a-z0-9._-]/g, (c) => (c.charCodeAt(0) % 3 === 0 ? c : "x")))
)

describe("Name", () => {
  it("accepts exactly the strings the rule describes, whatever their characters", () =>
    holds([anyText], (s) => expect(isName(s)).toBe(byTheRule(s))))

  it("accepts exactly the strings the rule describes, for strings close to names", () =>
    holds([FastCheck.oneof(nameLike, withAwkward(nameLike))], (s) => expect(isName(s)).toBe(byTheRule(s))))

  it("a name is never a path and never differs from its lower case", () =>
    holds([FastCheck.oneof(anyText, nameLike)], (s) => {
      if (!isName(s)) return
      expect(s.includes("/") || s.includes("\\") || s.startsWith(".")).toBe(false)
      expect(s.toLowerCase()).toBe(s)
      expect(s.normalize("NFKC")).toBe(s)
    }))

  it("64 characters are a name, 65 are not; a BOM, a newline at the end, look-alikes are not", () => {
    expect(isName("a".repeat(64))).toBe(true)
    expect(isName("a".repeat(65))).toBe(false)
    for (const s of ["", ".", "..", ".hidden", "-x", "_x", "\ufeffnotes", "notes\n", "notes\u0000", "Notes", "ıd", "\u212aey", "ｎotes", "a/b", "../x"]) {
      expect(isName(s), JSON.stringify(s)).toBe(false)
    }
  })

  it("the Schema decodes what isName accepts, refuses the rest with the rule's words, and its JSON Schema pattern agrees", () => {
    const pattern = new RegExp((JSONSchema.make(Name) as unknown as { $defs: { Name: { pattern: string } } }).$defs.Name.pattern)
    return holds([FastCheck.oneof(anyText, nameLike)], (s) => {
      const decoded = Schema.decodeUnknownEither(Name)(s)
      expect(Either.isRight(decoded)).toBe(isName(s))
      if (Either.isLeft(decoded)) expect(decoded.left.message).toContain(nameRule)
      expect(pattern.test(s)).toBe(isName(s))
    })
  })
})
