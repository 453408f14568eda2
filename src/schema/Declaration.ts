/**
 * A capability declaration, `$CITY_ROOT/capabilities/<name>.json`
 * (docs/capability-plugin-lifecycle.md, "Declaration"). The Schema is the single
 * source of the rules; each rule carries its own message, its sentence from
 * DeclarationRules.ts (the list docs/cli.md, "Declaration rules", is tested
 * against), and the field it concerns comes from the path of the failing issue.
 *
 * Decisions where the spec is silent:
 * - unknown top-level or command fields are refused (a misspelt `unprovison`
 *   would otherwise be dropped without a word);
 * - a `{placeholder}` that is not one of the five known ones is refused (it would
 *   reach the plugin literally);
 * - `runtimes` may not repeat a runtime; `package` and `version` are optional
 *   but, when present, non-empty strings.
 *
 * Printed fields (src/schema/Printable.ts: no control, bidirectional or line-separator
 * characters): `package`, `version`, `provision.command` and `unprovision.command`; `capability`
 * and `runtimes` are names (src/schema/Name.ts), stricter still. `args` are passed to the command
 * and never printed, so they only refuse NUL (an argument may carry a tab or a newline);
 * `$schema` is not read by City.
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { declarationRules as rules } from "./DeclarationRules.ts"
import { Name } from "./Name.ts"
import { printable } from "./Printable.ts"

/**
 * The placeholders substituted inside each argument.
 * @since 0.1.0
 * @category constants
 */
export const placeholders = ["personality", "runtime", "cwd", "occasion", "privateDir"] as const
/**
 * One of the placeholders substituted inside an argument.
 * @since 0.1.0
 * @category models
 */
export type Placeholder = (typeof placeholders)[number]

const placeholderPattern = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g

/** Every `{name}` found in an argument, known or not. */
const placeholdersIn = (arg: string): ReadonlyArray<string> =>
  Array.from(arg.matchAll(placeholderPattern), (match) => match[1] ?? "")

const isKnownPlaceholder = (name: string): name is Placeholder =>
  (placeholders as ReadonlyArray<string>).includes(name)

const NoNul = Schema.String.pipe(
  Schema.filter((s) => !s.includes("\u0000") || rules.noNul.sentence)
)

/**
 * `command`: an absolute path, because a service manager's minimal PATH resolves nothing.
 * @since 0.1.0
 * @category schemas
 */
export const AbsoluteCommand = NoNul.pipe(
  printable,
  Schema.filter((s) =>
    s.startsWith("/") || `${rules.absoluteCommand.sentence}, got ${JSON.stringify(s)}`,
    { jsonSchema: { pattern: "^/" } }
  ),
  Schema.filter((s) => placeholdersIn(s).length === 0 || rules.commandWithoutPlaceholders.sentence)
)

/**
 * `args`: an argv tail of strings, carrying `{personality}`, with known placeholders only (both
 * rules are judged, so an argument list that breaks both says so twice).
 * @since 0.1.0
 * @category schemas
 */
export const Args = Schema.Array(NoNul).pipe(
  Schema.filter((args) => {
    const unknown = args.flatMap(placeholdersIn).filter((name) => !isKnownPlaceholder(name))
    const carries = args.some((arg) => placeholdersIn(arg).includes("personality"))
    const known = placeholders.map((p) => `{${p}}`).join(", ")
    return [
      unknown.length === 0 ? undefined : `${rules.knownPlaceholders.sentence} {${unknown[0]}}; known: ${known}`,
      carries ? undefined : rules.personality.sentence
    ]
  })
)

/**
 * One of the two declared commands.
 * @since 0.1.0
 * @category schemas
 */
export const CommandSpec = Schema.Struct({ command: AbsoluteCommand, args: Args })
/**
 * One of the two declared commands, as decoded.
 * @since 0.1.0
 * @category models
 */
export type CommandSpec = typeof CommandSpec.Type

const NonEmptyString = Schema.String.pipe(Schema.filter((s) => s.length > 0 || rules.nonEmptyString.sentence), printable)

/**
 * `runtimes`: a non-empty list of runtime names, without repeats.
 * @since 0.1.0
 * @category schemas
 */
export const DeclaredRuntimes = Schema.Array(Name).pipe(
  Schema.filter((rs) => rs.length > 0 || rules.runtimesNonEmpty.sentence, { jsonSchema: { minItems: 1 } }),
  Schema.filter((rs) => new Set(rs).size === rs.length || rules.runtimesDistinct.sentence, { jsonSchema: { uniqueItems: true } })
)

/**
 * The declaration as stored.
 * @since 0.1.0
 * @category schemas
 */
export const Declaration = Schema.Struct({
  /** The JSON Schema an editor validates the file against (`schemas/capability-declaration.schema.json`); not used by City. */
  $schema: Schema.optional(Schema.String),
  schema: Schema.Literal(1).annotations({ message: () => rules.schema.sentence }),
  capability: Name,
  package: Schema.optional(NonEmptyString),
  version: Schema.optional(NonEmptyString),
  runtimes: DeclaredRuntimes,
  provision: CommandSpec,
  unprovision: CommandSpec
})
/**
 * A capability declaration, as decoded.
 * @since 0.1.0
 * @category models
 */
export type Declaration = typeof Declaration.Type
