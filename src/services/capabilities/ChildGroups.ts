/**
 * The process groups of the children this process is running (docs/cli.md, "Commands and
 * signals"): every child, spawned by the one runner (ChildRunner.ts), leads its own group while it
 * runs. If the process exits while some still run (a finalizer
 * deadline gave up on them, a defect), the `exit` hook sends each group SIGKILL, so no child
 * outlives its `city`. Node's `exit` listeners run synchronously, and `process.kill` is a
 * synchronous call, so this holds however the exit came.
 * @since 0.1.0
 */

const groups = new Set<number>()
let hooked = false

/**
 * Sends a signal to a whole process group; false when there is no such group (or no right to
 * signal it). The error of a failed probe is built without a stack: most probes find the group
 * gone, and a sweep probes after every call.
 * @since 0.1.0
 * @category utils
 */
export const signalGroup = (pgid: number, signal: NodeJS.Signals | 0): boolean => {
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    return process.kill(-pgid, signal)
  } catch {
    return false
  } finally {
    Error.stackTraceLimit = limit
  }
}

/**
 * Counts a running child's group (its pid) until `forget`; SIGKILL at exit if still counted.
 * @since 0.1.0
 * @category utils
 */
export const track = (pgid: number): void => {
  if (!hooked) {
    hooked = true
    process.once("exit", () => {
      for (const group of groups) signalGroup(group, "SIGKILL")
    })
  }
  groups.add(pgid)
}

/**
 * The child has ended (or its group was ended): no longer killed at exit.
 * @since 0.1.0
 * @category utils
 */
export const forget = (pgid: number): void => {
  groups.delete(pgid)
}
