/**
 * Text that may reach a terminal (src/schema/Printable.ts): the rule refuses C0, DEL and C1
 * controls, the bidirectional embeddings, overrides and isolates, and the line and paragraph
 * separators, and names the first one by its code point.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as JSONSchema from "effect/JSONSchema"
import * as Schema from "effect/Schema"
import { codePoint, printableIssue, PrintableString } from "../../src/schema/Printable.ts"
import { anyText, holds, withAwkward } from "./strings.ts"

/** The refused code units as the doc comment lists them, and what each is called. */
const kindOf = (code: number): string | undefined =>
  code <= 0x1f || code === 0x7f || (code >= 0x80 && code <= 0x9f) ? "a control character"
  : (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069) ? "a bidirectional control character"
  : code === 0x2028 || code === 0x2029 ? "a line separator"
  : undefined

const firstRefused = (text: string) => {
  for (let i = 0; i < text.length; i++) {
    const kind = kindOf(text.charCodeAt(i))
    if (kind !== undefined) return `contains U+${text.charCodeAt(i).toString(16).toUpperCase().padStart(4, "0")} (${kind})`
  }
  return undefined
}

describe("Printable", () => {
  it("refuses exactly the listed characters, naming the first one by its code point and kind", () =>
    holds([withAwkward(anyText)], (text) => expect(printableIssue(text)).toBe(firstRefused(text))))

  it("a BOM, a zero-width joiner, an emoji, a lone surrogate are printable; NEL, ESC and RLO are not", () => {
    for (const text of ["\ufeffa", "a\u200db", "😀", "\ud800", "e\u0301"]) expect(printableIssue(text), JSON.stringify(text)).toBeUndefined()
    expect(printableIssue("a\u0085")).toBe("contains U+0085 (a control character)")
    expect(printableIssue("\u001b[31m")).toBe("contains U+001B (a control character)")
    expect(printableIssue("abc\u202egnp.exe")).toBe("contains U+202E (a bidirectional control character)")
  })

  it("the Schema and its JSON Schema pattern agree with the rule", () => {
    const root = JSONSchema.make(PrintableString) as unknown as { pattern: string }
    const pattern = new RegExp(root.pattern)
    return holds([withAwkward(anyText)], (text) => {
      const decoded = Schema.decodeUnknownEither(PrintableString)(text)
      expect(Either.isRight(decoded)).toBe(firstRefused(text) === undefined)
      expect(pattern.test(text)).toBe(firstRefused(text) === undefined)
    })
  })

  it("codePoint writes U+ and at least four upper-case hex digits", () => {
    expect(codePoint(0x1b)).toBe("U+001B")
    expect(codePoint(0x1f600)).toBe("U+1F600")
  })
})
