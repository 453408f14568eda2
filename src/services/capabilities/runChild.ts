/**
 * One provisioning command run to its outcome, in plain Node callbacks: the
 * per-call part of `CommandRunner.make`. A sweep spawns hundreds of children
 * from one thread, so a call's bookkeeping is timers and listeners rather than
 * a scope and fibers per call.
 *
 * The semantics (documented on `CommandRunner`): no shell; stdin `/dev/null`,
 * stdout discarded, stderr kept as a bounded tail; the child leads its own
 * process group; on timeout or cancellation the group gets SIGTERM, then SIGKILL
 * after `killGraceMs`; the outcome is decided by the command's exit, its stderr
 * read until the pipe closes or `stderrGraceMs` after the exit; what it leaves in
 * its group is terminated (SIGTERM, SIGKILL after the grace) without delaying
 * the outcome.
 * @since 0.1.0
 */
import { type ChildProcess, spawn } from "node:child_process"
import type { Outcome } from "../../schema/Outcome.ts"
import * as ChildGroups from "./ChildGroups.ts"

const { signalGroup } = ChildGroups

/**
 * One command, with plain values.
 * @since 0.1.0
 * @category models
 */
export interface ChildRequest {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  /** The full environment of the child. */
  readonly env: Readonly<Record<string, string>>
  readonly timeoutMs: number
}

/**
 * Times and sizes of a runner, in milliseconds and bytes.
 * @since 0.1.0
 * @category models
 */
export interface ChildSettings {
  readonly killGraceMs: number
  readonly stderrGraceMs: number
  readonly tailBytes: number
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
  readonly cancel: (done: () => void) => void
}

/**
 * Runs commands; remembers the groups that exited commands left behind until they are gone.
 * @since 0.1.0
 * @category models
 */
export interface ChildRunner {
  /** Starts one command; `onDone` gets its outcome (exactly once, unless cancelled). */
  readonly run: (request: ChildRequest, onDone: (outcome: Outcome) => void) => RunningChild
  /** SIGKILL to every group still running or left behind (the runner's owner is going away). */
  readonly killLeftovers: () => void
}

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

const describeSpawnError = (error: unknown): string =>
  error instanceof Error
    ? ("code" in error && typeof error.code === "string" ? `${error.code}: ${error.message}` : error.message)
    : String(error)

/**
 * A runner of commands with the given settings.
 * @since 0.1.0
 * @category constructors
 */
export const makeChildRunner = (settings: ChildSettings): ChildRunner => {
  const { killGraceMs, stderrGraceMs, tailBytes } = settings
  /** Process groups left behind by commands that exited, until they are gone. */
  const lingering = new Set<number>()

  /** SIGTERM to what is left of an exited command's group; SIGKILL after the grace if it is still there. */
  const reapLeftovers = (pid: number) => {
    if (pid <= 0 || !signalGroup(pid, 0)) return
    signalGroup(pid, "SIGTERM")
    lingering.add(pid)
    const timer = setTimeout(() => {
      lingering.delete(pid)
      if (signalGroup(pid, 0)) signalGroup(pid, "SIGKILL")
    }, killGraceMs)
    // The outcome does not wait for the leftovers; `killLeftovers` covers an earlier exit.
    timer.unref()
  }

  /** The groups of this runner's calls in flight. */
  const running = new Set<number>()

  const killLeftovers = () => {
    for (const pid of lingering) signalGroup(pid, "SIGKILL")
    lingering.clear()
    for (const pid of running) signalGroup(pid, "SIGKILL")
  }

  const run = (request: ChildRequest, onDone: (outcome: Outcome) => void): RunningChild => {
    const started = performance.now()
    const elapsed = () => Math.round(performance.now() - started)
    const timeoutMs = request.timeoutMs
    const tail = makeTail(tailBytes)
    const timers: Array<ReturnType<typeof setTimeout>> = []
    let settled = false
    let group = 0
    const untrack = () => {
      if (group === 0) return
      running.delete(group)
      ChildGroups.forget(group)
    }
    const settle = (outcome: Outcome) => {
      if (settled) return
      settled = true
      for (const t of timers) clearTimeout(t)
      untrack()
      onDone(outcome)
    }

    let child: ChildProcess
    try {
      child = spawn(request.command, request.args, {
        cwd: request.cwd,
        env: request.env,
        stdio: ["ignore", "ignore", "pipe"],
        detached: true,
        shell: false
      })
    } catch (error) {
      settle({ state: "not-executable", ms: elapsed(), detail: describeSpawnError(error) })
      return { pid: undefined, cancel: (done) => done() }
    }
    if (child.pid !== undefined) {
      group = child.pid
      running.add(group)
      ChildGroups.track(group)
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
        untrack()
        const waiting = afterTermination
        afterTermination = []
        for (const f of waiting) f()
      }
      if (pid === 0) return finish()
      signalGroup(pid, "SIGTERM")
      timers.push(setTimeout(() => {
        // Whatever the leader did, nothing of its group outlives a timeout.
        if (signalGroup(pid, 0)) signalGroup(pid, "SIGKILL")
        // Done once stderr closed and the group is gone (the killed members are being reaped);
        // a member that left the group may hold stderr open: stop waiting after a second grace.
        const givenUp = performance.now() + killGraceMs
        const check = () => {
          if ((closed && !signalGroup(pid, 0)) || performance.now() >= givenUp) return finish()
          timers.push(setTimeout(check, 10))
        }
        check()
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
    if (timeoutMs <= 2_147_483_647) {
      timers.push(setTimeout(() => {
        terminate(() => {
          const stderr = tail.text()
          settle({
            state: "timeout",
            ms: elapsed(),
            detail: `no exit within ${timeoutMs} ms; process group terminated${stderr === "" ? "" : `: ${stderr}`}`
          })
        })
      }, timeoutMs))
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

  return { run, killLeftovers }
}
