/**
 * The loader's settings on a state root, `$CITY_ROOT/plugins.json`, read by the `city plugins`
 * verbs (a host application passes its own LoaderOptions instead).
 *
 * ```json
 * { "bundledRoot": "/opt/app/plugins", "enabled": ["notes", "clock"], "licensed": ["notes"] }
 * ```
 * Every field is optional. Decisions: without `enabled`, every plugin folder found is enabled;
 * without `licensed`, every instance-root plugin is licensed (a local install without a licence
 * file gates nothing); `bundledRoot` is overridden by `--bundled`.
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * @since 0.1.0
 * @category models
 */
export const LoaderSettings = Schema.Struct({
  bundledRoot: Schema.optionalWith(Schema.String, { exact: true }),
  enabled: Schema.optionalWith(Schema.Array(Schema.String), { exact: true }),
  licensed: Schema.optionalWith(Schema.Array(Schema.String), { exact: true })
}).annotations({ identifier: "LoaderSettings" })

/**
 * @since 0.1.0
 * @category models
 */
export type LoaderSettings = typeof LoaderSettings.Type

/**
 * `plugins.json` cannot be read or breaks a rule.
 * @since 0.1.0
 * @category errors
 */
export class InvalidLoaderSettings extends Schema.TaggedError<InvalidLoaderSettings>()("InvalidLoaderSettings", {
  file: Schema.String,
  field: Schema.String,
  rule: Schema.String
}) {
  override get message() {
    return `${this.file}: ${this.field === "" ? "" : `${this.field}: `}${this.rule}`
  }
}
