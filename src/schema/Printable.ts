/**
 * Text that may reach a terminal: a string a file stores and a verb prints must not be able to
 * drive the terminal or forge a line of output (docs/cli.md, "Printing"). The rule refuses the
 * control characters, where each file is decoded, with a message naming the first one by its
 * code point (`contains U+001B (a control character)`):
 * - C0 (U+0000–U+001F, so newline, carriage return, tab and ESC too), DEL (U+007F) and C1
 *   (U+0080–U+009F, which some terminals read as 8-bit escape sequences);
 * - the bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), which
 *   reorder what is shown;
 * - the Unicode line and paragraph separators (U+2028, U+2029), which end a line.
 *
 * The same set is what the CLI escapes when it prints stored text (`escapeControl` in
 * src/programs/print.ts), for data written before the rule and for records no Schema refuses
 * this way (stderr tails, reasons).
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * Matches one character the rule refuses (and the CLI escapes).
 * @since 0.1.0
 * @category constants
 */
export const controlCharacter = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/

const describe = (code: number): string =>
  code >= 0x202a && code <= 0x2069 && code !== 0x2028 && code !== 0x2029
    ? "a bidirectional control character"
    : code === 0x2028 || code === 0x2029
    ? "a line separator"
    : "a control character"

/**
 * `U+001B`: a code point as the Unicode standard writes it.
 * @since 0.1.0
 * @category utils
 */
export const codePoint = (code: number): string => `U+${code.toString(16).toUpperCase().padStart(4, "0")}`

/**
 * The rule's message for `text`, or `undefined` when it holds: `contains U+001B (a control character)`.
 * @since 0.1.0
 * @category utils
 */
export const printableIssue = (text: string): string | undefined => {
  const found = controlCharacter.exec(text)
  if (found === null) return undefined
  const code = found[0].charCodeAt(0)
  return `contains ${codePoint(code)} (${describe(code)})`
}

/**
 * The rule as a filter, for any string Schema (`Schema.String.pipe(printable)`).
 * @since 0.1.0
 * @category schemas
 */
export const printable = <I, R>(self: Schema.Schema<string, I, R>): Schema.Schema<string, I, R> =>
  self.pipe(Schema.filter((s: string) => printableIssue(s) ?? true, {
    jsonSchema: { pattern: "^[^\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069]*$" }
  }))

/**
 * A string without the characters the rule refuses.
 * @since 0.1.0
 * @category schemas
 */
export const PrintableString = printable(Schema.String)
