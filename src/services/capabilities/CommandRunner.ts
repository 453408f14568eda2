/**
 * Runs one declared command (spec/capability-plugin-lifecycle.md,
 * "Declaration"): "`{personality}`, `{runtime}`, `{cwd}` and `{occasion}` are
 * substituted per argument, and **no shell** is involved"; "`{privateDir}` on a
 * runtime without one is refused (`failed`) before spawn"; the private directory
 * "is also exported as `IAPEER_PRIVATE_DIR`" (ours: `CITY_PRIVATE_DIR`);
 * "Timeout per call: 120 s".
 *
 * - argv is `[command, ...args]`, each argument substituted on its own in one
 *   pass (a substituted value is never substituted again); no shell, so shell
 *   metacharacters reach the plugin literally.
 * - stdin is closed: it is `/dev/null`, so the child reads EOF at once; stdout
 *   is discarded (`/dev/null`, stderr is the failure detail); stderr is kept as a
 *   bounded tail (`stderrTailBytes`, default 4 KiB) whatever its size.
 * - The child's environment is this process's environment as it was when the
 *   service was built, plus or minus `CITY_PRIVATE_DIR`.
 * - Spawning is `node:child_process` directly (the platform `Command` costs
 *   about half the throughput on short commands and has no SIGKILL fallback).
 *   An interrupted call terminates the group the same way before it returns.
 * - The child runs in its own process group. On timeout (or interruption) the
 *   whole group gets SIGTERM, then SIGKILL after `killGrace` (default 2 s) if
 *   anything of it is still alive.
 * - The outcome is decided by the exit of the command itself, not by the end of
 *   its stderr: a command that leaves a background process holding stderr open
 *   (`sleep 60 & exit 0`) is `ok` at exit 0. Its stderr tail is what arrived
 *   until the pipe closed, or until `stderrGrace` (default 250 ms) after the
 *   exit, whichever comes first.
 * - What the command leaves behind in its process group is terminated when it
 *   exits (decision; the spec is silent): SIGTERM at once, SIGKILL after
 *   `killGrace` if anything is still alive, without delaying the outcome; groups
 *   still alive when the service's scope closes (the CLI exits) get SIGKILL. A
 *   call is over when its command exits; a helper meant to outlive it must leave
 *   the group (`setsid`).
 * - Outcomes: `ok` (exit 0), `failed` (exit code + stderr tail, or killed by a
 *   signal), `timeout`, `not-executable` (spawn refused: missing file, no execute
 *   permission). `run` itself never fails.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { type ChildProcess, spawn } from "node:child_process"
import { type CommandSpec, type Placeholder, placeholders } from "../../schema/Declaration.ts"
import type { Outcome } from "../../schema/Outcome.ts"

/**
 * The name of the variable carrying the endpoint's private directory.
 * @since 0.1.0
 * @category constants
 */
export const privateDirVariable = "CITY_PRIVATE_DIR"

/**
 * Values for the placeholders; `privateDir` is absent on a runtime without one.
 * @since 0.1.0
 * @category models
 */
export type Substitutions = { readonly [K in Placeholder]?: string }

const placeholderPattern = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g

/**
 * Substitutes the known placeholders inside one argument, in a single pass.
 * Fails with the name of a placeholder that has no value.
 * @since 0.1.0
 * @category utils
 */
export const substitute = (arg: string, values: Substitutions): Either.Either<string, Placeholder> => {
  let missing: Placeholder | undefined
  const out = arg.replace(placeholderPattern, (whole, name: string) => {
    if (!(placeholders as ReadonlyArray<string>).includes(name)) return whole
    const value = values[name as Placeholder]
    if (value === undefined) {
      missing ??= name as Placeholder
      return whole
    }
    return value
  })
  return missing === undefined ? Either.right(out) : Either.left(missing)
}

/**
 * `[command, ...args]` with every argument substituted.
 * @since 0.1.0
 * @category utils
 */
export const buildArgv = (
  spec: CommandSpec,
  values: Substitutions
): Either.Either<readonly [string, ...Array<string>], Placeholder> =>
  Either.all(spec.args.map((arg) => substitute(arg, values))).pipe(
    Either.map((args) => [spec.command, ...args] as const)
  )

/**
 * One command to run: argv, working directory, private directory and timeout.
 * @since 0.1.0
 * @category models
 */
export interface RunRequest {
  /** The executable (argv[0]), run without a shell. */
  readonly command: string
  /** The arguments, placeholders already substituted. */
  readonly args: ReadonlyArray<string>
  /** The working directory of the child. */
  readonly cwd: string
  /** Set `CITY_PRIVATE_DIR` to this; when absent the variable is removed from the child's env. */
  readonly privateDir: Option.Option<string>
  /** How long the command may run before its process group is stopped (outcome `timeout`). */
  readonly timeout: Duration.DurationInput
}

/**
 * How the runner stops a command that outlives its timeout.
 * @since 0.1.0
 * @category models
 */
export interface CommandRunnerConfig {
  /** Time between SIGTERM and SIGKILL of the process group (default 2 s). */
  readonly killGrace?: Duration.DurationInput
  /** Bytes of stderr kept (the tail; default 4096). */
  readonly stderrTailBytes?: number
  /** How long after the command's exit its stderr is still read, when something else holds it open (default 250 ms). */
  readonly stderrGrace?: Duration.DurationInput
}

/**
 * Runs one provisioning command without a shell and reports its outcome.
 * @since 0.1.0
 * @category tags
 */
export class CommandRunner extends Context.Tag("effect-city/CommandRunner")<
  CommandRunner,
  {
    /** Runs the command to an outcome; never fails. */
    readonly run: (request: RunRequest) => Effect.Effect<Outcome>
  }
>() {}

/** Keeps only the last `max` bytes of what is pushed. */
const makeTail = (max: number) => {
  let buffer = new Uint8Array(0)
  return {
    push: (chunk: Uint8Array) => {
      if (chunk.length >= max) {
        buffer = chunk.slice(chunk.length - max)
        return
      }
      const keepOld = Math.min(buffer.length, max - chunk.length)
      const next = new Uint8Array(keepOld + chunk.length)
      next.set(buffer.subarray(buffer.length - keepOld), 0)
      next.set(chunk, keepOld)
      buffer = next
    },
    text: () => new TextDecoder("utf-8", { fatal: false }).decode(buffer).trim()
  }
}

/** Sends a signal to a whole process group; false when the group is gone. */
const signalGroup = (pid: number, signal: NodeJS.Signals | 0): boolean => {
  // After every call the group is probed, and usually it is gone (ESRCH): the thrown error is
  // built without a stack, which costs little. With a stack (and tsx's source maps) a runner
  // spawned /bin/true at 0.81x a plain spawn loop, without one at 0.91x (paired rounds, one run).
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    return process.kill(-pid, signal)
  } catch {
    return false
  } finally {
    Error.stackTraceLimit = limit
  }
}

const describeSpawnError = (error: unknown): string =>
  error instanceof Error
    ? ("code" in error && typeof error.code === "string" ? `${error.code}: ${error.message}` : error.message)
    : String(error)

/**
 * The runner; groups left behind by a command and still alive when the scope closes get SIGKILL.
 * @since 0.1.0
 * @category constructors
 */
export const make = (config: CommandRunnerConfig = {}): Effect.Effect<CommandRunner["Type"], never, Scope.Scope> =>
  Effect.gen(function*() {
    const killGraceMs = Duration.toMillis(Duration.decode(config.killGrace ?? Duration.seconds(2)))
    const stderrGraceMs = Duration.toMillis(Duration.decode(config.stderrGrace ?? Duration.millis(250)))
    const tailBytes = config.stderrTailBytes ?? 4096

    /** Process groups left behind by commands that exited, until they are gone. */
    const lingering = new Set<number>()
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const pid of lingering) signalGroup(pid, "SIGKILL")
        lingering.clear()
      })
    )

    /** SIGTERM to what is left of an exited command's group; SIGKILL after the grace if it is still there. */
    const reapLeftovers = (pid: number) => {
      if (pid <= 0 || !signalGroup(pid, 0)) return
      signalGroup(pid, "SIGTERM")
      lingering.add(pid)
      const timer = setTimeout(() => {
        lingering.delete(pid)
        if (signalGroup(pid, 0)) signalGroup(pid, "SIGKILL")
      }, killGraceMs)
      // The outcome does not wait for the leftovers; the scope's finalizer covers an earlier exit.
      timer.unref()
    }

    // The environment is read once, when the service is built: `process.env` is slow to
    // enumerate, and a sweep spawns hundreds of children.
    const baseEnv: Record<string, string> = {}
    for (const [key, value] of Object.entries(process.env)) {
      if (value !== undefined && key !== privateDirVariable) baseEnv[key] = value
    }
    const envFor = (privateDir: Option.Option<string>): Record<string, string> =>
      Option.isSome(privateDir) ? { ...baseEnv, [privateDirVariable]: privateDir.value } : baseEnv

    /**
     * One call, as a single asynchronous operation: a sweep spawns hundreds of
     * children from one thread, so the per-call bookkeeping is plain callbacks
     * (timers, listeners) rather than a scope and fibers per call.
     */
    const run = (request: RunRequest): Effect.Effect<Outcome> =>
      Effect.async<Outcome>((resume) => {
        const started = performance.now()
        const elapsed = () => Math.round(performance.now() - started)
        const timeoutMs = Duration.toMillis(Duration.decode(request.timeout))
        const tail = makeTail(tailBytes)
        const timers: Array<ReturnType<typeof setTimeout>> = []
        let settled = false
        const settle = (outcome: Outcome) => {
          if (settled) return
          settled = true
          for (const t of timers) clearTimeout(t)
          resume(Effect.succeed(outcome))
        }

        let child: ChildProcess
        try {
          child = spawn(request.command, request.args, {
            cwd: request.cwd,
            env: envFor(request.privateDir),
            stdio: ["ignore", "ignore", "pipe"],
            detached: true,
            shell: false
          })
        } catch (error) {
          settle({ state: "not-executable", ms: elapsed(), detail: describeSpawnError(error) })
          return
        }
        let spawned = false
        let closed = false
        let terminating = false
        let afterTermination: Array<() => void> = []

        /** SIGTERM to the group; SIGKILL after the grace if anything of it is alive; then `done`. */
        const terminate = (done: () => void) => {
          afterTermination.push(done)
          if (terminating) return
          terminating = true
          const pid = child.pid ?? 0
          const finish = () => {
            const waiting = afterTermination
            afterTermination = []
            for (const f of waiting) f()
          }
          if (pid === 0) return finish()
          signalGroup(pid, "SIGTERM")
          timers.push(setTimeout(() => {
            // Whatever the leader did, nothing of its group outlives a timeout.
            if (signalGroup(pid, 0)) signalGroup(pid, "SIGKILL")
            if (closed) finish()
            // A member that left the group may still hold stderr open: stop waiting after a second grace.
            else timers.push(setTimeout(finish, killGraceMs))
          }, killGraceMs))
          child.once("close", () => {
            if (!signalGroup(pid, 0)) finish()
          })
        }

        child.once("error", (error) => {
          if (!spawned) settle({ state: "not-executable", ms: elapsed(), detail: describeSpawnError(error) })
        })
        child.once("spawn", () => {
          spawned = true
        })
        child.stderr?.on("data", (chunk: Uint8Array) => tail.push(chunk))
        let exited: { readonly code: number | null; readonly signal: NodeJS.Signals | null } | undefined
        let ms = 0
        /** The command exited and its stderr closed (or the grace ran out): settle from its exit. */
        const finish = () => {
          if (settled || terminating || exited === undefined) return
          const { code, signal } = exited
          const stderr = tail.text()
          if (!closed) child.stderr?.destroy()
          reapLeftovers(child.pid ?? 0)
          if (code === 0) return settle({ state: "ok", exit: 0, ms })
          if (code === null) {
            return settle({
              state: "failed",
              ms,
              detail: `killed by ${signal ?? "a signal"}${stderr === "" ? "" : `: ${stderr}`}`
            })
          }
          settle({ state: "failed", exit: code, ms, detail: stderr === "" ? `exit ${code}` : stderr })
        }
        child.once("exit", (code: number | null, signal: NodeJS.Signals | null) => {
          if (terminating || !spawned) return
          exited = { code, signal }
          ms = elapsed()
          // Usually "close" follows at once; a leftover process holding stderr must not hold the call.
          timers.push(setTimeout(finish, stderrGraceMs))
        })
        child.once("close", () => {
          closed = true
          finish()
        })
        // `setTimeout` fires at once for longer delays than 2^31-1 ms: those mean "no timeout".
        if (timeoutMs <= 2_147_483_647) timers.push(setTimeout(() => {
          terminate(() => {
            const stderr = tail.text()
            settle({
              state: "timeout",
              ms: elapsed(),
              detail: `no exit within ${timeoutMs} ms; process group terminated${stderr === "" ? "" : `: ${stderr}`}`
            })
          })
        }, timeoutMs))

        // Interrupted (the CLI got SIGINT, the caller gave up): the same termination, awaited.
        return Effect.async<void>((resumeCancel) => {
          if (settled) {
            for (const t of timers) clearTimeout(t)
            return resumeCancel(Effect.void)
          }
          terminate(() => {
            for (const t of timers) clearTimeout(t)
            resumeCancel(Effect.void)
          })
        })
      })

    return CommandRunner.of({ run })
  })

/**
 * The command runner as a Layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = (config: CommandRunnerConfig = {}) => Layer.scoped(CommandRunner, make(config))
