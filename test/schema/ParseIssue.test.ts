/**
 * A ParseError as the field and the rule a person reads (src/schema/ParseIssue.ts): the first
 * issue's path joined with dots (array indexes in brackets), an unknown field named as such, text
 * that is not JSON and a document that is not an object said so, and `issueLine` on one line;
 * `documentIssues` gives every issue of an `errors: "all"` decode.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { documentIssue, documentIssues, firstIssue, issueLine, literalChoice } from "../../src/schema/ParseIssue.ts"
import { anyText, holds } from "./strings.ts"

const errorOf = <A, I>(schema: Schema.Schema<A, I>, value: unknown, onExcessProperty: "ignore" | "error" = "ignore"): ParseResult.ParseError => {
  const decoded = Schema.decodeUnknownEither(schema, { onExcessProperty })(value)
  if (Either.isRight(decoded)) throw new Error(`expected ${JSON.stringify(value)} to be refused`)
  return decoded.left
}

/**
 * Field names of any text, but for `__proto__` (a Struct field of that name is not a plain key)
 * and the empty name (joined, it leaves no trace: `{ "": { "": [x] } }` reads `[0]`).
 */
const key = anyText.filter((k) => k !== "__proto__" && k !== "")

describe("ParseIssue", () => {
  it("the field is the first issue's path joined with dots, an index in brackets, whatever the keys' characters", () =>
    holds([key, key, FastCheck.nat({ max: 5 })], (outer, inner, index) => {
      const schema = Schema.Struct({ [outer]: Schema.Struct({ [inner]: Schema.Array(Schema.Number) }) })
      const value = { [outer]: { [inner]: [...Array.from({ length: index }, () => 1), "not a number"] } }
      const issue = firstIssue(errorOf(schema, value))
      expect(issue.field).toBe(`${outer}.${inner}[${index}]`)
      expect(issue.rule).toContain("Expected number")
    }))

  it("a field the schema does not know reads 'is not a known field'; the document itself has the empty field", () =>
    holds([key.filter((k) => k !== "known")], (extra) => {
      expect(firstIssue(errorOf(Schema.Struct({ known: Schema.String }), { known: "x", [extra]: 1 }, "error"))).toEqual({ field: extra, rule: "is not a known field" })
      expect(firstIssue(errorOf(Schema.String, 1)).field).toBe("")
    }))

  it("text that is not JSON reads 'not valid JSON (…)'; JSON that is not an object 'must be a JSON object'", () => {
    const document = Schema.parseJson(Schema.Struct({ a: Schema.optional(Schema.String) }))
    const notJson = (text: string) => Either.isLeft(Either.try(() => JSON.parse(text)))
    return holds([anyText], (text) => {
      if (notJson(text)) {
        const issue = documentIssue(errorOf(document, text))
        expect(issue.field).toBe("")
        expect(issue.rule.startsWith("not valid JSON (")).toBe(true)
        return
      }
      const parsed: unknown = JSON.parse(text)
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
        expect(documentIssue(errorOf(document, text))).toEqual({ field: "", rule: "must be a JSON object" })
      }
    })
  })

  it("JSON values that are not objects, each: 'must be a JSON object'", () => {
    const document = Schema.parseJson(Schema.Struct({ a: Schema.optional(Schema.String) }))
    for (const text of ["1", "\"\ufeff{}\"", "null", "true", "[]", "[{}]"]) {
      expect(documentIssue(errorOf(document, text)), text).toEqual({ field: "", rule: "must be a JSON object" })
    }
  })

  it("issueLine is one line of at most 300 characters, whatever the field names and values", () =>
    holds([key, anyText], (name, value) => {
      const line = issueLine(errorOf(Schema.Struct({ [name]: Schema.Literal("expected") }), { [name]: value }))
      expect(/[\n\r\u2028\u2029]/.test(line)).toBe(false)
      expect(line.length).toBeLessThanOrEqual(300)
    }))

  it("documentIssues gives every issue of an errors-\"all\" decode, an optional field's \"Expected undefined\" beside its rule left out", () => {
    const schema = Schema.Struct({
      a: Schema.Number,
      b: Schema.optional(Schema.Array(Schema.String.pipe(Schema.minLength(1, { message: () => "must not be empty" })))),
      c: Schema.optional(Schema.Number)
    })
    const decoded = Schema.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "error" })({ a: "x", b: ["ok", ""], d: 1 })
    if (Either.isRight(decoded)) throw new Error("expected a refusal")
    expect(documentIssues(decoded.left)).toEqual([
      { field: "d", rule: "is not a known field" },
      { field: "a", rule: "Expected number, actual \"x\"" },
      { field: "b[1]", rule: "must not be empty" }
    ])
    // An optional field's only issue stays.
    const alone = Schema.decodeUnknownEither(Schema.Struct({ u: Schema.optional(Schema.Undefined) }), { errors: "all" })({ u: 1 })
    if (Either.isRight(alone)) throw new Error("expected a refusal")
    expect(documentIssues(alone.left)).toEqual([{ field: "u", rule: expect.stringMatching(/^Expected undefined, actual 1/) }])
  })

  it("a choice of literals is refused in one issue, and a union member's mismatch at a field beside a precise issue inside it is left out", () => {
    const schema = Schema.Struct({
      mode: literalChoice("none", "worker", "process"),
      modes: Schema.Union(literalChoice("none", "worker"), Schema.Record({ key: Schema.String, value: literalChoice("none", "worker") }))
    })
    const decoded = Schema.decodeUnknownEither(schema, { errors: "all" })({ mode: "thread", modes: { notes: 1 } })
    if (Either.isRight(decoded)) throw new Error("expected a refusal")
    expect(documentIssues(decoded.left)).toEqual([
      { field: "mode", rule: "Expected \"none\" | \"worker\" | \"process\", actual \"thread\"" },
      { field: "modes.notes", rule: "Expected \"none\" | \"worker\", actual 1" }
    ])
  })
})
