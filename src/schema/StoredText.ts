/**
 * Text from outside that `city` stores (a command's stderr tail, a tool's output or error): the one
 * rule for every place it lands under the state root (`state/endpoints/*.json`, an owed reload's
 * `last_error`, `logs/lifecycle.log`, `state/turns/*` results; docs/cli.md, "Files and
 * permissions").
 *
 * `storedText(text)`:
 * - escapes every control character but newline and tab (the other C0 controls, DEL and the C1
 *   controls) as `\u001b`-style escapes, so a stored string never carries a terminal escape
 *   sequence, whoever prints it later. The escapes are for reading, not for decoding back: a
 *   backslash in the text is left as it is.
 * - keeps at most `max` characters of the escaped text (UTF-16 code units, as `String.length`
 *   counts): by default `storedTextMax` (4096), the stderr tail's 4 KiB; a tool's output, which is
 *   the result a Turn's caller reads, keeps up to `toolOutputMax` (1 Mi characters). A longer text
 *   keeps its end (a command's reason is usually last), after `… (<n> chars cut) ` where `n`
 *   counts the original characters left out. A cut never splits an escape or a surrogate pair.
 *
 * Pure: no service, no I/O. A megabyte of input costs one pass over its last few thousand characters.
 * @since 0.1.0
 */

/**
 * The most characters a stored text keeps.
 * @since 0.1.0
 * @category constants
 */
export const storedTextMax = 4096

/**
 * The most characters a stored tool output keeps (a Turn's result).
 * @since 0.1.0
 * @category constants
 */
export const toolOutputMax = 1024 * 1024

/** The characters `storedText` escapes: C0 but `\n` and `\t`, DEL, C1. */
const control = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/

const escape = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`

const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff
const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff

/**
 * `text` as `city` stores it: control characters other than newline and tab escaped, at most
 * `storedTextMax` characters, the end kept.
 *
 * @example
 * ```ts
 * storedText("\u001b[31mred") // "\\u001b[31mred"
 * storedText("x".repeat(5000)) // "… (922 chars cut) xxx…" (4096 characters)
 * ```
 * @since 0.1.0
 * @category utils
 */
export const storedText = (text: string, max: number = storedTextMax): string => {
  if (text.length <= max && !control.test(text)) return text
  // From the end: the pieces that fit, each a character (or a surrogate pair) in its stored form,
  // with the number of original code units it stands for.
  const pieces: Array<{ readonly stored: string; readonly width: number }> = []
  let length = 0
  let at = text.length
  while (at > 0) {
    const code = text.charCodeAt(at - 1)
    const width = isLow(code) && at >= 2 && isHigh(text.charCodeAt(at - 2)) ? 2 : 1
    const char = text.slice(at - width, at)
    const stored = control.test(char) ? escape(char) : char
    if (length + stored.length > max) break
    pieces.push({ stored, width })
    length += stored.length
    at -= width
  }
  // Cut: drop kept pieces from the front until the marker fits before them.
  while (at > 0 && length + `… (${at} chars cut) `.length > max) {
    const dropped = pieces.pop()
    if (dropped === undefined) break
    length -= dropped.stored.length
    at += dropped.width
  }
  const kept = pieces.reverse().map((p) => p.stored).join("")
  return at === 0 ? kept : `… (${at} chars cut) ${kept}`
}
