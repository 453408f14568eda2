/**
 * Running a program as a process: `NodeRuntime.runMain` plus the finalizer deadline it lacks.
 * On SIGINT/SIGTERM the main fiber is interrupted and its finalizers run (the City closes); if
 * they have not finished within `finalizerDeadline` (default 30 s), the process exits with code
 * 130 instead of hanging on a stuck cleanup.
 * @since 0.1.0
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import type * as Runtime from "@effect/platform/Runtime"
import * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"

let describeAbandoned: () => string = () => ""
let deadlineOverride: number | undefined
let lastWords: () => void = () => {}

/**
 * Lets a long-running program (the daemon) say what the deadline abandons (the text is added to
 * the deadline's message), optionally choose the deadline itself, and give what must still be done
 * when it exits there (`atDeadline`: synchronous, since nothing else can run then; the daemon
 * removes its pid file). The commands still running are sent SIGKILL at that exit too
 * (capabilities/ChildGroups.ts).
 */
export const onDeadline = (describe: () => string, deadline?: Duration.DurationInput, atDeadline?: () => void): void => {
  describeAbandoned = describe
  if (deadline !== undefined) deadlineOverride = Duration.toMillis(Duration.decode(deadline))
  if (atDeadline !== undefined) lastWords = atDeadline
}

let graceful = false

/**
 * A long-running program (the daemon) whose stop on SIGINT/SIGTERM is its normal end marks it
 * here once its cleanup finished; the process then exits 0 rather than 130/143.
 */
export const markGracefulStop = (): void => {
  graceful = true
}

/** Whether the program marked its interruption as a graceful stop. */
export const stoppedGracefully = (): boolean => graceful

export const runMain = <A, E>(
  program: Effect.Effect<A, E>,
  options: {
    readonly finalizerDeadline?: Duration.DurationInput
    readonly teardown?: Runtime.Teardown
  } = {}
): void => {
  const configured = Duration.toMillis(Duration.decode(options.finalizerDeadline ?? "30 seconds"))
  const arm = () => {
    const deadline = deadlineOverride ?? configured
    const timer = setTimeout(() => {
      const abandoned = describeAbandoned()
      process.stderr.write(
        `cleanup did not finish within ${deadline} ms; exiting${abandoned === "" ? "" : `; abandoned: ${abandoned}`}\n`
      )
      try {
        lastWords()
      } catch {
        // Best effort: the exit must happen whatever the last words do.
      }
      process.exit(130)
    }, deadline)
    timer.unref()
  }
  process.once("SIGINT", arm)
  process.once("SIGTERM", arm)
  NodeRuntime.runMain(program, options.teardown === undefined ? {} : { teardown: options.teardown })
}
