/**
 * The plugin name rule (src/schema/PluginName.ts): 1 to 64 characters, ASCII letters, digits,
 * `.`, `_` and `-`, starting with a letter or a digit; case-sensitive. `check` says which part of
 * the rule a name breaks.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Schema from "effect/Schema"
import { check, PluginName } from "../../src/schema/PluginName.ts"
import { anyText, holds, withAwkward } from "./strings.ts"

const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

/** The rule as the doc comment words it. */
const byTheRule = (s: string) =>
  s.length >= 1 && s.length <= 64 && letters.includes(s[0]!) && [...s].every((c) => `${letters}._-`.includes(c))

/** The part of the rule a name breaks, in the order the rule states them. */
const brokenPart = (s: string) =>
  s.length === 0 ? "must not be empty"
  : s.trim() !== s ? "must not have leading or trailing white space"
  : s.length > 64 ? "must be at most 64 characters"
  : "must start with a letter or digit and use only letters, digits, '.', '_' and '-'"

const nameLike = FastCheck.oneof(
  FastCheck.string({ unit: FastCheck.constantFrom(...`${letters}._- `), maxLength: 70, size: "max" }),
  withAwkward(FastCheck.string({ unit: FastCheck.constantFrom(...letters), maxLength: 64, size: "max" })),
  anyText
)

describe("PluginName", () => {
  it("decodes exactly the names the rule describes", () =>
    holds([nameLike], (s) => expect(Either.isRight(Schema.decodeUnknownEither(PluginName)(s))).toBe(byTheRule(s))))

  it("check is undefined for a valid name, else an InvalidPluginName naming the name and the part of the rule it breaks", () =>
    holds([nameLike], (s) => {
      const error = check(s)
      if (byTheRule(s)) return expect(error).toBeUndefined()
      expect(error).toMatchObject({ _tag: "RegistryError", reason: "InvalidPluginName" })
      expect(error?.plugin).toBe(s)
      expect(error?.rule).toContain(brokenPart(s))
    }))

  it("a BOM or a no-break space around a name is white space; a look-alike letter is not a letter", () => {
    expect(check("\ufeffnotes")?.rule).toContain("white space")
    expect(check("notes\u00a0")?.rule).toContain("white space")
    for (const s of ["nоtes" /* Cyrillic о */, "ｎotes", "note\u0301s", "notes\u200b", "ı"]) {
      expect(check(s)?.rule, JSON.stringify(s)).toContain("must start with a letter or digit")
    }
    expect(check("Notes")).toBeUndefined()
    expect(check("notes")).toBeUndefined()
  })

  it("a value that is not a string is refused, named as given", () => {
    for (const value of [42, null, undefined, { name: "notes" }, ["notes"]]) {
      expect(check(value)?.plugin).toBe(String(value))
    }
  })
})
