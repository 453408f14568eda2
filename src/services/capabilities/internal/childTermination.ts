/**
 * How ChildRunner.ts ends process groups: a call's group on timeout, overflow or cancellation, and
 * what an exited command left behind.
 * @since 0.1.0
 */
import type { ChildProcess } from "node:child_process"
import * as ChildGroups from "../ChildGroups.ts"

const { signalGroup } = ChildGroups

/**
 * The process groups of a runner's calls: those in flight, and those that exited commands left
 * behind (SIGTERM at once, SIGKILL after the grace if they are still there), until they are gone.
 * @since 0.1.0
 * @category constructors
 */
export const makeGroups = (killGraceMs: number) => {
  const running = new Set<number>()
  const lingering = new Set<number>()
  return {
    add: (pid: number) => {
      running.add(pid)
      ChildGroups.track(pid)
    },
    remove: (pid: number) => {
      running.delete(pid)
      ChildGroups.forget(pid)
    },
    reapLeftovers: (pid: number) => {
      if (pid <= 0 || !signalGroup(pid, 0)) return
      if (killGraceMs === 0) return void signalGroup(pid, "SIGKILL")
      signalGroup(pid, "SIGTERM")
      lingering.add(pid)
      const timer = setTimeout(() => {
        lingering.delete(pid)
        if (signalGroup(pid, 0)) signalGroup(pid, "SIGKILL")
      }, killGraceMs)
      // The outcome does not wait for the leftovers; `killLeftovers` covers an earlier exit.
      timer.unref()
    },
    killLeftovers: () => {
      for (const pid of lingering) signalGroup(pid, "SIGKILL")
      lingering.clear()
      for (const pid of running) signalGroup(pid, "SIGKILL")
    }
  }
}

/**
 * Ends a call's group: SIGTERM, then SIGKILL after the grace if anything of it is alive (SIGKILL
 * at once when the grace is 0); `finish` once the group is gone and the pipes closed, or a second
 * grace later (a member that left the group may hold them open). Later requests join the first.
 * @since 0.1.0
 * @category constructors
 */
export const makeTerminate = (
  child: ChildProcess,
  killGraceMs: number,
  timers: Array<ReturnType<typeof setTimeout>>,
  isClosed: () => boolean,
  finish: () => void
) => {
  let waiting: Array<() => void> | undefined
  const done = () => {
    const callbacks = waiting ?? []
    waiting = []
    finish()
    for (const f of callbacks) f()
  }
  return {
    terminating: () => waiting !== undefined,
    terminate: (then: () => void) => {
      if (waiting !== undefined) return void waiting.push(then)
      waiting = [then]
      const pid = child.pid ?? 0
      if (pid === 0) return done()
      signalGroup(pid, killGraceMs > 0 ? "SIGTERM" : "SIGKILL")
      timers.push(setTimeout(() => {
        // Whatever the leader did, nothing of its group outlives a timeout.
        if (signalGroup(pid, 0)) signalGroup(pid, "SIGKILL")
        const givenUp = performance.now() + killGraceMs
        const check = () => {
          if ((isClosed() && !signalGroup(pid, 0)) || performance.now() >= givenUp) return done()
          timers.push(setTimeout(check, 10))
        }
        check()
      }, killGraceMs))
      child.once("close", () => {
        if (!signalGroup(pid, 0)) done()
      })
    }
  }
}
