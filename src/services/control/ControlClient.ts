/**
 * The client end of the daemon's control channel (docs/cli.md, "The daemon's control channel"):
 * finds the running daemon's channel from its record (ControlAddress.ts) and sends it one request.
 *
 * Decisions:
 * - A daemon that runs but has published no channel yet (it is still loading its plugins) is
 *   waited for, up to `publishWait` (30 s, the default time a plugin's initialize may take); a
 *   daemon that stops meanwhile is no daemon. When the time is up the call fails: a daemon runs, so
 *   no second City is loaded beside it.
 * - The socket must accept within 5 s. There is no time limit on the answer (an action takes the
 *   time it takes; Ctrl-C ends the wait, and closing the connection interrupts the call in the
 *   daemon).
 * - Every way the channel fails (refused, closed before the answer, an answer that is not one) is
 *   `ControlChannelUnreachable`, naming the daemon and the reason.
 * @since 0.1.0
 */
import * as NodeSocket from "@effect/platform-node/NodeSocket"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { ControlRequest, ControlResponse } from "../../schema/ControlChannel.ts"
import { DaemonError } from "../../schema/Live.ts"
import { issueLine } from "../../schema/ParseIssue.ts"
import { StateRoot } from "../root/StateRoot.ts"
import * as ControlAddress from "./ControlAddress.ts"
import * as FirstLine from "./internal/firstLine.ts"

/**
 * How long a running daemon that has published no channel is waited for.
 * @since 0.1.0
 * @category constants
 */
export const publishWait = Duration.seconds(30)

/** How often the record is looked at while waiting. */
const lookEvery = Duration.millis(100)

/**
 * The running daemon and its channel's socket: none when no daemon runs on the root; waits (up to
 * `wait`) for a running daemon to publish its channel, then fails with `ControlChannelUnreachable`.
 * @since 0.1.0
 * @category constructors
 */
export const locate = (wait: Duration.DurationInput = publishWait) =>
  Effect.gen(function*() {
    const deadline = Date.now() + Duration.toMillis(Duration.decode(wait))
    for (;;) {
      const found = yield* ControlAddress.current
      if (Option.isNone(found)) return Option.none<{ readonly pid: number; readonly path: string; readonly version: Option.Option<string> }>()
      const { path, pid, version } = found.value
      if (Option.isSome(path)) return Option.some({ pid, path: path.value, version })
      if (Date.now() > deadline) {
        const root = (yield* StateRoot).root
        return yield* new DaemonError({ reason: "ControlChannelUnreachable",
          root,
          pid,
          detail: `it published no channel within ${Duration.format(Duration.decode(wait))} (no state/control.json of pid ${pid})`
        })
      }
      yield* Effect.sleep(lookEvery)
    }
  })

const encodeRequest = Schema.encodeEither(Schema.parseJson(ControlRequest))
const decodeResponse = Schema.decodeUnknownEither(Schema.parseJson(ControlResponse))

/**
 * Sends `request` to the channel at `socket` (the daemon `pid` of `root`'s) and gives its answer.
 * A daemon whose record names another version than `version` (this `city`'s) is not sent
 * anything: its messages may differ, and the failure says to restart it.
 * @since 0.1.0
 * @category constructors
 */
export const send = (
  target: { readonly root: string; readonly pid: number; readonly path: string; readonly version?: Option.Option<string> },
  request: ControlRequest,
  version?: string
) =>
  Effect.scoped(Effect.gen(function*() {
    const unreachable = (reason: string) => new DaemonError({ reason: "ControlChannelUnreachable", root: target.root, pid: target.pid, detail: reason })
    const theirs = Option.getOrUndefined(target.version ?? Option.none())
    if (version !== undefined && theirs !== undefined && theirs !== version) {
      return yield* unreachable(
        `it runs effect-city ${theirs} and this city is ${version}: restart the daemon with this version (city daemon) to call through it`
      )
    }
    const body = yield* Either.mapLeft(encodeRequest(request), (e) => unreachable(`the request cannot be sent (${issueLine(e)})`))
    // Connecting happens when the socket is read (a refusal ends the reader with its reason).
    const socket = yield* Effect.mapError(
      NodeSocket.makeNet({ path: target.path, openTimeout: Duration.seconds(5) }),
      (e) => unreachable(`${target.path}: ${e.message}`)
    )
    const write = yield* socket.writer
    const reader = yield* FirstLine.read(socket, FirstLine.maxLine)
    // The write waits for the connection; a connection that fails ends the reader with the reason.
    yield* Effect.forkScoped(Effect.ignore(write(`${body}\n`)))
    const text = yield* Effect.mapError(reader.line, (reason) => unreachable(`${target.path}: ${reason}`))
    return yield* Either.mapLeft(decodeResponse(text), (e) => unreachable(`an answer that is not one (${issueLine(e)})`))
  }))
