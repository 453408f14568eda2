/**
 * The daemon's control channel, served for the daemon's whole life (docs/cli.md, "The daemon's
 * control channel"): a Unix domain socket (ControlAddress.ts says where) on which each connection
 * carries one request and one answer, each one line of JSON (schema/ControlChannel.ts). It is what
 * lets `city plugins call` run an action in the daemon's City instead of initializing the plugins a
 * second time in a City of its own.
 *
 * Decisions:
 * - Built on `@effect/platform`'s `SocketServer` (`NodeSocketServer`), not `@effect/rpc`: the
 *   `city` program never loads `@effect/rpc`, which only `services/cluster/` imports
 *   (docs/cluster.md, "What this part provides"; test/repository/ClusterImports.test.ts). One
 *   request and one answer per connection need no multiplexing, and the messages are Schemas all
 *   the same.
 * - A connection's request is at most 16 MiB, its answer too (`FirstLine.maxLine`); a line that is not a
 *   request is logged as a warning and the connection closed unanswered.
 * - A client that closes its connection before the answer interrupts the call it asked for; a
 *   daemon that stops interrupts the calls it is running (their clients say the connection closed
 *   before the answer, exit 1) rather than waiting for them: its stop is bounded by `--deadline-ms`.
 * - The socket is made 0600 once it listens (its folder is 0700 already); the record is written
 *   after that, so a client never connects before it may. Released in reverse: the record goes,
 *   the connections are interrupted, the server closes (which removes the socket file), and the
 *   fallback folder goes.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import type * as Socket from "@effect/platform/Socket"
import * as NodeSocketServer from "@effect/platform-node/NodeSocketServer"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { ControlRequest, ControlResponse } from "../../schema/ControlChannel.ts"
import { DaemonError } from "../../schema/Live.ts"
import { issueLine } from "../../schema/ParseIssue.ts"
import { fileMode } from "../root/FileModes.ts"
import * as ControlAddress from "./ControlAddress.ts"
import * as FirstLine from "./internal/firstLine.ts"

const decodeRequest = Schema.decodeUnknownEither(Schema.parseJson(ControlRequest))
const encodeResponse = Schema.encodeEither(Schema.parseJson(ControlResponse))

/** One connection: its request, the answer `handle` gives, written back; nothing when the client left first. */
const connection = (handle: (request: ControlRequest) => Effect.Effect<ControlResponse>) => (socket: Socket.Socket) =>
  Effect.scoped(Effect.gen(function*() {
    const write = yield* socket.writer
    const reader = yield* FirstLine.read(socket, FirstLine.maxLine)
    const text = yield* Effect.either(reader.line)
    if (Either.isLeft(text)) return yield* Effect.logDebug(`control channel: no request (${text.left})`)
    const request = decodeRequest(text.right)
    if (Either.isLeft(request)) {
      return yield* Effect.logWarning(`control channel: a line that is not a request, left unanswered (${issueLine(request.left)})`)
    }
    const answer = yield* Effect.raceFirst(Effect.map(handle(request.right), Option.some), Effect.as(reader.closed, Option.none()))
    if (Option.isNone(answer)) return yield* Effect.logInfo("control channel: the client left before the answer; its call was interrupted")
    const encoded = encodeResponse(answer.value)
    if (Either.isLeft(encoded)) return yield* Effect.logError(`control channel: an answer that cannot be sent (${issueLine(encoded.left)})`)
    yield* write(`${encoded.right}\n`)
  })).pipe(
    Effect.catchAllCause((cause) => Effect.logError("control channel: a connection failed", cause))
  )

/**
 * Serves the channel for the caller's Scope, each request answered by `handle`; fails with
 * `ControlChannelFailed` when the socket cannot listen. Call it holding the daemon lock.
 * @since 0.1.0
 * @category constructors
 */
export const serve = (handle: (request: ControlRequest) => Effect.Effect<ControlResponse>, version?: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const where = yield* ControlAddress.prepare
    const folder = where.folder
    if (folder !== undefined) yield* Effect.addFinalizer(() => Effect.ignore(fs.remove(folder, { recursive: true })))
    const server = yield* NodeSocketServer.make({ path: where.path }).pipe(
      Effect.mapError((e) => new DaemonError({ reason: "ControlChannelFailed", path: where.path, detail: e.cause instanceof Error ? e.cause.message : e.message }))
    )
    yield* Effect.mapError(fs.chmod(where.path, fileMode), (e) => new DaemonError({ reason: "ControlChannelFailed", path: where.path, detail: e.message }))
    yield* Effect.forkScoped(server.run(connection(handle)))
    yield* ControlAddress.publish(where.path, version)
    yield* Effect.logInfo(`control channel listening on ${where.path}`)
  })
