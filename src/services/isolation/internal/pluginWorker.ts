/**
 * The worker side of an isolated folder plugin (docs/plugin-loader.md, "Isolation"; the main
 * thread's side is ../WorkerPlugin.ts): in its own worker thread (or child process), it admits the
 * plugin folder for host-provided modules, imports the entry, runs the plugin's initialize in a
 * Scope it keeps until `Dispose`, and answers the main thread's calls with the plugin's
 * contributions. The plugin's own requests to the main thread (a log line, a reload request, a
 * sibling call) are queued as items of the `HostCalls` stream the main thread opened, and wait for
 * its `HostAnswer`.
 *
 * What the plugin contributes stays here; the main thread gets its shape (action names, hook
 * counts, whether it has system text or an availability check, its skills). An action's input is
 * decoded here with the action's own Schema, so the main thread's proxy takes any input. What
 * cannot cross is refused at initialize (services provided to siblings: a Context cannot leave its
 * thread) or fails the call that tried (a result that cannot be cloned), each with
 * `IsolationError` (reason `IsolatedFailure`). An action implemented from a reference with
 * `output` / `error` Schemas answers encoded with them (its result, and a failure its `error`
 * Schema accepts), for the main thread to decode with the caller's reference; a result its
 * `output` Schema refuses fails the call with `ActionOutputRejected` here.
 *
 * Where it lives: both sides of isolation are one room, services/isolation/. The worker imports a
 * plugin folder's entry exactly as the in-thread loader does (docs/plugin-loader-lifecycle.md,
 * docs/plugin-loader.md, "Host-provided modules"), so what both need (the entry's shape, the
 * `register` adapter, host-provided modules and their resolve hook, the module importer) is a room
 * of its own below both, services/entry/; the loader imports isolation (`WorkerPlugin`, `Workers`),
 * and nothing here imports the loader.
 *
 * In pieces: workerInitialize.ts (the entry, its Scope), workerCalls.ts (the main thread's calls),
 * mainThreadRequests.ts (the plugin's requests), crossing.ts (what crosses), workerGuards.ts (what
 * a thread may not do to the process), processBlame.ts (a process's answer to "what runs?"); this
 * layer wires them.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import type { WorkerError } from "@effect/platform/WorkerError"
import * as WorkerRunner from "@effect/platform/WorkerRunner"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Scope from "effect/Scope"
import * as v8 from "node:v8"
import * as Isolation from "../../../schema/Isolation.ts"
import { HostModules } from "../../entry/HostModules.ts"
import { toFailure } from "./crossing.ts"
import { guardHostProcess } from "./workerGuards.ts"
import { makeMainThreadRequests } from "./mainThreadRequests.ts"
import { makeWorkerCalls } from "./workerCalls.ts"
import { makeInitialize, type WorkerState } from "./workerInitialize.ts"

/**
 * The handlers of the protocol, and the logger that sends the plugin's log lines to the main thread.
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<never, WorkerError, WorkerRunner.PlatformRunner | FileSystem.FileSystem> = Layer.unwrapScoped(
  Effect.gen(function*() {
    guardHostProcess()
    const state: WorkerState = { name: "?", running: undefined }
    const requests = yield* makeMainThreadRequests(() => state.name)
    const calls = makeWorkerCalls(state)

    // The plugin's requests end with its dispose, after the log lines its dispose wrote.
    const dispose = Effect.suspend(() => {
      const current = state.running
      if (current === undefined) return requests.end
      state.running = undefined
      return Scope.close(current.scope, Exit.void).pipe(
        Effect.exit,
        Effect.zipLeft(requests.end),
        Effect.flatMap((exit) =>
          Exit.isSuccess(exit) ? Effect.void : Effect.fail(toFailure(state.name, "dispose", exit.cause))
        )
      )
    })

    // The heartbeat's figures: in a worker thread, the heap, `external` and `arrayBuffers` are the
    // thread's own (Node reports them per isolate); `rss` is the process's.
    const heartbeat = Effect.sync(() => {
      const usage = process.memoryUsage()
      return {
        heapUsed: usage.heapUsed,
        heapLimit: v8.getHeapStatistics().heap_size_limit,
        external: usage.external,
        arrayBuffers: usage.arrayBuffers,
        rss: usage.rss
      }
    })

    return WorkerRunner.layerSerialized(Isolation.Request, {
      Initialize: makeInitialize(state, requests),
      CallAction: calls.callAction,
      CallHook: calls.callHook,
      CallSystem: calls.callSystem,
      CallAvailability: calls.callAvailability,
      Dispose: () => dispose,
      Heartbeat: () => heartbeat,
      HostCalls: () => requests.stream,
      HostAnswer: requests.answer
    }).pipe(Layer.provide(Logger.replace(Logger.defaultLogger, requests.forward)))
  })
).pipe(Layer.provide(Layer.succeed(HostModules, {
  resolveFrom: import.meta.url,
  plugin: new URL("city-plugin.mjs", import.meta.url).href
})))
