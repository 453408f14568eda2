/**
 * The running daemon's control channel (docs/cli.md, "The daemon's control channel"): the one
 * request it takes, its answer, the record that says where it listens (its two failures are `DaemonError`'s `ControlChannelUnreachable` and `ControlChannelFailed`, schema/Live.ts). Each
 * message is one line of JSON (NDJSON) on a Unix domain socket, one request and one answer per
 * connection (services/control/).
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { CallError, CallRequest } from "./ActionCall.ts"

/**
 * A request to the daemon: call one plugin action in its City.
 * @since 0.1.0
 * @category schemas
 */
export const ControlRequest = Schema.TaggedStruct("CallAction", CallRequest.fields)

/**
 * A request to the daemon.
 * @since 0.1.0
 * @category models
 */
export type ControlRequest = typeof ControlRequest.Type

/**
 * The daemon's answer: the action's result (a JSON value), or why there is none.
 * @since 0.1.0
 * @category schemas
 */
export const ControlResponse = Schema.Union(
  Schema.TaggedStruct("Returned", { result: Schema.Unknown }),
  Schema.TaggedStruct("Failed", { error: CallError })
)

/**
 * The daemon's answer.
 * @since 0.1.0
 * @category models
 */
export type ControlResponse = typeof ControlResponse.Type

/**
 * Where the running daemon's channel listens: `state/control.json`, written once its socket
 * listens and removed when it stops. A record whose `pid` is not the running daemon's is a dead
 * daemon's, and is not believed.
 * @since 0.1.0
 * @category schemas
 */
export const ControlRecord = Schema.Struct({
  schema: Schema.Literal(1),
  pid: Schema.Int,
  /** The socket's absolute path. */
  path: Schema.String,
  /**
   * The daemon's effect-city version: a `city` of another version does not call through the
   * channel (its messages may differ), it says to restart the daemon.
   */
  version: Schema.optionalWith(Schema.String, { exact: true })
})

/**
 * Where the running daemon's channel listens.
 * @since 0.1.0
 * @category models
 */
export type ControlRecord = typeof ControlRecord.Type
