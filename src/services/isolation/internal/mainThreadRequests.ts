/**
 * The isolated plugin's requests to the main thread, worker side (docs/plugin-loader.md,
 * "Isolation"): a log line, a reload request or a sibling call is queued as an item of the
 * `HostCalls` stream the main thread opened, and a request waits for the main thread's
 * `HostAnswer` (the main thread's side is hostCalls.ts).
 * @since 0.1.0
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as Isolation from "../../../schema/Isolation.ts"

/** The last item of the queue: the plugin is disposed, its requests end (`stream` ends there). */
const ended = Symbol("ended")

/**
 * The queue of the plugin's requests and their answers; `pluginName` names the plugin in a failed
 * answer. `forward` is the logger that sends the plugin's log lines to the main thread. `stream`
 * is the `HostCalls` stream, which `end` ends once every request queued before it is sent: the
 * log lines of a dispose reach the main thread, which waits for the stream's end before it ends
 * the thread (hostCalls.ts).
 * @since 0.1.0
 * @category internals
 */
export const makeMainThreadRequests = (pluginName: () => string) =>
  Effect.gen(function*() {
    const calls = yield* Queue.unbounded<Isolation.HostCall | typeof ended>()
    const pending = new Map<number, Deferred.Deferred<unknown, Isolation.IsolationError>>()
    let nextId = 0

    /** One request of the plugin to the main thread, answered by `HostAnswer`. */
    const ask = (make: (id: number) => Isolation.HostCall) =>
      Effect.gen(function*() {
        const id = ++nextId
        const answer = yield* Deferred.make<unknown, Isolation.IsolationError>()
        pending.set(id, answer)
        yield* Queue.offer(calls, make(id))
        return yield* Deferred.await(answer).pipe(Effect.ensuring(Effect.sync(() => pending.delete(id))))
      })

    const invoke = (context: typeof Isolation.CallContext.Type, plugin: string, action: string, input: unknown) =>
      ask((id) => ({ _tag: "Invoke", id, context, plugin, action, input }))

    const forward = Logger.make(({ logLevel, message }) => {
      const text = Array.isArray(message) ? message.map(String).join(" ") : String(message)
      const level = logLevel._tag === "Debug" || logLevel._tag === "Trace"
        ? "debug"
        : logLevel._tag === "Info"
        ? "info"
        : logLevel._tag === "Warning"
        ? "warn"
        : "error"
      // unsafe: a logger runs synchronously inside the logging fiber, where no Effect can run; the
      // queue is unbounded, so the offer always succeeds at once.
      Queue.unsafeOffer(calls, { _tag: "Log", level, message: text })
    })

    const answer = (request: Isolation.HostAnswer) =>
      Effect.suspend(() => {
        const waiting = pending.get(request.id)
        if (waiting === undefined) return Effect.void
        const outcome = request.outcome
        return Deferred.complete(
          waiting,
          outcome._tag === "Succeeded"
            ? Effect.succeed(outcome.value)
            : Effect.fail(
              new Isolation.IsolationError({
                reason: "IsolatedFailure",
                plugin: pluginName(),
                what: "a request to the host",
                ...(outcome.errorTag === undefined ? {} : { errorTag: outcome.errorTag }),
                detail: outcome.reason
              })
            )
        )
      })

    const stream = Stream.fromQueue(calls).pipe(
      Stream.takeWhile((call): call is Isolation.HostCall => call !== ended)
    )
    const end = Queue.offer(calls, ended)

    return { stream, end, ask, invoke, forward, answer }
  })

/**
 * The plugin's requests to the main thread, as `makeMainThreadRequests` makes them.
 * @since 0.1.0
 * @category internals
 */
export type MainThreadRequests = Effect.Effect.Success<ReturnType<typeof makeMainThreadRequests>>
