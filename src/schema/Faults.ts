/**
 * Every fault of a refused file at once (docs/cli.md, "Declaration rules"): a declaration, a peer
 * file, a plugin manifest or `host.json` that breaks three rules says so in one run, one line per
 * fault naming the file, the field and the rule, rather than one per run.
 *
 * Where the faults come from: the Schema decoded with `errors: "all"` (every issue of the
 * `ParseIssue` tree, through `ParseResult.ArrayFormatter`: `ParseIssue.ts`), then the rules the
 * Schema cannot state alone (a name that must equal the file stem, a runtime this host knows as a
 * channel, a path that must stay inside a plugin's folder), each a `Check` judged on the fields it
 * reads whenever those fields decode, whatever the rest of the file holds.
 *
 * Decisions where the spec is silent:
 * - an error keeps the first `faultsShown` (20) faults and counts the rest (`moreFaults`): a 1 MiB
 *   file could break a rule in each of 100,000 list items, and an error is remembered (a document
 *   store keeps what it refused) and printed;
 * - the same fault found twice (a Check restating a rule the Schema already broke) is listed once;
 * - a rule between fields of one Schema (a peer's `default_runtime` among its `runtimes`,
 *   `host.json`'s runtime both agent and channel) is part of the Schema: it is judged once every
 *   field of the document decodes, so it is reported with the others only then.
 * @since 0.1.0
 */
import type * as Arr from "effect/Array"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/**
 * One fault: the field (a dotted path, `provision.args`, `runtimes[2]`; empty for the file as a
 * whole) and the rule it breaks.
 * @since 0.1.0
 * @category schemas
 */
export const Fault = Schema.Struct({ field: Schema.String, rule: Schema.String })

/**
 * One fault: the field and the rule it breaks.
 * @since 0.1.0
 * @category models
 */
export type Fault = typeof Fault.Type

/**
 * How many faults an error keeps and prints; the others are counted.
 * @since 0.1.0
 * @category constants
 */
export const faultsShown = 20

/**
 * The faults an error carries: the first one as `field` and `rule` (what a reader of one fault
 * reads), the first `faultsShown` as `faults`, and how many more there were.
 * @since 0.1.0
 * @category models
 */
export interface Faults {
  readonly field: string
  readonly rule: string
  readonly faults: ReadonlyArray<Fault>
  readonly moreFaults: number
}

/**
 * The faults of a file, each listed once, the first `faultsShown` kept and the rest counted.
 * @since 0.1.0
 * @category constructors
 */
export const collect = (all: Arr.NonEmptyReadonlyArray<Fault>): Faults => {
  const seen = new Set<string>()
  const distinct = all.filter(({ field, rule }) => {
    const key = JSON.stringify([field, rule])
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
  const [first] = all
  return {
    field: first.field,
    rule: first.rule,
    faults: distinct.slice(0, faultsShown),
    moreFaults: Math.max(0, distinct.length - faultsShown)
  }
}

/**
 * A file with one fault.
 * @since 0.1.0
 * @category constructors
 */
export const one = (field: string, rule: string): Faults => collect([{ field, rule }])

/**
 * The line that counts the faults not listed: `… and 5 more faults`.
 * @since 0.1.0
 * @category utils
 */
export const moreLine = (more: number): string => `… and ${more} more fault${more === 1 ? "" : "s"}`

/**
 * The lines of a file's faults: one per fault kept (`line` names the file, the field and the
 * rule), then `… and N more faults` when some were not kept.
 * @since 0.1.0
 * @category utils
 */
export const lines = (
  faults: Pick<Faults, "faults" | "moreFaults">,
  line: (fault: Fault) => string
): ReadonlyArray<string> => [
  ...faults.faults.map(line),
  ...(faults.moreFaults > 0 ? [moreLine(faults.moreFaults)] : [])
]

/**
 * A rule the Schema cannot state alone, judged on a parsed document (JSON): its faults, none when
 * it holds or when the fields it reads do not decode (their own faults say why).
 * @since 0.1.0
 * @category models
 */
export type Check = (document: unknown) => ReadonlyArray<Fault>

/**
 * A Check on the fields `fields` reads (a `Schema.Struct` of them; other fields are ignored): the
 * rule runs whenever those fields decode, whatever the rest of the document holds.
 * @since 0.1.0
 * @category constructors
 */
export const check = <A, I>(fields: Schema.Schema<A, I>, rule: (fields: A) => ReadonlyArray<Fault>): Check => {
  const decode = Schema.decodeUnknownOption(fields)
  return (document) => Option.match(decode(document), { onNone: () => [], onSome: rule })
}
