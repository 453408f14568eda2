/**
 * Text that fits one log line (src/schema/OneLine.ts): control characters and line separators
 * escaped visibly, cut to at most `max` characters with an ellipsis and the original length,
 * never splitting an escape or a surrogate pair.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import { FileRefused } from "../../src/schema/FileErrors.ts"
import { oneLine } from "../../src/schema/OneLine.ts"
import { anyText, holds } from "./strings.ts"

/** The escapes as the doc comment lists them, one code point at a time. */
const escaped = (char: string): string => {
  const code = char.codePointAt(0)!
  const named: Record<number, string> = { 0x0a: "\\n", 0x0d: "\\r", 0x09: "\\t" }
  if (named[code] !== undefined) return named[code]
  if (code < 0x20 || code === 0x7f) return `\\x${code.toString(16).padStart(2, "0")}`
  if ((code >= 0x80 && code <= 0x9f) || code === 0x2028 || code === 0x2029) return `\\u${code.toString(16).padStart(4, "0")}`
  return char
}
const pieces = (text: string) => Array.from(text, escaped)
const lineBreaking = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/
const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

describe("oneLine", () => {
  const cases: ReadonlyArray<readonly [string, string, number, string]> = [
    ["short text is kept", "plain text", 80, "plain text"],
    ["newline, return and tab are escaped", "a\nb\r\tc", 80, "a\\nb\\r\\tc"],
    ["ESC and other C0 controls and DEL", "\u001b[31mred\u0000\u007f", 80, "\\x1b[31mred\\x00\\x7f"],
    ["C1 controls (NEL)", "a\u0085b\u009bc", 80, "a\\u0085b\\u009bc"],
    ["line and paragraph separators", "a\u2028b\u2029c", 80, "a\\u2028b\\u2029c"],
    ["other text is left as it is", "é 漢字 \\n 😀", 80, "é 漢字 \\n 😀"],
    ["a long text is cut with an ellipsis and its length", "x".repeat(100), 20, "xxxxxxx… (100 chars)"],
    ["a cut never splits an escape", `${"a".repeat(10)}\n${"b".repeat(50)}`, 23, "aaaaaaaaaa… (61 chars)"],
    ["a cut never splits a surrogate pair", `${"a".repeat(10)}😀${"b".repeat(50)}`, 23, "aaaaaaaaaa… (62 chars)"],
    ["the escaped length counts for the cut", "\n".repeat(10), 19, "\\n\\n\\n… (10 chars)"],
    ["a max under the ending keeps the ending alone", "x".repeat(100), 3, "… (100 chars)"],
    ["text exactly at max is kept", "x".repeat(20), 20, "x".repeat(20)]
  ]
  for (const [name, text, max, expected] of cases) {
    it(name, () => {
      const result = oneLine(text, max)
      expect(result).toBe(expected)
      expect(/[\n\r\u2028\u2029]/.test(result)).toBe(false)
      if (expected.length <= max) expect(result.length).toBeLessThanOrEqual(max)
    })
  }

  it("a file name with a newline cannot break the refusal's line", () => {
    const e = new FileRefused({ file: "/tmp/a\nb.json", rule: "is a FIFO, not a regular file", problem: "not-a-regular-file" })
    expect(e.message).toBe("/tmp/a\\nb.json: is a FIFO, not a regular file")
  })

  const max = FastCheck.oneof(FastCheck.integer({ min: -5, max: 400 }), FastCheck.double({ min: -10, max: 400, noNaN: true }))

  it("no control character nor line separator is left, whatever the text and the max", () =>
    holds([anyText, max], (text, m) => expect(lineBreaking.test(oneLine(text, m))).toBe(false)))

  it("text that fits is every code point escaped; text that does not is whole escapes, then the ending with the length", () =>
    holds([anyText, max], (text, m) => {
      const limit = Math.max(0, Math.floor(m))
      const all = pieces(text)
      const result = oneLine(text, m)
      if (all.join("").length <= limit) return expect(result).toBe(all.join(""))
      const ending = `… (${text.length} chars)`
      expect(result.endsWith(ending)).toBe(true)
      if (ending.length >= limit) return expect(result).toBe(ending)
      expect(result.length).toBeLessThanOrEqual(limit)
      // What is kept is the first escapes, whole, as many as fit.
      const kept = result.slice(0, result.length - ending.length)
      let prefix = ""
      for (const piece of all) {
        if (prefix.length + piece.length > limit - ending.length) break
        prefix += piece
      }
      expect(kept).toBe(prefix)
    }))

  it("a cut never leaves half of a surrogate pair", () =>
    holds([anyText.filter((t) => !loneSurrogate.test(t)), max], (text, m) => expect(loneSurrogate.test(oneLine(text, m))).toBe(false)))
})
