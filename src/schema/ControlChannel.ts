/**
 * The running daemon's control channel (docs/cli.md, "The daemon's control channel"): the one
 * request it takes, its answer, the record that says where it listens, and its two failures. Each
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
  path: Schema.String
})

/**
 * Where the running daemon's channel listens.
 * @since 0.1.0
 * @category models
 */
export type ControlRecord = typeof ControlRecord.Type

/**
 * A daemon runs on the root, but its channel cannot be reached: it published none in time, or the
 * socket refused, or the connection closed before the answer (a daemon that stops interrupts the
 * calls it is running). The call is not made anywhere else (a second City beside the daemon would
 * initialize its plugins a second time).
 * @since 0.1.0
 * @category errors
 */
export class ControlChannelUnreachable extends Schema.TaggedError<ControlChannelUnreachable>()("ControlChannelUnreachable", {
  root: Schema.String,
  pid: Schema.Int,
  reason: Schema.String
}) {
  override get message() {
    return `the city daemon (pid ${this.pid}) runs on ${this.root}, but its control channel cannot be reached: ${this.reason} ` +
      `(a call runs in the daemon's City only: no second City is loaded beside it)`
  }
}

/**
 * The daemon cannot serve its control channel: the socket's path is taken by something that is
 * not a socket, or the socket cannot listen. The daemon does not start.
 * @since 0.1.0
 * @category errors
 */
export class ControlChannelFailed extends Schema.TaggedError<ControlChannelFailed>()("ControlChannelFailed", {
  path: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `the control channel cannot listen on ${this.path}: ${this.detail}`
  }
}
