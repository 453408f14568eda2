/**
 * Text that fits one log line (docs/design.md, "Errors and output": every failure carries "the facts a
 * user needs", and a reason quoting a file must not break the line it is printed on, nor carry a
 * whole file into a message).
 *
 * `oneLine(text, max)`:
 * - escapes what would end the line or drive a terminal: `\n`, `\r`, `\t` as themselves, the other
 *   C0 controls and DEL as `\xHH` (ESC is `\x1b`), the C1 controls as `\u0085`…`\u009f`, and the
 *   Unicode line and paragraph separators as `\u2028` / `\u2029`. The escapes are for reading, not
 *   for decoding back: a backslash in the text is left as it is.
 * - cuts the escaped text to at most `max` characters (UTF-16 code units, as `String.length`
 *   counts), ending with `… (<n> chars)` where `n` is the length of the original text. A cut never
 *   splits an escape or a surrogate pair. When `max` is shorter than that ending, the ending alone
 *   is returned (the length is the fact worth keeping).
 *
 * Pure: no service, no I/O.
 * @since 0.1.0
 */

const hex2 = (code: number) => code.toString(16).padStart(2, "0")
const hex4 = (code: number) => code.toString(16).padStart(4, "0")

/** The visible form of one code point. */
const escapeCodePoint = (char: string, code: number): string =>
  code === 0x0a
    ? "\\n"
    : code === 0x0d
    ? "\\r"
    : code === 0x09
    ? "\\t"
    : code < 0x20 || code === 0x7f
    ? `\\x${hex2(code)}`
    : (code >= 0x80 && code <= 0x9f) || code === 0x2028 || code === 0x2029
    ? `\\u${hex4(code)}`
    : char

/** Matches every code point `oneLine` escapes. */
const needsEscape = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/

/**
 * `text` on one line: control characters and line separators escaped visibly, cut to at most
 * `max` characters with an ellipsis and the original length.
 *
 * @example
 * ```ts
 * oneLine("a\nb", 80) // "a\\nb"
 * oneLine("x".repeat(100), 20) // "xxxxxx… (100 chars)"
 * ```
 * @since 0.1.0
 * @category utils
 */
export const oneLine = (text: string, max: number): string => {
  const limit = Math.max(0, Math.floor(max))
  if (text.length <= limit && !needsEscape.test(text)) return text
  const pieces: Array<string> = []
  let length = 0
  for (const char of text) {
    const piece = escapeCodePoint(char, char.codePointAt(0) ?? 0)
    pieces.push(piece)
    length += piece.length
  }
  if (length <= limit) return pieces.join("")
  const ending = `… (${text.length} chars)`
  const budget = limit - ending.length
  if (budget <= 0) return ending
  let kept = ""
  for (const piece of pieces) {
    if (kept.length + piece.length > budget) break
    kept += piece
  }
  return kept + ending
}
