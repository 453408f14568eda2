/**
 * The per-call timeout of an isolated plugin (docs/plugin-loader.md, "Isolation": a spinning call
 * fails with `IsolatedCallTimedOut`), kept by one watchdog rather than a timer per call (a timeout
 * per call cost more than the rest of the call's host side): the calls in flight are listed with
 * their start, and when the oldest has run over the timeout and the worker does not answer a ping,
 * its event loop is stuck and the thread is ended; the calls it cut fail with
 * IsolatedCallTimedOut. A call that waits (for the network, say) while the worker answers is not
 * cut, as a call in the host's own thread is not.
 * @since 0.1.0
 */
import type { WorkerError } from "@effect/platform/WorkerError"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as ParseResult from "effect/ParseResult"
import * as Schedule from "effect/Schedule"
import type { ActionOutputRejected } from "../../../schema/Errors.ts"
import * as Isolation from "../../../schema/Isolation.ts"
import type { WorkerThread } from "./workerThread.ts"

/** How long a worker has to answer a ping after a call ran over its timeout. */
const pingTimeout = Duration.seconds(1)

/**
 * The calls of one worker under the timeout: `call` runs a request in flight, the platform's
 * failures becoming the plugin's; `start` forks the watchdog in the caller's Scope.
 * @since 0.1.0
 * @category internals
 */
export const makeCallWatchdog = (name: string, thread: WorkerThread, callTimeout: Duration.Duration) => {
  const { failed, stop, worker } = thread
  const inFlight = new Set<{ readonly at: number; readonly what: string }>()
  let stuck = false
  const callMillis = Duration.toMillis(callTimeout)

  /** A request to the worker, in flight until it ends; the platform's failures become the plugin's. */
  const call = <A, E extends Isolation.IsolatedFailure | Isolation.ActionError | ActionOutputRejected>(
    request: Effect.Effect<A, E | WorkerError | ParseResult.ParseError>,
    what: string
  ): Effect.Effect<A, E | Isolation.IsolatedFailure | Isolation.WorkerEnded | Isolation.IsolatedCallTimedOut> =>
    Effect.flatMap(Clock.currentTimeMillis, (at) => {
      const entry = { at, what }
      inFlight.add(entry)
      return request.pipe(
        Effect.ensuring(Effect.sync(() => inFlight.delete(entry))),
        Effect.catchAll((e): Effect.Effect<never, E | Isolation.IsolatedFailure | Isolation.WorkerEnded | Isolation.IsolatedCallTimedOut> => {
          if (e._tag === "WorkerError") {
            return stuck ? Effect.fail(new Isolation.IsolatedCallTimedOut({ plugin: name, what, millis: callMillis })) : failed(e as WorkerError, what)
          }
          return e._tag === "ParseError" ? failed(e as ParseResult.ParseError, what) : Effect.fail(e as E)
        })
      )
    })

  const watchdog = Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    let oldest: { readonly at: number; readonly what: string } | undefined
    for (const entry of inFlight) {
      if (now - entry.at >= callMillis && (oldest === undefined || entry.at < oldest.at)) oldest = entry
    }
    if (oldest === undefined || stuck) return
    const answers = yield* worker.executeEffect(new Isolation.Ping()).pipe(Effect.timeout(pingTimeout), Effect.isSuccess)
    if (answers) return
    stuck = true
    yield* stop(
      `it stopped answering: ${oldest.what} ran over ${callMillis} ms and the worker did not answer within ${Duration.toMillis(pingTimeout)} ms more`
    )
  })

  const start = Effect.forkScoped(Effect.repeat(watchdog, Schedule.spaced(Duration.millis(Math.max(10, Math.min(1000, callMillis / 2))))))
  return { call, start }
}

/**
 * A worker's `call`, as `makeCallWatchdog` makes it.
 * @since 0.1.0
 * @category internals
 */
export type Call = ReturnType<typeof makeCallWatchdog>["call"]
