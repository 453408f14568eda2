/**
 * What `city.plugins.snapshots()` shows of each live or failed plugin (spec: "City retains an
 * observable status: "error" snapshot with last_error").
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * Where a plugin is in its lifecycle: `initializing`, `ready`, `error` (initialize failed, or it
 * failed on its own), `unresponsive` (an isolated plugin ended for not answering its heartbeat, until
 * it starts again) or `disposing`.
 * @since 0.1.0
 * @category models
 */
export const PluginStatus = Schema.Literal("initializing", "ready", "error", "unresponsive", "disposing")
/**
 * Where a plugin is in its lifecycle.
 * @since 0.1.0
 * @category models
 */
export type PluginStatus = typeof PluginStatus.Type

/**
 * What the registry shows of one live or failed plugin: status, last error, version, source,
 * attempts and time of the last change.
 * @since 0.1.0
 * @category models
 */
export const PluginSnapshot = Schema.Struct({
  name: Schema.String,
  status: PluginStatus,
  last_error: Schema.optional(Schema.String),
  version: Schema.optional(Schema.String),
  /** Where the plugin came from: `code` for `city.plugins.add`, the loader names its root. */
  source: Schema.String,
  /** How many times initialize was attempted for this name since it last left the registry. */
  attempts: Schema.Number,
  /** ISO-8601 time of the last status change. */
  updated_at: Schema.String
})
/**
 * What the registry shows of one live or failed plugin.
 * @since 0.1.0
 * @category models
 */
export type PluginSnapshot = typeof PluginSnapshot.Type

/**
 * One change of the registry, as `city.plugins.changes` streams it: a snapshot that is new or
 * changed, or a name that left the registry. A subscriber first receives the current snapshots,
 * then every change: O(1) per change whatever the number of plugins.
 * @since 0.1.0
 * @category models
 */
export type SnapshotChange =
  | { readonly _tag: "Updated"; readonly snapshot: PluginSnapshot }
  | { readonly _tag: "Removed"; readonly name: string }
