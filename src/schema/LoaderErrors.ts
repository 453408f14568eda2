/**
 * Why the loader skipped a plugin folder (docs/plugin-loader-lifecycle.md: "A malformed
 * manifest, failed import, or throwing registration skips that plugin"), and why a restart was
 * not applied. Each message names the file, the field and the rule, and is the `<reason>` of the
 * `plugin skipped: <name>: <reason>` log line (a refused manifest's: a line per fault, each logged so).
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { AnyCause, describeCause } from "./Errors.ts"
import * as Faults from "./Faults.ts"
import { oneLine } from "./OneLine.ts"

/**
 * `city-plugin.json` is not valid JSON, not an object, or breaks one or more rules: one issue per
 * violated rule, every one of them at once (the first `Faults.faultsShown`, the others counted).
 * @since 0.1.0
 * @category errors
 */
export class ManifestInvalid extends Schema.TaggedError<ManifestInvalid>()("ManifestInvalid", {
  file: Schema.String,
  issues: Schema.Array(Faults.Fault),
  /** How many issues there were beyond `issues`. */
  moreIssues: Schema.optionalWith(Schema.Number, { default: () => 0 })
}) {
  /** One line per issue, `<file>: <field>: <rule>`, then `… and N more faults` when some were not kept. */
  get lines(): ReadonlyArray<string> {
    return Faults.lines(
      { faults: this.issues, moreFaults: this.moreIssues },
      (i) => `${this.file}: ${i.field === "" ? "" : `${i.field}: `}${i.rule}`
    )
  }
  override get message() {
    return this.lines.join("\n")
  }
}

/**
 * An instance-root plugin outside the licence set, refused before its entry is imported.
 * The message is the spec's, word for word.
 * @since 0.1.0
 * @category errors
 */
export class NotLicensed extends Schema.TaggedError<NotLicensed>()("NotLicensed", { plugin: Schema.String }) {
  override get message() {
    return "not included in this licence"
  }
}

/**
 * The entry named by the manifest is missing or is not a file.
 * @since 0.1.0
 * @category errors
 */
export class EntryNotFound extends Schema.TaggedError<EntryNotFound>()("EntryNotFound", {
  file: Schema.String,
  found: Schema.Literal("nothing", "directory", "other")
}) {
  override get message() {
    return this.found === "nothing"
      ? `entry: ${this.file} does not exist`
      : `entry: ${this.file} is a ${this.found === "directory" ? "directory" : "special file"}, not a file`
  }
}

/**
 * A prompt file (`prompt/*.md`) over the size cap, or unreadable.
 * @since 0.1.0
 * @category errors
 */
export class PromptRejected extends Schema.TaggedError<PromptRejected>()("PromptRejected", {
  file: Schema.String,
  reason: Schema.String
}) {
  override get message() {
    return `${this.file}: ${this.reason}`
  }
}

/**
 * Importing the entry failed: a syntax error, a missing import, or top-level code that threw.
 * @since 0.1.0
 * @category errors
 */
export class EntryImportFailed extends Schema.TaggedError<EntryImportFailed>()("EntryImportFailed", {
  file: Schema.String,
  error: Schema.Unknown
}) {
  override get message() {
    const detail = this.error instanceof Error ? this.error.message : String(this.error)
    return `import of ${this.file} failed: ${oneLine(detail.split("\n")[0] ?? "", 300)}`
  }
}

/**
 * The entry exports neither a Plugin (default or `plugin`) nor a `register` function, or its
 * Plugin carries another name than the manifest.
 * @since 0.1.0
 * @category errors
 */
export class EntryShapeInvalid extends Schema.TaggedError<EntryShapeInvalid>()("EntryShapeInvalid", {
  file: Schema.String,
  rule: Schema.String
}) {
  override get message() {
    return `${this.file}: ${this.rule}`
  }
}

/**
 * Registration or initialize failed (a `register` that threw or rejected, an initialize that
 * failed): nothing of it was published, what it acquired was released.
 * @since 0.1.0
 * @category errors
 */
export class RegistrationFailed extends Schema.TaggedError<RegistrationFailed>()("RegistrationFailed", {
  plugin: Schema.String,
  cause: AnyCause
}) {
  override get message() {
    return `registration failed: ${describeCause(this.cause)}`
  }
}

/**
 * A plugin's value in `plugins.json`'s `config` does not fit its manifest's `configSchema`.
 * @since 0.1.0
 * @category errors
 */
export class PluginConfigInvalid extends Schema.TaggedError<PluginConfigInvalid>()("PluginConfigInvalid", {
  plugin: Schema.String,
  file: Schema.String,
  key: Schema.String,
  rule: Schema.String
}) {
  override get message() {
    return `${this.file}: config.${this.plugin}.${this.key}: ${this.rule}`
  }
}

/**
 * One reason a plugin folder was skipped.
 * @since 0.1.0
 * @category models
 */
export type SkipReason =
  | ManifestInvalid
  | PluginConfigInvalid
  | NotLicensed
  | EntryNotFound
  | PromptRejected
  | EntryImportFailed
  | EntryShapeInvalid
  | RegistrationFailed

/**
 * A plugin root could not be listed (it exists but is unreadable, or is not a directory).
 * A root that does not exist is simply empty.
 * @since 0.1.0
 * @category errors
 */
export class PluginRootUnreadable extends Schema.TaggedError<PluginRootUnreadable>()("PluginRootUnreadable", {
  root: Schema.String,
  reason: Schema.String
}) {
  override get message() {
    return `plugin root ${this.root} cannot be read: ${this.reason}`
  }
}
