/**
 * Strings nobody shaped to pass a rule, for the schema tests: any code points (lone surrogates
 * too), mixed with the characters rules are about (controls, BOM, bidirectional marks, line
 * separators, look-alikes of ASCII), short and very long.
 */
import * as FastCheck from "effect/FastCheck"

/** Characters a rule on names or printed text has to decide on. */
const awkward = [
  "\u0000", "\u0007", "\t", "\n", "\r", "\u001b", "\u007f", "\u0085", "\u009b", "\u00a0", "\u00ad",
  "\u200b", "\u200d", "\u2028", "\u2029", "\u202a", "\u202e", "\u2066", "\u2069", "\ufeff", "\ufffd",
  "\ud800", "\udfff", "😀", "é", "e\u0301", "ı", "İ", "K", "ｆ", "Ａ", "ß", "/", "\\", ".", "..", "_",
  "-", " ", ":", "[", "]", "*", "{", "}", "a", "Z", "0", "9"
]

/** One UTF-16 code unit, any of them (so lone surrogates too). */
const codeUnit = FastCheck.integer({ min: 0, max: 0xffff }).map((n) => String.fromCharCode(n))

/** A piece of text: awkward characters, any code units, any code points, or plain ASCII. */
const piece = FastCheck.oneof(
  FastCheck.constantFrom(...awkward),
  codeUnit,
  FastCheck.string({ unit: "binary", maxLength: 4 }),
  FastCheck.string({ unit: "grapheme-ascii", maxLength: 8 })
)

/** Any string, leaning towards the characters rules are about; now and then a very long one. */
export const anyText: FastCheck.Arbitrary<string> = FastCheck.oneof(
  { weight: 8, arbitrary: FastCheck.array(piece, { maxLength: 24 }).map((parts) => parts.join("")) },
  { weight: 1, arbitrary: FastCheck.tuple(piece, FastCheck.integer({ min: 60, max: 5000 })).map(([p, n]) => p.repeat(n)) },
  { weight: 1, arbitrary: FastCheck.string({ unit: "binary", maxLength: 300 }) }
)

/** `text` with one of the awkward characters put at a random place. */
export const withAwkward = (text: FastCheck.Arbitrary<string>): FastCheck.Arbitrary<string> =>
  FastCheck.tuple(text, FastCheck.constantFrom(...awkward), FastCheck.nat()).map(([t, c, at]) => {
    const i = t.length === 0 ? 0 : at % (t.length + 1)
    return t.slice(0, i) + c + t.slice(i)
  })

/** Runs a property (its `expect`s) with enough cases to meet the awkward characters. */
export const holds = <Ts extends [unknown, ...Array<unknown>]>(
  arbitraries: { [K in keyof Ts]: FastCheck.Arbitrary<Ts[K]> },
  check: (...args: Ts) => unknown
) =>
  FastCheck.assert(
    FastCheck.property(...arbitraries, (...args: Ts) => {
      check(...args)
    }),
    { numRuns: 500 }
  )
