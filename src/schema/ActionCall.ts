/**
 * A plugin action called by name from outside the City's process (`city plugins call`, docs/cli.md,
 * "Calling a plugin's action"): what is asked, and every way it can end other than with a result,
 * as data. The same values cross the daemon's control channel (schema/ControlChannel.ts) and print
 * in the CLI's envelope, so a call answered by the daemon and one answered by a throwaway City read
 * alike.
 *
 * The tags are the library's where the library has the error (`PluginNotFound`, `ActionNotFound`,
 * `PluginNotReady`, `CityClosed`); two are the library's tags with fields a script can use instead
 * of the library's Cause or Schema tree: `ActionInputRejected` names the field and the rule
 * (`{ plugin, action, field, rule }`), `ActionFailed` carries the action's typed failure as JSON
 * (`failure`: its `_tag`, `message` and own fields) and its one line (`detail`). A plugin's own
 * tag is never the envelope's `_tag`: it could be `UsageError`, and a script could not tell it
 * from bad usage.
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { ActionNotFound, CityClosed, PluginNotFound, PluginNotReady } from "./Errors.ts"
import { oneLine } from "./OneLine.ts"

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
 * The action's input Schema refused the input: the first issue's field (empty for the input
 * itself) and its rule, on one line. The handler did not run.
 * @since 0.1.0
 * @category errors
 */
export class InputRejected extends Schema.TaggedError<InputRejected>()("ActionInputRejected", {
  plugin: Schema.String,
  action: Schema.String,
  field: Schema.String,
  rule: Schema.String
}) {
  override get message() {
    const where = this.field === "" ? "" : `field ${JSON.stringify(this.field)}: `
    return `Input rejected by ${this.plugin}/${this.action}: ${where}${oneLine(this.rule, 300)}`
  }
}

/**
 * The action ran and did not return: `failure` is its typed failure as JSON (`_tag`, `message`
 * and its own fields) when it failed with a tagged value; a defect, an untagged failure, or the
 * plugin's worker ending has none. `detail` says what happened, on one line.
 * @since 0.1.0
 * @category errors
 */
export class CallFailed extends Schema.TaggedError<CallFailed>()("ActionFailed", {
  plugin: Schema.String,
  action: Schema.String,
  failure: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  detail: Schema.String
}) {
  override get message() {
    return `Action ${this.plugin}/${this.action} failed: ${this.detail}`
  }
}

/**
 * The action returned a value that has no JSON form (a BigInt, a cycle): it cannot be printed.
 * @since 0.1.0
 * @category errors
 */
export class ResultNotJson extends Schema.TaggedError<ResultNotJson>()("ResultNotJson", {
  plugin: Schema.String,
  action: Schema.String,
  reason: Schema.String
}) {
  override get message() {
    return `Action ${this.plugin}/${this.action} returned a result that is not JSON: ${this.reason}`
  }
}

/**
 * Every way a call ends without a result, as one Schema.
 * @since 0.1.0
 * @category schemas
 */
export const CallError = Schema.Union(
  PluginNotFound,
  ActionNotFound,
  InputRejected,
  PluginNotReady,
  CallFailed,
  ResultNotJson,
  CityClosed
)

/**
 * Every way a call ends without a result.
 * @since 0.1.0
 * @category models
 */
export type CallError = typeof CallError.Type
