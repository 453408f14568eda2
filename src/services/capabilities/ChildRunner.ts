/**
 * The one way this process runs a child (docs/cli.md, "Commands and signals"): provisioning and
 * host commands (CommandRunner.ts), an outside runtime's `status` (live/CommandsHost.ts) and a
 * hosted Turn's tool calls (live/ToolCall.ts) all spawn here, in plain Node callbacks. A sweep
 * spawns hundreds of children from one thread, so a call's bookkeeping is timers and listeners
 * rather than a scope and fibers per call.
 *
 * Why not `@effect/platform`'s `Command`: it has no SIGKILL fallback after SIGTERM and does not
 * signal the child's process group, and it costs about half the throughput on short commands.
 *
 * The semantics (documented on `CommandRunner`): no shell; stdin `/dev/null`; stdout discarded, or
 * collected up to `outputBytes` (stdout and stderr together; beyond, the group is ended and the
 * call `failed`); stderr kept as a bounded tail; the child leads its own process group; on timeout
 * or cancellation the group gets SIGTERM, then SIGKILL after `killGraceMs` (at once when it is 0);
 * the outcome is decided by the command's exit, its pipes read until they close or `stderrGraceMs`
 * after the exit (`Infinity`: until they close); what it leaves in its group is terminated the same
 * way without delaying the outcome.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import { type ChildProcess, spawn } from "node:child_process"
import type { Outcome } from "../../schema/Outcome.ts"
import { makeOutput } from "./internal/childOutput.ts"
import { makeGroups, makeTerminate } from "./internal/childTermination.ts"

/**
 * One command, with plain values.
 * @since 0.1.0
 * @category models
 */
export interface ChildRequest {
  /** The executable (argv[0]), run without a shell. */
  readonly command: string
  /** The arguments. */
  readonly args: ReadonlyArray<string>
  /** The working directory of the child. */
  readonly cwd: string
  /** The full environment of the child. */
  readonly env: Readonly<Record<string, string>>
  /** How long the command may run before its group is ended (outcome `timeout`). */
  readonly timeoutMs: number
}

/**
 * Times and sizes of a runner, in milliseconds and bytes.
 * @since 0.1.0
 * @category models
 */
export interface ChildSettings {
  /** Time between SIGTERM and SIGKILL of a group; 0 sends SIGKILL at once. */
  readonly killGraceMs: number
  /** How long the pipes are read after the command's exit; `Infinity` reads them until they close. */
  readonly stderrGraceMs: number
  /** Bytes of stderr kept (the tail). */
  readonly tailBytes: number
  /** Collect stdout, with at most this many bytes of stdout and stderr together; absent: stdout is discarded. */
  readonly outputBytes?: number
}

/**
 * What a started call offers: a cancellation that terminates the group and
 * calls back when it is done.
 * @since 0.1.0
 * @category models
 */
export interface RunningChild {
  /** The child's pid, which is also its process group's; `undefined` when it was not spawned. */
  readonly pid: number | undefined
  /** Terminates the group (unless the call is over), then calls `done`; `onDone` is not called after. */
  readonly cancel: (done: () => void) => void
}

/**
 * Runs commands; remembers the groups that exited commands left behind until they are gone.
 * @since 0.1.0
 * @category models
 */
export interface ChildRunner {
  /** Starts one command; `onDone` gets its outcome and collected stdout (exactly once, unless cancelled). */
  readonly run: (request: ChildRequest, onDone: (outcome: Outcome, stdout: string) => void) => RunningChild
  /** SIGKILL to every group still running or left behind (the runner's owner is going away). */
  readonly killLeftovers: () => void
}

/**
 * A finished call: its outcome and what it printed on stdout (empty when stdout is discarded).
 * @since 0.1.0
 * @category models
 */
export interface ChildResult {
  /** How the command ended. */
  readonly outcome: Outcome
  /** Its stdout, decoded as UTF-8. */
  readonly stdout: string
}

/**
 * One call as an Effect: interrupted, it terminates the group before it returns.
 * @since 0.1.0
 * @category constructors
 */
export const run = (runner: ChildRunner, request: ChildRequest): Effect.Effect<ChildResult> =>
  Effect.async<ChildResult>((resume) => {
    const running = runner.run(request, (outcome, stdout) => resume(Effect.succeed({ outcome, stdout })))
    return Effect.async<void>((resumeCancel) => running.cancel(() => resumeCancel(Effect.void)))
  })

/**
 * This process's environment as it is now (`NODE_EXTRA_CA_CERTS` and `NODE_OPTIONS` included),
 * without the variable `omit`: a child's environment to start from. `process.env` is slow to
 * enumerate: a sweep reads it once, not once a child.
 * @since 0.1.0
 * @category utils
 */
export const currentEnvironment = (omit?: string): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && key !== omit) env[key] = value
  }
  return env
}

const describeSpawnError = (error: unknown): string =>
  error instanceof Error
    ? ("code" in error && typeof error.code === "string" ? `${error.code}: ${error.message}` : error.message)
    : String(error)

/** The outcome of a command that exited by itself. */
const exitOutcome = (code: number | null, signal: NodeJS.Signals | null, ms: number, stderr: string): Outcome => {
  if (code === 0) return { state: "ok", exit: 0, ms }
  if (code === null) {
    return { state: "failed", ms, detail: `killed by ${signal ?? "a signal"}${stderr === "" ? "" : `: ${stderr}`}` }
  }
  return { state: "failed", exit: code, ms, detail: stderr === "" ? `exit ${code}` : stderr }
}

/** `setTimeout` fires at once for longer delays than 2^31-1 ms: those mean "never". */
const maxDelay = 2_147_483_647

/**
 * A runner of commands with the given settings.
 * @since 0.1.0
 * @category constructors
 */
export const make = (settings: ChildSettings): ChildRunner => {
  const groups = makeGroups(settings.killGraceMs)

  const run = (request: ChildRequest, onDone: (outcome: Outcome, stdout: string) => void): RunningChild => {
    const started = performance.now()
    const elapsed = () => Math.round(performance.now() - started)
    const timers: Array<ReturnType<typeof setTimeout>> = []
    let settled = false
    let group = 0
    const untrack = () => {
      if (group !== 0) groups.remove(group)
    }
    const settle = (outcome: Outcome, stdout = "") => {
      if (settled) return
      settled = true
      for (const t of timers) clearTimeout(t)
      untrack()
      onDone(outcome, stdout)
    }

    let child: ChildProcess
    try {
      child = spawn(request.command, request.args, {
        cwd: request.cwd,
        env: request.env,
        stdio: ["ignore", settings.outputBytes === undefined ? "ignore" : "pipe", "pipe"],
        detached: true,
        shell: false
      })
    } catch (error) {
      settle({ state: "not-executable", ms: elapsed(), detail: describeSpawnError(error) })
      return { pid: undefined, cancel: (done) => done() }
    }
    if (child.pid !== undefined) {
      group = child.pid
      groups.add(group)
    }
    let spawned = false
    let closed = false
    const { terminate, terminating } = makeTerminate(child, settings.killGraceMs, timers, () => closed, untrack)
    const output = makeOutput(child, settings.tailBytes, settings.outputBytes, (limit) =>
      terminate(() => settle({ state: "failed", ms: elapsed(), detail: `output over ${limit} bytes` })))

    child.once("error", (error) => {
      if (!spawned) settle({ state: "not-executable", ms: elapsed(), detail: describeSpawnError(error) })
    })
    child.once("spawn", () => {
      spawned = true
    })
    let exited: { readonly code: number | null; readonly signal: NodeJS.Signals | null } | undefined
    let ms = 0
    /** The command exited and its pipes closed (or the grace ran out): settle from its exit. */
    const finish = () => {
      if (settled || terminating() || exited === undefined) return
      const stderr = output.stderr()
      if (!closed) {
        child.stdout?.destroy()
        child.stderr?.destroy()
      }
      groups.reapLeftovers(child.pid ?? 0)
      settle(exitOutcome(exited.code, exited.signal, ms, stderr), output.stdout())
    }
    child.once("exit", (code: number | null, signal: NodeJS.Signals | null) => {
      if (terminating() || !spawned) return
      exited = { code, signal }
      ms = elapsed()
      // Usually "close" follows at once; a leftover process holding the pipes must not hold the call.
      if (settings.stderrGraceMs <= maxDelay) timers.push(setTimeout(finish, settings.stderrGraceMs))
    })
    child.once("close", () => {
      closed = true
      finish()
    })
    if (request.timeoutMs <= maxDelay) {
      timers.push(setTimeout(() => {
        terminate(() => {
          const stderr = output.stderr()
          settle({
            state: "timeout",
            ms: elapsed(),
            detail: `no exit within ${request.timeoutMs} ms; process group terminated${stderr === "" ? "" : `: ${stderr}`}`
          })
        })
      }, request.timeoutMs))
    }

    // Cancelled (the CLI got SIGINT, the caller gave up): the same termination, then `done`.
    const cancel = (done: () => void) => {
      if (settled) {
        for (const t of timers) clearTimeout(t)
        return done()
      }
      terminate(() => {
        settled = true
        for (const t of timers) clearTimeout(t)
        done()
      })
    }
    return { pid: child.pid, cancel }
  }

  return { run, killLeftovers: groups.killLeftovers }
}
