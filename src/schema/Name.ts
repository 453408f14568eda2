/**
 * Names that become file stems under the state root: capability names, peer
 * personalities and runtime names. Lower-case so that two names never collide
 * on a case-insensitive file system, and never a path: no `/`, no leading dot.
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * The rule, in words, used by every message that refuses a name.
 * @since 0.1.0
 * @category constants
 */
export const nameRule = "must be 1-64 characters of a-z, 0-9, '.', '_' or '-', starting with a letter or digit"

/**
 * The rule that the name a document carries equals its file stem (`peers/ann.json` holds the peer
 * `ann`), in words.
 * @since 0.1.0
 * @category constants
 */
export const stemSentence = "must equal the file stem"

/**
 * The stem rule's message: `must equal the file stem "ann", got "bob"`.
 * @since 0.1.0
 * @category utils
 */
export const stemRule = (stem: string, got: string): string => `${stemSentence} ${JSON.stringify(stem)}, got ${JSON.stringify(got)}`

const namePattern = /^[a-z0-9][a-z0-9._-]{0,63}$/

/**
 * Is this string a valid name?
 * @since 0.1.0
 * @category utils
 */
export const isName = (value: string): boolean => namePattern.test(value)

/**
 * A capability, personality or runtime name.
 * @since 0.1.0
 * @category schemas
 */
export const Name = Schema.String.pipe(
  Schema.filter((value) => isName(value) || nameRule, { identifier: "Name", jsonSchema: { pattern: namePattern.source } })
)
