/**
 * Plugin names (docs/city-plugin-lifecycle.md: "A Plugin ID cannot be registered twice in one City").
 *
 * The safe character set, chosen so a name is also a folder name, a log value and a CLI argument
 * without quoting: 1 to 64 characters, ASCII letters, digits, `.`, `_` and `-`, starting with a
 * letter or a digit. Names compare in code-unit order and are case-sensitive.
 *
 * One name per folder, whatever the file system: a name stays as written (mixed case), but since
 * it is also a folder name (`<root>/data/<name>`, a plugin folder) and two names must never land
 * in one folder of a case-insensitive file system, a City refuses a plugin whose name equals a
 * registered one ignoring case (`PluginAlreadyRegistered`, naming the registered one), in
 * `city.plugins.add` and in the list of start plugins alike. The registered name holds its
 * lower-case form until its snapshot is gone (removed, or closed).
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { RegistryError } from "./Errors.ts"

/**
 * The plugin name rule as a Schema: decoding checks it and brands the string.
 * @since 0.1.0
 * @category models
 */
export const PluginName = Schema.String.pipe(
  Schema.filter((s) => s.length > 0 || "must not be empty", { jsonSchema: { minLength: 1 } }),
  Schema.filter((s) => s.trim() === s || "must not have leading or trailing white space"),
  Schema.filter((s) => s.length <= 64 || "must be at most 64 characters", { jsonSchema: { maxLength: 64 } }),
  Schema.filter(
    (s) =>
      /^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(s) ||
      "must start with a letter or digit and use only letters, digits, '.', '_' and '-'",
    { jsonSchema: { pattern: "^[A-Za-z0-9][A-Za-z0-9._-]*$" } }
  ),
  Schema.brand("PluginName"),
  Schema.annotations({ identifier: "PluginName" })
)
/**
 * A string that follows the plugin name rule.
 * @since 0.1.0
 * @category models
 */
export type PluginName = typeof PluginName.Type

/**
 * Checks a name against the rule: `undefined` when it is valid, else the InvalidPluginName that
 * says which part of the rule it breaks.
 * @since 0.1.0
 * @category utils
 */
export const check = (name: unknown): RegistryError | undefined => {
  const valid = Schema.decodeUnknownEither(PluginName)(name)
  return Either.isRight(valid)
    ? undefined
    : new RegistryError({ reason: "InvalidPluginName", plugin: String(name), rule: ParseResult.TreeFormatter.formatErrorSync(valid.left) })
}
