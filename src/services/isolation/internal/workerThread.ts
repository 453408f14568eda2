/**
 * The isolate of one isolated plugin, as its resource (docs/plugin-loader.md, "Isolation";
 * docs/design.md, "Third-party plugins": "Isolation is a resource"): a worker thread or a child
 * process, each under `@effect/platform`'s serialized Worker (`@effect/platform-node`'s NodeWorker
 * takes either), with a heap cap, and why it ended, once it has.
 *
 * Decisions (docs/plugin-loader.md, "What each mode caps"):
 * - **A worker thread** gets `resourceLimits.maxOldGenerationSizeMb` and `execArgv: []` (none of the
 *   host's Node options). V8's `--max-old-space-size` (and `--max-heap-size`) is one flag for the
 *   whole process and wins over a worker's `resourceLimits`: a host started with it, in
 *   `NODE_OPTIONS` too, would raise every worker's cap, and `execArgv` cannot lower it. V8 reads it
 *   only when an isolate is made, so it is cleared before each spawn: the worker gets its own cap and
 *   the host keeps the heap it started with (checked on Node 20, and tested).
 * - **A child process** is `child_process.fork` of the same main script with structured clone
 *   (`serialization: "advanced"`, as between threads), its own process group (`detached`), its cap
 *   as its only Node option (`--max-old-space-size`), and the host's environment without
 *   {@link scrubbedVariables}. It is ended by killing its whole group, so that a child it spawned
 *   does not outlive it, when it is stopped, when it ended on its own (what it left behind), and on
 *   the host's exit. Its stderr passes through to the host's, read on the way for V8's
 *   out-of-memory line (a process that meets its heap cap aborts).
 * @since 0.1.0
 */
import * as NodeWorker from "@effect/platform-node/NodeWorker"
import * as Worker from "@effect/platform/Worker"
import type { WorkerError } from "@effect/platform/WorkerError"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type * as ParseResult from "effect/ParseResult"
import { type ChildProcess, fork } from "node:child_process"
import { fileURLToPath } from "node:url"
import * as v8 from "node:v8"
import { Worker as Thread } from "node:worker_threads"
import type { ActionRejected } from "../../../schema/Errors.ts"
import * as Isolation from "../../../schema/Isolation.ts"
import { WorkerScript } from "../WorkerScript.ts"
import { blameThread } from "./blame.ts"
import { platformWarningsAtDebug } from "./platformLogs.ts"

/**
 * How an isolated plugin is run: a worker thread or a child process of its own.
 * @since 0.1.0
 * @category models
 */
export type Kind = Exclude<Isolation.IsolationMode, "none">

/**
 * The host's environment variables a plugin's process does not get: `NODE_OPTIONS` (any Node or V8
 * option, `--max-old-space-size` and `--stack-size` among them: the process's only options are its
 * cap), `UV_THREADPOOL_SIZE` (the size of libuv's thread pool, up to 1024 threads) and the host's own
 * IPC channel (`NODE_CHANNEL_FD`, `NODE_CHANNEL_SERIALIZATION_MODE`, set when the host is itself a
 * forked child: the plugin's channel is its own).
 * @since 0.1.0
 * @category constants
 */
export const scrubbedVariables: ReadonlyArray<string> = ["NODE_OPTIONS", "UV_THREADPOOL_SIZE", "NODE_CHANNEL_FD", "NODE_CHANNEL_SERIALIZATION_MODE"]

/** The host's environment, without {@link scrubbedVariables}. */
const pluginEnv = (): NodeJS.ProcessEnv => {
  const env = { ...process.env }
  for (const name of scrubbedVariables) delete env[name]
  return env
}

/** The process groups of the plugins' processes still alive. */
const liveGroups = new Set<number>()
let exitHookInstalled = false

/** Kills the process group `pid` leads, whatever is left of it (a group already gone is not an error). */
const killGroup = (pid: number) => {
  try {
    process.kill(-pid, "SIGKILL")
  } catch {
    // ESRCH: nothing of the group is left.
  }
}

/**
 * Tracks a plugin's process group until it is gone. A plugin's process has a group of its own
 * (`detached`), which does not end with the host: when the host exits without closing the plugin's
 * Scope (`process.exit()` of a CLI verb, an uncaught error), this hook, run by Node at the host's
 * exit, kills the groups still alive. (A host killed outright runs no hook: then the plugin's
 * process sees its IPC channel close and kills its own group, src/programs/pluginWorker.ts.)
 */
const trackGroup = (pid: number) => {
  liveGroups.add(pid)
  if (exitHookInstalled) return
  exitHookInstalled = true
  process.on("exit", () => {
    for (const group of liveGroups) killGroup(group)
  })
}

/** The last bytes of a process's stderr kept to read why it ended. */
const stderrKept = 4096

/** How long after a process's exit its stderr may still be read. */
const stderrDrain = 500

/** Why a worker thread ended, in words, from its exit code and the last error it emitted. */
const threadEndReason = (code: number, error: unknown, heapMb: number): string => {
  if (typeof error === "string") return error
  if (error instanceof Error) {
    if ((error as { code?: unknown }).code === "ERR_WORKER_OUT_OF_MEMORY") return `it ran out of memory (heap cap ${heapMb} MiB)`
    return `uncaught ${error.name}: ${error.message}`
  }
  return code === Isolation.abortExitCode ? "it called process.abort()" : `it exited with code ${code}`
}

/** Why a child process ended, in words, from its exit code or signal and the end of its stderr. */
const processEndReason = (code: number | null, signal: NodeJS.Signals | null, stopped: string | undefined, stderr: string, heapMb: number): string => {
  if (stopped !== undefined) return stopped
  if (/JavaScript heap out of memory/.test(stderr)) return `it ran out of memory (heap cap ${heapMb} MiB)`
  const uncaught = stderr.split("\n").reverse().find((line) => line.startsWith(Isolation.uncaughtMarker))
  if (uncaught !== undefined) return `uncaught ${uncaught.slice(Isolation.uncaughtMarker.length)}`
  if (signal === "SIGABRT") return "it aborted (SIGABRT)"
  if (signal !== null) return `killed by ${signal}`
  return `it exited with code ${code ?? "unknown"}`
}

/** The young generation of a worker's heap, in MiB (see `spawnThread`). */
const youngGenerationMb = 32

/**
 * Starts the plugin's isolate (`kind`) in the caller's Scope: the serialized Worker, `ended` (done
 * with why the isolate ended), `stop` (ends it; `reason`, when given, becomes why), and `failed` (a
 * platform failure of a request as the plugin's typed failure).
 * @since 0.1.0
 * @category internals
 */
export const startThread = (name: string, heapMb: number, kind: Kind = "worker") =>
  Effect.gen(function*() {
    const script = yield* WorkerScript
    const ended = yield* Deferred.make<string>()
    let thread: Thread | undefined
    let child: ChildProcess | undefined
    let lastError: unknown
    let stopped: string | undefined

    const spawnThread = () => {
      // V8's heap flags are the process's and would win over resourceLimits (see the module's comment).
      v8.setFlagsFromString("--max-old-space-size=0")
      v8.setFlagsFromString("--max-heap-size=0")
      // The young generation is named too: Node 24 (V8 13) sizes it at 192 MiB by default, which
      // would make a 64 MiB cap a 256 MiB one; 32 keeps the sizing Node 20 gives (measured: a 64 MiB
      // cap is a 112 MiB `heap_size_limit` on both).
      const worker = new Thread(new URL(script.url), {
        execArgv: [],
        resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: youngGenerationMb }
      })
      worker.on("error", (error) => {
        lastError ??= error
      })
      worker.on("exit", (code) => {
        // unsafe: a Node event listener, outside any fiber, where no Effect can run.
        Deferred.unsafeDone(ended, Exit.succeed(threadEndReason(code, lastError, heapMb)))
      })
      thread = worker
      return worker
    }
    const spawnProcess = () => {
      const spawned = fork(fileURLToPath(script.url), [], {
        serialization: "advanced",
        detached: true,
        // 16 MiB semi-spaces size the heap as a worker's 32 MiB young generation does (measured: a 64 MiB
        // cap is a 112 MiB `heap_size_limit` on Node 20 and 24).
        execArgv: [`--max-old-space-size=${heapMb}`, `--max-semi-space-size=${youngGenerationMb / 2}`],
        env: pluginEnv(),
        // fd 4: the side channel on which the process says what it runs (processBlame.ts).
        stdio: ["ignore", "inherit", "pipe", "ipc", "pipe"] // index 4: Isolation.blameFd
      })
      const pid = spawned.pid
      if (pid !== undefined) trackGroup(pid)
      let stderr = ""
      spawned.stderr?.on("data", (chunk: Buffer) => {
        process.stderr.write(chunk)
        stderr = (stderr + chunk.toString("utf8")).slice(-stderrKept)
      })
      spawned.on("error", (error) => {
        lastError ??= error
      })
      spawned.on("exit", (code, signal) => {
        if (pid !== undefined) {
          // What it spawned and left behind goes with it.
          killGroup(pid)
          liveGroups.delete(pid)
        }
        // Why is read once its stderr is drained ("close"; V8's out-of-memory line may come after
        // "exit"), or shortly after, should something outside its group still hold that pipe.
        const settle = () => {
          const reason = lastError instanceof Error && pid === undefined
            ? `it could not start: ${lastError.message}`
            : processEndReason(code, signal, stopped, stderr, heapMb)
          // unsafe: a Node event listener, outside any fiber, where no Effect can run.
          Deferred.unsafeDone(ended, Exit.succeed(reason))
        }
        const timer = setTimeout(settle, stderrDrain)
        spawned.once("close", () => {
          clearTimeout(timer)
          settle()
        })
        if (spawned.stderr === null || spawned.stderr.closed) {
          clearTimeout(timer)
          settle()
        }
      })
      child = spawned
      return spawned
    }
    const stop = (reason?: string) =>
      kind === "worker"
        ? Effect.promise(async () => {
          if (reason !== undefined) lastError ??= reason
          await thread?.terminate()
        })
        : Effect.suspend(() => {
          if (reason !== undefined) stopped ??= reason
          const pid = child?.pid
          if (pid === undefined || child?.exitCode !== null || child.signalCode !== null) return Effect.void
          killGroup(pid)
          return Effect.ignore(Effect.timeout(Deferred.await(ended), "5 seconds"))
        })

    const worker = yield* Worker.makeSerialized<Isolation.Request>({}).pipe(
      Effect.provide(NodeWorker.layer(kind === "worker" ? spawnThread : spawnProcess)),
      // Its end is said once, by the registry, naming the plugin: the platform's own line is debug.
      platformWarningsAtDebug,
      Effect.mapError((error) => new Isolation.IsolationError({ reason: "WorkerEnded", plugin: name, detail: `it could not start: ${error.message}`, isolation: kind }))
    )
    /** Why the worker is gone, once it is. */
    const gone = Deferred.await(ended)
    const failed = (error: WorkerError | ParseResult.ParseError, what: string): Effect.Effect<never, Isolation.IsolationError> =>
      error._tag === "ParseError"
        ? Effect.fail(new Isolation.IsolationError({ reason: "IsolatedFailure", plugin: name, what, detail: error.message, isolation: kind }))
        : Effect.flatMap(Effect.timeoutTo(gone, { duration: "1 second", onSuccess: (r) => r, onTimeout: () => error.message }), (detail) =>
          Effect.fail(new Isolation.IsolationError({ reason: "WorkerEnded", plugin: name, detail, isolation: kind })))
    /**
     * A request to the worker; the platform's failures become the plugin's (`what` names the
     * request), and a failure from the isolate says where it ran.
     */
    const call = <A, E extends Isolation.IsolationError | ActionRejected>(
      request: Effect.Effect<A, E | WorkerError | ParseResult.ParseError>,
      what: string
    ): Effect.Effect<A, E | Isolation.IsolationError> =>
      Effect.catchIf(
        request,
        (e): e is WorkerError | ParseResult.ParseError => e._tag === "WorkerError" || e._tag === "ParseError",
        (e) => failed(e, what)
      ).pipe(Effect.mapError((e) => e._tag === "IsolationError" ? placed(e) : e))
    const placed = (e: Isolation.IsolationError): Isolation.IsolationError =>
      e.isolation !== undefined ? e : new Isolation.IsolationError({
        reason: e.reason,
        plugin: e.plugin,
        ...(e.what === undefined ? {} : { what: e.what }),
        ...(e.errorTag === undefined ? {} : { errorTag: e.errorTag }),
        ...(e.detail === undefined ? {} : { detail: e.detail }),
        ...(e.fields === undefined ? {} : { fields: e.fields }),
        ...(e.action === undefined ? {} : { action: e.action }),
        ...(e.error === undefined ? {} : { error: e.error }),
        isolation: kind
      })
    /**
     * Where the isolate is running, as the innermost frame in `folderUrl` (docs/plugin-loader.md,
     * "Liveness"): a thread is paused by the host's inspector (blame.ts); a process answers on its
     * side channel from a thread of its own (processBlame.ts). Unbounded: the caller bounds it.
     */
    const blame = (folderUrl: string): Effect.Effect<Option.Option<string>> => {
      if (kind === "worker") return thread === undefined ? Effect.succeed(Option.none()) : blameThread(thread.threadId, folderUrl)
      const side = child?.stdio[Isolation.blameFd]
      if (side === undefined || side === null || !("write" in side)) return Effect.succeed(Option.none())
      return Effect.async<Option.Option<string>>((resume) => {
        let buffered = ""
        const onData = (chunk: Buffer) => {
          buffered += chunk.toString("utf8")
          const at = buffered.indexOf("\n")
          if (at < 0) return
          side.off("data", onData)
          try {
            const location: unknown = (JSON.parse(buffered.slice(0, at)) as { location?: unknown }).location
            resume(Effect.succeed(typeof location === "string" ? Option.some(location) : Option.none()))
          } catch {
            resume(Effect.succeed(Option.none()))
          }
        }
        side.on("data", onData)
        side.write(`${JSON.stringify({ folder: folderUrl })}\n`)
        return Effect.sync(() => side.off("data", onData))
      })
    }
    return { worker, ended, gone, stop, failed, call, blame, kind }
  })

/**
 * The plugin's isolate, as `startThread` makes it.
 * @since 0.1.0
 * @category internals
 */
export type WorkerThread = Effect.Effect.Success<ReturnType<typeof startThread>>
