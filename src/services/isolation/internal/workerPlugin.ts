/**
 * The initialize of a plugin in a worker thread of its own (docs/plugin-loader.md, "Isolation";
 * the containment is in the WorkerPlugin module's comment): it starts the worker (workerThread.ts)
 * and runs the plugin's own initialize there; its dispose runs the plugin's dispose there, bounded,
 * then ends the thread. The host serves the plugin's requests (hostCalls.ts), bounds its calls
 * (heartbeat.ts: a silent worker is blamed, blame.ts, and ended) and holds proxies of its
 * contributions (workerProxies.ts).
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import { pathToFileURL } from "node:url"
import type { CallBase } from "../../../schema/HostModel.ts"
import * as Isolation from "../../../schema/Isolation.ts"
import { PluginLost } from "../../city/internal/pluginLifecycle.ts"
import { PluginLifecycleContext } from "../../PluginLifecycleContext.ts"
import { Workers } from "../Workers.ts"
import { watchHeartbeat } from "./heartbeat.ts"
import { serveHostCalls } from "./hostCalls.ts"
import { type Kind, startThread } from "./workerThread.ts"
import { workerProxies } from "./workerProxies.ts"
import { PluginStorage } from "../../city/internal/pluginStorage.ts"

const MiB = 1024 * 1024

/**
 * What a plugin's process may hold resident beside its heap and its memory outside it: Node itself
 * (its code, its threads' stacks, Effect and the platform loaded: a small plugin's process at rest
 * here holds 93 MiB resident, 53 MiB of it heap) with room to spare.
 * @since 0.1.0
 * @category constants
 */
export const processBaseMb = 128

/**
 * Which of its caps the isolate's latest figures break, in words (docs/plugin-loader.md, "What each
 * mode caps"): `external` (what its JavaScript holds outside V8's heap: Buffers and ArrayBuffers,
 * `arrayBuffers` being part of it) against the heap cap, in both modes; for a process, its resident
 * size against the heap cap twice (heap and outside it) plus {@link processBaseMb}, which also holds
 * what V8 does not count (a native addon's memory).
 * @since 0.1.0
 * @category internals
 */
export const overCap = (memory: Isolation.Memory, heapMb: number, kind: Kind): Option.Option<string> => {
  if (memory.external > heapMb * MiB) return Option.some(`it used ${Math.round(memory.external / MiB)} MiB outside its heap (cap ${heapMb} MiB)`)
  const rssMb = 2 * heapMb + processBaseMb
  if (kind === "process" && memory.rss > rssMb * MiB) return Option.some(`it held ${Math.round(memory.rss / MiB)} MiB resident (cap ${rssMb} MiB)`)
  return Option.none()
}

/**
 * The isolated plugin's initialize, from its entry's URL, its folder, how it runs and its limits.
 * @since 0.1.0
 * @category internals
 */
export const initialize = (options: {
  readonly name: string
  readonly version: string
  readonly url: string
  readonly folder: string
  readonly kind: Kind
  readonly heapMb: number
  readonly disposeTimeout: Duration.Duration
  readonly invoke: (base: CallBase, plugin: string, action: string, input: unknown) => Effect.Effect<unknown, unknown>
}) =>
  Effect.gen(function*() {
    const { disposeTimeout, heapMb, kind, name } = options
    const lifecycle = yield* PluginLifecycleContext
    const thread = yield* startThread(name, heapMb, kind)
    const { call, ended, failed, gone, stop, worker } = thread
    let initialized = false
    let closing = false
    let unresponsive = false

    // Silent past the limit: name the code it runs, say so, end the thread (docs/plugin-loader.md, "Liveness").
    const heartbeat = yield* watchHeartbeat(worker, (silentMillis) =>
      Effect.gen(function*() {
        const location = yield* Effect.timeoutTo(thread.blame(`${pathToFileURL(options.folder).href}/`), {
          duration: "1500 millis",
          onSuccess: (found) => found,
          onTimeout: () => Option.none<string>()
        })
        const reason = `it was unresponsive: no heartbeat for ${(silentMillis / 1000).toFixed(1)} s${
          Option.isSome(location) ? `, running ${location.value}` : ""
        }`
        yield* Effect.logWarning(`plugin ${name} unresponsive: ${reason}`).pipe(
          Effect.annotateLogs({ code: "plugin.unresponsive", plugin: name, ...(Option.isSome(location) ? { location: location.value } : {}) })
        )
        unresponsive = true
        yield* stop(reason)
      }),
      // Over a memory cap: ended, its snapshot saying which (docs/plugin-loader.md, "What each mode caps").
      (memory) =>
        Option.match(overCap(memory, heapMb, kind), {
          onNone: () => Effect.void,
          onSome: (reason) => closing ? Effect.void : stop(reason)
        })
    ).pipe(Effect.catchAll((error) => failed(error, "start")))
    // The plugin's requests (log lines, reload requests, sibling calls), served until its dispose ends them.
    const hostCalls = yield* serveHostCalls(worker, lifecycle, options.invoke)
    // Dispose: the plugin's own, in the worker (bounded), then the thread ends. Added after the
    // Worker, so it runs before the platform's close (which waits 5 s for a thread that may spin),
    // and after the heartbeat, which therefore still watches it: a dispose that spins is ended
    // when it goes silent, before the dispose timeout. Added after the requests' server too, which
    // therefore still serves the dispose's log lines: the thread ends once they are logged (at most
    // 1 s after the dispose).
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        closing = true
        const alive = !(yield* Deferred.isDone(ended))
        let answered = false
        const disposed = initialized && alive
          ? yield* worker.executeEffect(new Isolation.Dispose()).pipe(
            Effect.onExit((exit) =>
              Effect.sync(() => {
                answered = !Exit.isInterrupted(exit)
              })
            ),
            // A finalizer runs uninterruptibly: the wait must be interruptible for the timeout to end it.
            Effect.interruptible,
            Effect.timeoutFail({
              duration: disposeTimeout,
              onTimeout: () => new Isolation.IsolationError({ reason: "IsolatedFailure", plugin: name, what: "dispose", detail: `did not end within ${Duration.toMillis(disposeTimeout)} ms; the ${kind} was ended`, isolation: kind })
            }),
            Effect.exit
          )
          : Exit.void
        // The dispose's log lines, sent before its answer, are logged before the thread ends.
        if (answered) yield* Effect.interruptible(Effect.ignore(Effect.timeout(Fiber.await(hostCalls), "1 second")))
        yield* stop()
        if (Exit.isFailure(disposed)) return yield* Effect.die(Cause.squash(disposed.cause))
      })
    )

    const shape = yield* call(worker.executeEffect(
      new Isolation.Initialize({
        url: options.url,
        folder: options.folder,
        name,
        version: options.version,
        // The folder, not `path` read here: reading it makes the folder (pluginStorage.ts).
        storagePath: lifecycle.storage instanceof PluginStorage ? lifecycle.storage.folder : lifecycle.storage.path,
        config: { ...lifecycle.config },
        configUnset: [...lifecycle.configUnset]
      })
    ), "initialize")
    initialized = true
    const workers = yield* Effect.serviceOption(Workers)
    if (Option.isSome(workers)) yield* workers.value.add(name, heartbeat.latest)

    // A worker that ends on its own takes the plugin out of the City (PluginLost, in a fiber
    // of its own: it disposes this plugin, whose Scope holds this watcher).
    const lost = yield* Effect.serviceOption(PluginLost)
    yield* gone.pipe(
      Effect.flatMap((reason) =>
        closing || Option.isNone(lost)
          ? Effect.void
          : Effect.asVoid(Effect.forkDaemon(lost.value.lost(`its ${kind === "worker" ? "worker" : "process"} ended: ${reason}`, unresponsive ? "unresponsive" : "error")))
      ),
      Effect.forkScoped
    )

    return workerProxies(shape, worker, call)
  })
