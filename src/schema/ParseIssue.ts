/**
 * Turns a Schema `ParseError` into the field and the rule a person reads:
 * the first issue's path joined with dots (`provision.args`), and its message.
 *
 * The one formatter of a stored document's decode failure (docs/cli.md, "Stored records that cannot be read"): every JSON
 * file the project reads (owed-work records, endpoint records, fingerprint records, peers,
 * declarations, `host.json`, `plugins.json`, manifests) says `not valid JSON (<reason>)` for text
 * that is not JSON (`notJsonRule`) and the first Schema issue on one line otherwise, never the
 * Schema's tree.
 * @since 0.1.0
 */
import * as ParseResult from "effect/ParseResult"
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
 * The rule of text that is not JSON: `not valid JSON (<reason>)`, the parser's reason on one line.
 * @since 0.1.0
 * @category utils
 */
export const notJsonRule = (reason: string): string => `not valid JSON (${oneLine(reason, reasonMax)})`

const joinPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (acc, key) =>
      typeof key === "number" ? `${acc}[${key}]` : acc === "" ? String(key) : `${acc}.${String(key)}`,
    ""
  )

/**
 * The first issue of a parse error, as `{ field, rule }`.
 * @since 0.1.0
 * @category utils
 */
export const firstIssue = (error: ParseResult.ParseError): FieldRule => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  if (issue === undefined) return { field: "", rule: error.message }
  const rule = issue._tag === "Unexpected" ? "is not a known field" : issue.message
  return { field: joinPath(issue.path), rule }
}

/**
 * The first issue of decoding a JSON document with `Schema.parseJson(schema)`: text that is not
 * JSON reads "not valid JSON (…)", a document that is not an object "must be a JSON object".
 * @since 0.1.0
 * @category utils
 */
export const documentIssue = (error: ParseResult.ParseError): FieldRule => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  if (issue !== undefined && issue.path.length === 0) {
    if (issue._tag === "Transformation") return { field: "", rule: notJsonRule(issue.message) }
    if (issue._tag === "Type" && issue.message.startsWith("Expected {")) return { field: "", rule: "must be a JSON object" }
  }
  const { field, rule } = firstIssue(error)
  return { field: oneLine(field, fieldMax), rule: oneLine(rule, ruleMax) }
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
