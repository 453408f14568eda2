/**
 * The first line a peer sends on a socket (docs/cli.md, "The daemon's control channel": one line
 * of JSON each way): read in the caller's Scope until the first newline, at most `max` bytes,
 * strictly UTF-8. Both ends of the control channel read this way.
 * @since 0.1.0
 */
import type * as Socket from "@effect/platform/Socket"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type * as Scope from "effect/Scope"

/**
 * The longest line either end of the control channel sends, in bytes: 16 MiB.
 * @since 0.1.0
 * @category constants
 */
export const maxLine = 16 * 1024 * 1024

/**
 * What is read from a socket.
 * @since 0.1.0
 * @category models
 */
export interface FirstLine {
  /**
   * The text before the first newline; fails with the reason in words when the peer closes first,
   * the socket fails (it could not connect, for a client), more than `max` bytes come without a
   * newline, or the line is not UTF-8.
   */
  readonly line: Effect.Effect<string, string>
  /** Completes when the peer has closed the connection (or it failed). */
  readonly closed: Effect.Effect<void>
}

/** A socket failure in words: the platform's cause (`connect ECONNREFUSED <path>`), else its message. */
const reasonOf = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause)
  const inner: unknown = typeof error === "object" && error !== null ? Reflect.get(error, "cause") : undefined
  if (inner instanceof Error) return inner.message
  return error instanceof Error ? error.message : String(error)
}

/**
 * Reads `socket` (for its whole life, in the caller's Scope) and gives its first line.
 * @since 0.1.0
 * @category constructors
 */
export const read = (socket: Socket.Socket, max: number): Effect.Effect<FirstLine, never, Scope.Scope> =>
  Effect.gen(function*() {
    const line = yield* Deferred.make<string, string>()
    const chunks: Array<Uint8Array> = []
    let size = 0
    let done = false
    const onData = (data: Uint8Array) => {
      if (done) return
      const at = data.indexOf(10)
      const part = at === -1 ? data : data.subarray(0, at)
      size += part.length
      if (size > max) {
        done = true
        return Deferred.fail(line, `more than ${max} bytes without a newline`)
      }
      chunks.push(part)
      if (at === -1) return
      done = true
      try {
        return Deferred.succeed(line, new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks)))
      } catch {
        return Deferred.fail(line, "a line that is not UTF-8")
      }
    }
    const reading = yield* socket.run(onData).pipe(
      // Completing a Deferred that is done already changes nothing: only the first word counts.
      Effect.onExit((exit) =>
        Deferred.fail(line, Exit.isSuccess(exit) ? "the connection closed before a whole line came" : reasonOf(exit.cause))
      ),
      Effect.ignore,
      Effect.forkScoped
    )
    return { line: Deferred.await(line), closed: Fiber.await(reading).pipe(Effect.asVoid) }
  })
