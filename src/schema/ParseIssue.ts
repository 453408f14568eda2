/**
 * Turns a Schema `ParseError` into the field and the rule a person reads:
 * an issue's path joined with dots (`provision.args`), and its message; the first issue, or every
 * issue of a decode with `errors: "all"` (`documentIssues`, for the files that report every fault:
 * Faults.ts).
 *
 * The one formatter of a stored document's decode failure (docs/cli.md, "Stored records that cannot be read"): every JSON
 * file the project reads (owed-work records, endpoint records, fingerprint records, peers,
 * declarations, `host.json`, `plugins.json`, manifests) says `not valid JSON (<reason>)` for text
 * that is not JSON (`notJsonRule`) and a Schema issue on one line otherwise (the first, or each one of
 * a file that reports every fault), never the Schema's tree.
 * @since 0.1.0
 */
import type * as AST from "effect/SchemaAST"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { oneLine } from "./OneLine.ts"

/**
 * A refused document's first problem: the field (empty for the document itself) and the rule it breaks.
 * @since 0.1.0
 * @category models
 */
export interface FieldRule {
  readonly field: string
  readonly rule: string
}

/** The longest reason `notJsonRule` keeps from the JSON parser. */
const reasonMax = 200

/** The longest field and rule `documentIssue` gives (a stored file can hold any key). */
const fieldMax = 120
const ruleMax = 300

/**
 * The rule of text that is not JSON, in words.
 * @since 0.1.0
 * @category constants
 */
export const notJsonSentence = "not valid JSON"

/**
 * The rule of a document that is JSON but not an object.
 * @since 0.1.0
 * @category constants
 */
export const notObjectRule = "must be a JSON object"

/**
 * The rule of a field the Schema does not know (excess properties are refused).
 * @since 0.1.0
 * @category constants
 */
export const unknownFieldRule = "is not a known field"

/**
 * The rule of text that is not JSON: `not valid JSON (<reason>)`, the parser's reason on one line.
 * @since 0.1.0
 * @category utils
 */
export const notJsonRule = (reason: string): string => `${notJsonSentence} (${oneLine(reason, reasonMax)})`

const joinPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (acc, key) =>
      typeof key === "number" ? `${acc}[${key}]` : acc === "" ? String(key) : `${acc}.${String(key)}`,
    ""
  )

/** One issue of the formatter as a field and a rule (an excess property reads "is not a known field"). */
const fieldRule = (issue: ParseResult.ArrayFormatterIssue): FieldRule => ({
  field: joinPath(issue.path),
  rule: issue._tag === "Unexpected" ? unknownFieldRule : issue.message
})

/**
 * The first issue of a parse error, as `{ field, rule }`.
 * @since 0.1.0
 * @category utils
 */
export const firstIssue = (error: ParseResult.ParseError): FieldRule => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  return issue === undefined ? { field: "", rule: error.message } : fieldRule(issue)
}

/** A document's issue: JSON that does not parse or is not an object reads so; field and rule each on one line. */
const documentFieldRule = (issue: ParseResult.ArrayFormatterIssue): FieldRule => {
  if (issue.path.length === 0) {
    if (issue._tag === "Transformation") return { field: "", rule: notJsonRule(issue.message) }
    if (issue._tag === "Type" && issue.message.startsWith("Expected {")) return { field: "", rule: notObjectRule }
  }
  const { field, rule } = fieldRule(issue)
  return { field: oneLine(field, fieldMax), rule: oneLine(rule, ruleMax) }
}

/**
 * The first issue of decoding a JSON document with `Schema.parseJson(schema)`: text that is not
 * JSON reads "not valid JSON (…)", a document that is not an object "must be a JSON object".
 * @since 0.1.0
 * @category utils
 */
export const documentIssue = (error: ParseResult.ParseError): FieldRule => documentIssues(error)[0]

/** The `undefined` member's issue of an optional field's union. */
const isUndefinedMember = (issue: ParseResult.ArrayFormatterIssue): boolean =>
  issue._tag === "Type" && issue.message.startsWith("Expected undefined, actual ")

/**
 * Issues that say nothing another one does not, left out:
 * - an optional field is a union with `undefined`, and a value that breaks the field's rule fails
 *   both members: the `undefined` member's "Expected undefined, actual …" is left out when another
 *   issue names the same field or one inside it;
 * - a union of a value and an object (`plugins.json`'s `isolation`: a mode, or a mode per plugin)
 *   fails both members on an object with a wrong value inside: the value member's type mismatch
 *   at the field is left out when another issue names a field inside it, which is the precise one.
 * Linear in the issues (a 1 MiB file can hold 100,000 of them): the fields named by the others are
 * collected once.
 */
const withoutNoise = (
  all: ReadonlyArray<ParseResult.ArrayFormatterIssue>
): ReadonlyArray<ParseResult.ArrayFormatterIssue> => {
  const named = new Set<string>()
  const inside = new Set<string>()
  for (const issue of all) {
    if (isUndefinedMember(issue)) continue
    for (let depth = 0; depth <= issue.path.length; depth++) {
      const key = JSON.stringify(issue.path.slice(0, depth).map(String))
      named.add(key)
      if (depth < issue.path.length) inside.add(key)
    }
  }
  return all.filter((issue) => {
    const key = JSON.stringify(issue.path.map(String))
    return isUndefinedMember(issue) ? !named.has(key) : !((issue._tag === "Type" || issue._tag === "Composite") && inside.has(key))
  })
}

/**
 * The rule a choice of literals states, with what was found: `Expected "none" | "worker" |
 * "process", actual "thread"` (`more` adds what else is accepted: `, or …`).
 * @since 0.1.0
 * @category utils
 */
export const choiceRule = (literals: ReadonlyArray<AST.LiteralValue>, actual: unknown, more = ""): string =>
  oneLine(
    `Expected ${literals.map((literal) => JSON.stringify(literal)).join(" | ")}${more}, actual ${JSON.stringify(actual) ?? String(actual)}`,
    ruleMax
  )

/**
 * A choice of literals whose refusal is one issue, `choiceRule`'s, rather than one per literal (a
 * file that reports every fault would print each).
 * @since 0.1.0
 * @category schemas
 */
export const literalChoice = <const Literals extends readonly [AST.LiteralValue, ...Array<AST.LiteralValue>]>(
  ...literals: Literals
) =>
  Schema.Literal(...literals).annotations({
    message: (issue) => ({ message: choiceRule(literals, issue.actual), override: true })
  })

/**
 * Every issue of decoding a JSON document (decode with `errors: "all"` to have them all), in the
 * formatter's order, each as `documentIssue` words it (an optional field's "Expected undefined"
 * beside its rule left out).
 * @since 0.1.0
 * @category utils
 */
export const documentIssues = (error: ParseResult.ParseError): readonly [FieldRule, ...Array<FieldRule>] => {
  const [first, ...rest] = withoutNoise(ParseResult.ArrayFormatter.formatErrorSync(error))
  return first === undefined
    ? [{ field: "", rule: oneLine(error.message, ruleMax) }]
    : [documentFieldRule(first), ...rest.map(documentFieldRule)]
}

/**
 * A field and rule as one line: `field: rule`, or the rule alone for the document itself.
 * @since 0.1.0
 * @category utils
 */
export const fieldRuleLine = ({ field, rule }: FieldRule): string => field === "" ? rule : `${field}: ${rule}`

/**
 * The first issue of a parse error on one line, `field: rule` (the rule alone for the value
 * itself), cut to 300 characters.
 * @since 0.1.0
 * @category utils
 */
export const issueLine = (error: ParseResult.ParseError): string => {
  const { field, rule } = firstIssue(error)
  return oneLine(field === "" ? rule : `${field}: ${rule}`, 300)
}
