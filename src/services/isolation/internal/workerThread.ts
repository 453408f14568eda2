/**
 * The worker thread of one isolated plugin, as its resource (docs/plugin-loader.md, "Isolation";
 * docs/design.md, "Third-party plugins": "Isolation is a resource"): `@effect/platform-node`'s
 * NodeWorker under `@effect/platform`'s serialized Worker, with a heap cap
 * (`resourceLimits.maxOldGenerationSizeMb`), and why the thread ended, once it has.
 * @since 0.1.0
 */
import * as NodeWorker from "@effect/platform-node/NodeWorker"
import * as Worker from "@effect/platform/Worker"
import type { WorkerError } from "@effect/platform/WorkerError"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as ParseResult from "effect/ParseResult"
import { Worker as Thread } from "node:worker_threads"
import type { ActionOutputRejected } from "../../../schema/Errors.ts"
import * as Isolation from "../../../schema/Isolation.ts"
import { WorkerScript } from "../WorkerScript.ts"

/** Why a thread ended, in words, from its exit code and the last error it emitted. */
const endReason = (code: number, error: unknown, heapMb: number): string => {
  if (typeof error === "string") return error
  if (error instanceof Error) {
    if ((error as { code?: unknown }).code === "ERR_WORKER_OUT_OF_MEMORY") return `it ran out of memory (heap cap ${heapMb} MiB)`
    return `uncaught ${error.name}: ${error.message}`
  }
  return code === Isolation.abortExitCode ? "it called process.abort()" : `it exited with code ${code}`
}

/**
 * Starts the plugin's worker thread in the caller's Scope: the serialized Worker, `ended` (done
 * with why the thread ended), `stop` (ends the thread; `reason`, when given, becomes why), and
 * `failed` (a platform failure of a request as the plugin's typed failure).
 * @since 0.1.0
 * @category internals
 */
export const startThread = (name: string, heapMb: number) =>
  Effect.gen(function*() {
    const script = yield* WorkerScript
    const ended = yield* Deferred.make<string>()
    let thread: Thread | undefined
    let lastError: unknown

    const spawn = () => {
      const worker = new Thread(new URL(script.url), { resourceLimits: { maxOldGenerationSizeMb: heapMb } })
      worker.on("error", (error) => {
        lastError ??= error
      })
      worker.on("exit", (code) => {
        // unsafe: a Node event listener, outside any fiber, where no Effect can run.
        Deferred.unsafeDone(ended, Exit.succeed(endReason(code, lastError, heapMb)))
      })
      thread = worker
      return worker
    }
    const stop = (reason?: string) =>
      Effect.promise(async () => {
        if (reason !== undefined) lastError ??= reason
        await thread?.terminate()
      })

    const worker = yield* Worker.makeSerialized<Isolation.Request>({}).pipe(
      Effect.provide(NodeWorker.layer(spawn)),
      Effect.mapError((error) => new Isolation.WorkerEnded({ plugin: name, reason: `it could not start: ${error.message}` }))
    )
    /** Why the worker is gone, once it is. */
    const gone = Deferred.await(ended)
    const failed = (error: WorkerError | ParseResult.ParseError, what: string): Effect.Effect<never, Isolation.IsolatedFailure | Isolation.WorkerEnded> =>
      error._tag === "ParseError"
        ? Effect.fail(new Isolation.IsolatedFailure({ plugin: name, what, reason: error.message }))
        : Effect.flatMap(Effect.timeoutTo(gone, { duration: "1 second", onSuccess: (r) => r, onTimeout: () => error.message }), (reason) =>
          Effect.fail(new Isolation.WorkerEnded({ plugin: name, reason })))
    /** A request to the worker; the platform's failures become the plugin's (`what` names the request). */
    const call = <A, E extends Isolation.IsolatedFailure | Isolation.ActionError | ActionOutputRejected>(
      request: Effect.Effect<A, E | WorkerError | ParseResult.ParseError>,
      what: string
    ): Effect.Effect<A, E | Isolation.IsolatedFailure | Isolation.WorkerEnded> =>
      Effect.catchIf(
        request,
        (e): e is WorkerError | ParseResult.ParseError => e._tag === "WorkerError" || e._tag === "ParseError",
        (e) => failed(e, what)
      )
    /** The thread's id (the inspector's `workerId`), once it is spawned. */
    const threadId = () => thread?.threadId
    return { worker, ended, gone, stop, failed, call, threadId }
  })

/**
 * The plugin's worker thread, as `startThread` makes it.
 * @since 0.1.0
 * @category internals
 */
export type WorkerThread = Effect.Effect.Success<ReturnType<typeof startThread>>
