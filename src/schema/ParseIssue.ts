/**
 * Turns a Schema `ParseError` into the field and the rule a person reads:
 * the first issue's path joined with dots (`provision.args`), and its message.
 * @since 0.1.0
 */
import * as ParseResult from "effect/ParseResult"

export interface FieldRule {
  readonly field: string
  readonly rule: string
}

const joinPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (acc, key) =>
      typeof key === "number" ? `${acc}[${key}]` : acc === "" ? String(key) : `${acc}.${String(key)}`,
    ""
  )

/** The first issue of a parse error, as `{ field, rule }`. */
export const firstIssue = (error: ParseResult.ParseError): FieldRule => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  if (issue === undefined) return { field: "", rule: error.message }
  const rule = issue._tag === "Unexpected" ? "is not a known field" : issue.message
  return { field: joinPath(issue.path), rule }
}
