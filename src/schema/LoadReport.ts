/**
 * What one load of the plugin set did (docs/plugin-loader-lifecycle.md: skips are logged, and "An
 * enabled name that no root provides is reported once at the end"): the plugins loaded with
 * their root, the folders skipped with their reason, the enabled names no root provides.
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { IsolationMode } from "./Isolation.ts"

/**
 * Which root a folder comes from: the bundled root is scanned first, the instance root second.
 * @since 0.1.0
 * @category models
 */
export const RootKind = Schema.Literal("bundled", "instance")
/**
 * Which root a folder comes from.
 * @since 0.1.0
 * @category models
 */
export type RootKind = typeof RootKind.Type

/**
 * A contribution that a manifest's `provides` did not cover: dropped, with a warning.
 * @since 0.1.0
 * @category models
 */
export const DroppedContribution = Schema.Struct({
  kind: Schema.Literal("action", "skill", "hook"),
  name: Schema.String,
  /** The `provides` list that left it out. */
  key: Schema.Literal("tools", "skills", "hooks")
})

/**
 * A plugin that loaded: its name, version, root and folder.
 * @since 0.1.0
 * @category models
 */
export const LoadedPlugin = Schema.Struct({
  name: Schema.String,
  version: Schema.String,
  root: RootKind,
  /** The plugin folder, absolute. */
  folder: Schema.String,
  /** Contributions its manifest's `provides` did not cover, dropped (the plugin loaded with the rest). */
  dropped: Schema.optionalWith(Schema.Array(DroppedContribution), { default: () => [] }),
  /** One line each: what the loader noticed and let pass (config fields of unknown types, absent files, unknown config keys). */
  warnings: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  /** The keys of `required` config fields left unset (a form hint, never a skip). */
  configUnset: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  /** Where it runs: the host's thread, a worker thread of its own, or a child process of its own. */
  isolation: Schema.optionalWith(IsolationMode, { default: () => "none" as const })
})
/**
 * A plugin that loaded: its name, version, root and folder.
 * @since 0.1.0
 * @category models
 */
export type LoadedPlugin = typeof LoadedPlugin.Type

/**
 * A plugin folder that was skipped, with the kind and the reason of its failure.
 * @since 0.1.0
 * @category models
 */
export const SkippedPlugin = Schema.Struct({
  /** The manifest's name, else the folder's. */
  name: Schema.String,
  root: RootKind,
  folder: Schema.String,
  /** The failure's tag (`ManifestInvalid`, `NotLicensed`, `EntryImportFailed`, ...). */
  kind: Schema.String,
  reason: Schema.String
})
/**
 * A plugin folder that was skipped, with the kind and the reason of its failure.
 * @since 0.1.0
 * @category models
 */
export type SkippedPlugin = typeof SkippedPlugin.Type

/**
 * What one load pass did: the plugins loaded, the folders skipped, the enabled names missing.
 * @since 0.1.0
 * @category models
 */
export const LoadReport = Schema.Struct({
  /** The generation this load built (1 at start, +1 per restart). */
  generation: Schema.Number,
  /** In load order: bundled root first, then instance root, each in code-unit name order. */
  loaded: Schema.Array(LoadedPlugin),
  /** Every skipped copy, in the order met; a name may be skipped in one root and loaded from the other. */
  skipped: Schema.Array(SkippedPlugin),
  /** Enabled names that no root provides, sorted (code units). */
  missing: Schema.Array(Schema.String),
  /** Plugin folders that are not enabled (passed over without loading), in scan order. */
  notEnabled: Schema.optionalWith(Schema.Array(Schema.Struct({ name: Schema.String, root: RootKind, folder: Schema.String })), {
    default: () => []
  }),
  /** Load-wide notices, one line each (e.g. instance-root folders and no licence at all). */
  notices: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  /** For a restart: the previous generation's plugins whose dispose failed (the restart went on). */
  disposeFailures: Schema.optionalWith(Schema.Array(Schema.Struct({ name: Schema.String, reason: Schema.String })), {
    exact: true
  })
}).annotations({
  // The one-line text form, read with `Pretty.make(LoadReport)` (docs/library.md, "Reports").
  pretty: () => (report) => loadSummary(report)
})
/**
 * What one load pass did: the plugins loaded, the folders skipped, the enabled names missing.
 * @since 0.1.0
 * @category models
 */
export type LoadReport = typeof LoadReport.Type

const named = (names: ReadonlyArray<string>) => names.length === 0 ? "" : ` (${names.join(", ")})`

/** `generation 2 ready: 3 loaded, 1 skipped (bad), 1 missing (gone)`: counts, and the names of what went wrong. */
const loadSummary = (report: {
  readonly generation: number
  readonly loaded: ReadonlyArray<unknown>
  readonly skipped: ReadonlyArray<{ readonly name: string }>
  readonly missing: ReadonlyArray<string>
  readonly notEnabled: ReadonlyArray<unknown>
  readonly disposeFailures?: ReadonlyArray<{ readonly name: string }>
}): string => {
  const parts = [`${report.loaded.length} loaded`, `${report.skipped.length} skipped${named(report.skipped.map((s) => s.name))}`]
  if (report.missing.length > 0) parts.push(`${report.missing.length} missing${named(report.missing)}`)
  if (report.notEnabled.length > 0) parts.push(`${report.notEnabled.length} not enabled`)
  const disposeFailures = report.disposeFailures ?? []
  if (disposeFailures.length > 0) {
    parts.push(`${disposeFailures.length} of the previous failed to dispose${named(disposeFailures.map((f) => f.name))}`)
  }
  return `generation ${report.generation} ready: ${parts.join(", ")}`
}
