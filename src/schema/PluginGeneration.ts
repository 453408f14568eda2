/**
 * What the `city daemon` and `city plugins reload` share through the state root about plugin
 * generations (docs/plugin-loader-lifecycle.md, "Lifecycle and layout"): the durable restart
 * requests (`state/plugins/restart.json`) and the generation the running daemon serves
 * (`state/plugins/generation.json`). The service that reads and writes them is
 * services/loader/RestartRequests.ts.
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { LoadReport } from "./LoadReport.ts"

const Sequence = Schema.Int.pipe(Schema.nonNegative())

/**
 * `state/plugins/restart.json`: the restart requests made and applied, in sequence numbers.
 * @since 0.1.0
 * @category models
 */
export const RestartRecord = Schema.Struct({
  schema: Schema.Literal(1),
  requested: Sequence,
  applied: Sequence,
  /** The reason of the last request. */
  reason: Schema.String,
  requested_at: Schema.String,
  updated_at: Schema.String,
  /** The last failed restart: what it was for, and why it failed. Cleared by a success. */
  last_error: Schema.optional(Schema.Struct({ target: Sequence, reason: Schema.String, at: Schema.String }))
})
/**
 * `state/plugins/restart.json`: the restart requests made and applied.
 * @since 0.1.0
 * @category models
 */
export type RestartRecord = typeof RestartRecord.Type

/**
 * `state/plugins/generation.json`: the generation the running daemon serves.
 * @since 0.1.0
 * @category models
 */
export const RunningGeneration = Schema.Struct({
  schema: Schema.Literal(1),
  /** The daemon's pid. */
  pid: Schema.Int,
  generation: Schema.Number,
  started_at: Schema.String,
  report: LoadReport,
  /**
   * The loaded plugins that are not `ready` now (an isolated plugin `unresponsive` or `error`
   * until its restart, one ended by a fault), as the daemon last saw them: republished at each
   * change of a plugin's status.
   */
  unwell: Schema.optionalWith(
    Schema.Array(Schema.Struct({ name: Schema.String, status: Schema.String, last_error: Schema.optionalWith(Schema.String, { exact: true }) })),
    { exact: true }
  )
})
/**
 * `state/plugins/generation.json`: the generation the running daemon serves.
 * @since 0.1.0
 * @category models
 */
export type RunningGeneration = typeof RunningGeneration.Type
