/**
 * Why the loader skipped a plugin folder (docs/plugin-loader-lifecycle.md: "A malformed
 * manifest, failed import, or throwing registration skips that plugin"), and why a restart was
 * not applied. Each message names the file, the field and the rule, and is the `<reason>` of the
 * `plugin skipped: <name>: <reason>` log line (a refused manifest's: a line per fault, each logged so).
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { FamilyTypeId } from "./ErrorFamily.ts"
import { AnyCause, describeCause } from "./Errors.ts"
import * as Faults from "./Faults.ts"
import { oneLine } from "./OneLine.ts"

/**
 * Why the loader skipped a plugin folder, or could not list a root, each reason with the fields it
 * fills: `ManifestInvalid` (`file`, `issues`, `moreIssues`: `city-plugin.json` is not valid JSON,
 * not an object, or breaks one or more rules, one issue per violated rule, every one at once, the
 * first `Faults.faultsShown`, the others counted), `NotLicensed` (`plugin`: an instance-root
 * plugin outside the licence set, refused before its entry is imported; the message is the
 * spec's, word for word), `EntryNotFound` (`file`, `found`: the entry named by the manifest is
 * missing or is not a file), `PromptRejected` (`file`, `rule`: a prompt file over the size cap, or
 * unreadable), `EntryImportFailed` (`file`, `error`: a syntax error, a missing import, or
 * top-level code that threw), `EntryShapeInvalid` (`file`, `rule`: the entry exports neither a
 * Plugin nor a `register` function, or its Plugin carries another name than the manifest),
 * `RegistrationFailed` (`plugin`, `cause`: a `register` that threw or rejected, an initialize that
 * failed; nothing of it was published, what it acquired was released), `PluginConfigInvalid`
 * (`plugin`, `file`, `key`, `rule`: its value in `plugins.json`'s `config` does not fit its
 * manifest's `configSchema`), `PluginRootUnreadable` (`root`, `detail`: a root that exists but
 * cannot be listed, or is not a directory; a root that does not exist is simply empty).
 * @since 0.1.0
 * @category models
 */
const PluginLoadErrorReason = Schema.Literal(
  "ManifestInvalid",
  "NotLicensed",
  "EntryNotFound",
  "PromptRejected",
  "EntryImportFailed",
  "EntryShapeInvalid",
  "RegistrationFailed",
  "PluginConfigInvalid",
  "PluginRootUnreadable"
)

/**
 * Why the loader skipped a plugin folder, or could not list a root.
 * @since 0.1.0
 * @category models
 */
type PluginLoadErrorReason = typeof PluginLoadErrorReason.Type

/**
 * A plugin folder the loader skipped, or a root it could not list; `reason` says why
 * (`PluginLoadErrorReason`), and its `name` is the reason, the tag it had before (docs/cli.md,
 * "Error tags and the library's error families"). Each message names the file, the field and the
 * rule, and is the `<reason>` of the `plugin skipped: <name>: <reason>` log line (a refused
 * manifest's: a line per fault, each logged so).
 * @since 0.1.0
 * @category errors
 */
export class PluginLoadError extends Schema.TaggedError<PluginLoadError>()("PluginLoadError", {
  reason: PluginLoadErrorReason,
  /** The file at fault: the manifest, the entry, the prompt file, `plugins.json`. */
  file: Schema.optional(Schema.String),
  /** `ManifestInvalid`: one issue per violated rule, the first `Faults.faultsShown`. */
  issues: Schema.optional(Schema.Array(Faults.Fault)),
  /** `ManifestInvalid`: how many issues there were beyond `issues`. */
  moreIssues: Schema.optional(Schema.Number),
  /** `NotLicensed`, `RegistrationFailed`, `PluginConfigInvalid`: the plugin. */
  plugin: Schema.optional(Schema.String),
  /** `EntryNotFound`: what is at the entry's path. */
  found: Schema.optional(Schema.Literal("nothing", "directory", "other")),
  /** `PromptRejected`, `EntryShapeInvalid`, `PluginConfigInvalid`: the rule it breaks. */
  rule: Schema.optional(Schema.String),
  /** `EntryImportFailed`: what the import threw. */
  error: Schema.optional(Schema.Unknown),
  /** `RegistrationFailed`: the failure of the registration or the initialize. */
  cause: Schema.optional(AnyCause),
  /** `PluginConfigInvalid`: the config key. */
  key: Schema.optional(Schema.String),
  /** `PluginRootUnreadable`: the root. */
  root: Schema.optional(Schema.String),
  /** `PluginRootUnreadable`: why it cannot be read. */
  detail: Schema.optional(Schema.String)
}) {
  /** Marks a family's error (`ErrorFamily.printedTag`). */
  get [FamilyTypeId](): true {
    return true
  }
  /** The reason: the tag these failures had before they were one family. */
  override get name(): PluginLoadErrorReason {
    return this.reason
  }
  /**
   * The lines of the message: for `ManifestInvalid` one line per issue, `<file>: <field>: <rule>`,
   * then `… and N more faults` when some were not kept; for any other reason, the message.
   */
  get lines(): ReadonlyArray<string> {
    if (this.reason !== "ManifestInvalid") return [this.message]
    return Faults.lines(
      { faults: this.issues ?? [], moreFaults: this.moreIssues ?? 0 },
      (i) => `${this.file}: ${i.field === "" ? "" : `${i.field}: `}${i.rule}`
    )
  }
  override get message() {
    switch (this.reason) {
      case "ManifestInvalid":
        return this.lines.join("\n")
      case "NotLicensed":
        return "not included in this licence"
      case "EntryNotFound":
        return this.found === "nothing"
          ? `entry: ${this.file} does not exist`
          : `entry: ${this.file} is a ${this.found === "directory" ? "directory" : "special file"}, not a file`
      case "PromptRejected":
        return `${this.file}: ${this.rule}`
      case "EntryImportFailed": {
        const detail = this.error instanceof Error ? this.error.message : String(this.error)
        return `import of ${this.file} failed: ${oneLine(detail.split("\n")[0] ?? "", 300)}`
      }
      case "EntryShapeInvalid":
        return `${this.file}: ${this.rule}`
      case "RegistrationFailed":
        return `registration failed: ${this.cause === undefined ? "unknown cause" : describeCause(this.cause)}`
      case "PluginConfigInvalid":
        return `${this.file}: config.${this.plugin}.${this.key}: ${this.rule}`
      case "PluginRootUnreadable":
        return `plugin root ${this.root} cannot be read: ${this.detail}`
    }
  }
}

/**
 * One reason a plugin folder was skipped: a `PluginLoadError` of any reason but
 * `PluginRootUnreadable` (which is a root's, not a folder's).
 * @since 0.1.0
 * @category models
 */
export type SkipReason = PluginLoadError
