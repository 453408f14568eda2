/**
 * A plugin action called by name from outside the City's process (`city plugins call`, docs/cli.md,
 * "Calling a plugin's action"): what is asked, and every way it can end other than with a result,
 * as data. The same values cross the daemon's control channel (schema/ControlChannel.ts) and print
 * in the CLI's envelope, so a call answered by the daemon and one answered by a throwaway City read
 * alike.
 *
 * The errors are the library's: `CityClosed`, and `ActionRejected` (its reasons print as the tags
 * `PluginNotFound`, `ActionNotFound`, `PluginNotReady`, `ActionInputRejected`, `ActionFailed`,
 * `ResultNotJson`), with fields a script can use instead of the library's Cause or Schema tree:
 * `ActionInputRejected` names the field and the rule (`{ plugin, action, field, rule }`),
 * `ActionFailed` carries the action's typed failure as JSON (`failure`: its `_tag`, `message` and
 * own fields) and its one line (`detail`). A plugin's own
 * tag is never the envelope's `_tag`: it could be `UsageError`, and a script could not tell it
 * from bad usage.
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { ActionRejected, CityClosed } from "./Errors.ts"

/**
 * One call: the plugin, the action, its input as decoded from JSON (absent when none was given:
 * the action gets `undefined`), and the caller's working directory (the call's Workspace path).
 * @since 0.1.0
 * @category schemas
 */
export const CallRequest = Schema.Struct({
  plugin: Schema.String,
  action: Schema.String,
  input: Schema.optional(Schema.Unknown),
  cwd: Schema.String
})

/**
 * One call: the plugin, the action, its input and the caller's working directory.
 * @since 0.1.0
 * @category models
 */
export type CallRequest = typeof CallRequest.Type

/**
 * Every way a call ends without a result, as one Schema.
 * @since 0.1.0
 * @category schemas
 */
export const CallError = Schema.Union(ActionRejected, CityClosed)

/**
 * Every way a call ends without a result.
 * @since 0.1.0
 * @category models
 */
export type CallError = typeof CallError.Type
