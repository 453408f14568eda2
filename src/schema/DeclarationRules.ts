/**
 * Every rule a capability declaration must meet, as data: an id, the fields it concerns and its
 * sentence (docs/capability-plugin-lifecycle.md, "Declaration", "Validation rules", with the
 * decisions of Declaration.ts). The code states each rule with its sentence (the Declaration
 * Schema, the file-stem rule, the host's channel-runtime rule), and docs/cli.md, "Declaration
 * rules", lists each one: test/schema/DeclarationRules.test.ts holds the two to each other, both
 * ways, and decodes an example of each rule to see its sentence in the fault.
 *
 * A sentence is the fixed part of the rule's message, which may go on with what was found
 * (`must equal the file stem "bad", got "good"`). The messages Effect's Schema writes itself (a
 * missing field, a wrong type) and the Printable rule's (it names the character it found) are
 * matched by the part they always start with.
 * @since 0.1.0
 */
import { notJsonSentence, notObjectRule, unknownFieldRule } from "./ParseIssue.ts"
import { nameRule, stemSentence } from "./Name.ts"

/**
 * One rule: the fields it concerns (empty for the file as a whole or any field) and its sentence.
 * @since 0.1.0
 * @category models
 */
export interface DeclarationRule {
  readonly fields: ReadonlyArray<string>
  readonly sentence: string
}

const commands = ["provision.command", "unprovision.command"]
const args = ["provision.args", "unprovision.args"]

/**
 * The rules, by id.
 * @since 0.1.0
 * @category constants
 */
export const declarationRules = {
  json: { fields: [], sentence: notJsonSentence },
  object: { fields: [], sentence: notObjectRule },
  required: {
    fields: ["schema", "capability", "runtimes", "provision", "unprovision", ...commands, ...args],
    sentence: "is missing"
  },
  types: { fields: [], sentence: "Expected " },
  knownFields: { fields: [], sentence: unknownFieldRule },
  schema: { fields: ["schema"], sentence: "must be 1" },
  name: { fields: ["capability", "runtimes"], sentence: nameRule },
  stem: { fields: ["capability"], sentence: stemSentence },
  nonEmptyString: { fields: ["package", "version"], sentence: "must be a non-empty string" },
  printable: { fields: ["package", "version", ...commands], sentence: "contains U+" },
  runtimesNonEmpty: { fields: ["runtimes"], sentence: "must be a non-empty list of runtime names" },
  runtimesDistinct: { fields: ["runtimes"], sentence: "must not list a runtime twice" },
  agentRuntimes: {
    fields: ["runtimes"],
    sentence: "is a channel runtime of this host (host.json), never an endpoint: list agent runtimes only"
  },
  noNul: { fields: [...commands, ...args], sentence: "must not contain a NUL character" },
  absoluteCommand: { fields: commands, sentence: "must be an absolute path (starting with \"/\")" },
  commandWithoutPlaceholders: { fields: commands, sentence: "must not contain placeholders; only args are substituted" },
  knownPlaceholders: { fields: args, sentence: "unknown placeholder" },
  personality: { fields: args, sentence: "must carry {personality}: several personalities can share one cwd" }
} as const satisfies Record<string, DeclarationRule>

/**
 * A rule's id.
 * @since 0.1.0
 * @category models
 */
export type DeclarationRuleId = keyof typeof declarationRules
