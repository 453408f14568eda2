/**
 * The host's own thread has a watchdog (docs/plugin-loader.md, "The host's own thread"): a
 * plugin that runs on the host's thread (`"isolation": "none"`) and spins blocks everything, and no
 * timeout of that thread can end it. A worker thread can: it watches a heartbeat the host's thread
 * writes into a SharedArrayBuffer every 250 ms, names the plugin whose code is on the blocked
 * thread's stack (the inspector, from the watchdog thread: internal/watchdogScript.ts), reports a
 * freeze, and ends the process at the freeze limit.
 *
 * Decisions where the design is silent:
 * - A freeze is reported (one log line, the freeze record) once the thread is blocked for 10 s, or
 *   for half the freeze limit when that is shorter; the thread is blocked when the heartbeat is
 *   older than a second.
 * - The process ends with `exitCode` from the host's thread itself (`process.exit`, evaluated
 *   there through the inspector while it is paused): a worker's `process.exit` ends only the
 *   worker, and a signal other than SIGKILL is handled by the blocked thread's event loop. When the
 *   thread cannot be paused (blocked in a native call), SIGKILL: exit status 137.
 * - Signals: Node delivers them to the host's thread's event loop only (a worker thread cannot
 *   listen for them), so a SIGTERM during a freeze waits for the thread; the freeze limit bounds
 *   that wait.
 * - The heartbeat is a plain timer, unref'd, and the worker is unref'd: neither keeps a process
 *   alive that has nothing else to do.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { pathToFileURL } from "node:url"
import { Worker } from "node:worker_threads"
import { discover, type PluginRoot } from "../loader/Discovery.ts"
import * as TextFile from "../files/TextFile.ts"
import { source } from "./internal/watchdogScript.ts"

/**
 * What the watchdog is told.
 * @since 0.1.0
 * @category models
 */
export interface WatchdogOptions {
  /** Blocked this long, the process ends. */
  readonly limit: Duration.DurationInput
  /** Blocked this long, the freeze is reported. Default: 10 s, or half the limit when shorter. */
  readonly report?: Duration.DurationInput | undefined
  /** The process's exit code at the limit. */
  readonly exitCode: number
  /** The front of each line: `city daemon`, `city: error`. */
  readonly who: string
  /** What the last line says happens: `exiting 70 so that its supervisor restarts it`. */
  readonly ending: string
  /** The lines' format: the daemon's log format, or a plain line. */
  readonly format: "logfmt" | "json" | "plain"
  /** Where the freeze record is written (temp file + rename), if anywhere. */
  readonly recordFile?: string | undefined
  /** The plugin roots: a frame in a folder of one names that folder's plugin. */
  readonly roots: ReadonlyArray<PluginRoot>
}

/** How often the host's thread stores its heartbeat, and how often the watchdog reads it. */
const beatMs = 250
/** A heartbeat older than this: the host's thread is blocked. */
const staleMs = 1000
/** How long the watchdog waits for the blocked thread to pause in the debugger. */
const pauseMs = 1000
/** After the last line, how long `process.exit` on the host's thread may take before SIGKILL. */
const exitGraceMs = 2000

/** The `file:` URL prefixes of the plugin folders (as written and as resolved), with their names. */
const pluginFolders = (roots: ReadonlyArray<PluginRoot>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const found = yield* Effect.orElseSucceed(discover(roots), () => [])
    const prefixes = yield* Effect.forEach(found, (plugin) =>
      Effect.map(Effect.orElseSucceed(fs.realPath(plugin.folder), () => plugin.folder), (real) =>
        [...new Set([plugin.folder, real])].map((folder) => ({ name: plugin.name, prefix: `${pathToFileURL(folder).href}/` }))))
    const rootPrefixes = yield* Effect.forEach(roots, (root) =>
      Effect.map(Effect.orElseSucceed(fs.realPath(root.path), () => root.path), (real) =>
        [...new Set([root.path, real])].map((folder) => `${pathToFileURL(folder).href}/`)))
    return { plugins: prefixes.flat(), roots: rootPrefixes.flat() }
  })

/**
 * A process that gets to release its watchdog did not die frozen: a freeze record of its own still
 * there (the thread came free, but the watchdog was ended before its next look) is removed, so
 * that the next start quarantines nothing for it.
 */
const removeOwnRecord = (file: string | undefined) =>
  file === undefined ? Effect.void : Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    // Through the one reader: whatever is put in the record's place (a FIFO) cannot hold the release.
    const text = Option.flatten(yield* Effect.option(TextFile.read(file, TextFile.kinds.stateDocument)))
    if (Option.isNone(text)) return
    const own = yield* Effect.option(Effect.try(() => (JSON.parse(text.value) as { readonly pid?: unknown }).pid === process.pid))
    if (own._tag === "Some" && own.value) yield* Effect.ignore(fs.remove(file))
  })

/**
 * Starts the heartbeat and the watchdog thread for the caller's Scope.
 * @since 0.1.0
 * @category constructors
 */
export const start = (options: WatchdogOptions): Effect.Effect<void, never, FileSystem.FileSystem | Scope.Scope> =>
  Effect.gen(function*() {
    const fileSystem = yield* FileSystem.FileSystem
    const folders = yield* pluginFolders(options.roots)
    const limitMs = Duration.toMillis(Duration.decode(options.limit))
    const reportMs = options.report === undefined
      ? Math.min(10_000, limitMs / 2)
      : Duration.toMillis(Duration.decode(options.report))
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        const heartbeat = new SharedArrayBuffer(8)
        const beat = new BigInt64Array(heartbeat)
        const store = () => void Atomics.store(beat, 0, BigInt(Date.now()))
        store()
        const timer = setInterval(store, beatMs)
        timer.unref()
        const worker = new Worker(source, {
          eval: true,
          workerData: {
            heartbeat,
            pid: process.pid,
            limitMs,
            reportMs,
            staleMs,
            pauseMs,
            exitGraceMs,
            tickMs: beatMs,
            exitCode: options.exitCode,
            who: options.who,
            ending: options.ending,
            format: options.format,
            recordFile: options.recordFile ?? null,
            plugins: folders.plugins,
            roots: folders.roots
          }
        })
        worker.unref()
        // The thread's own failure is not the host's: it is left ended, and nothing is thrown here.
        worker.on("error", () => {})
        return { timer, worker }
      }),
      ({ timer, worker }) =>
        Effect.zipRight(
          Effect.zipRight(Effect.sync(() => clearInterval(timer)), Effect.promise(() => worker.terminate())),
          Effect.provideService(removeOwnRecord(options.recordFile), FileSystem.FileSystem, fileSystem)
        )
    )
  })
