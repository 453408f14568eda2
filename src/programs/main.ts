/**
 * The programs' `runMain`: the public one (layers/RunMain.ts: `NodeRuntime.runMain` plus the
 * finalizer deadline it lacks, docs/library.md "Process exit") with what a long-running program,
 * the daemon, sets while it runs: what the deadline abandons, its own deadline, its last words at
 * the deadline, and whether its stop on a signal was graceful.
 * @since 0.1.0
 */
import type * as Runtime from "@effect/platform/Runtime"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as RunMain from "../layers/RunMain.ts"

let describeAbandoned: () => string = () => ""
let deadlineOverride: Duration.DurationInput | undefined
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
  if (deadline !== undefined) deadlineOverride = deadline
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

/** `RunMain.runMain`, with the deadline, the abandoned work and the last words `onDeadline` set. */
export const runMain = <A, E>(
  program: Effect.Effect<A, E>,
  options: {
    readonly finalizerDeadline?: Duration.DurationInput
    readonly teardown?: Runtime.Teardown
  } = {}
): void =>
  RunMain.runMain(program, {
    finalizerDeadline: () => deadlineOverride ?? options.finalizerDeadline ?? "30 seconds",
    teardown: options.teardown,
    atDeadline: () => {
      const abandoned = describeAbandoned()
      try {
        lastWords()
      } catch {
        // Best effort: the exit must happen whatever the last words do.
      }
      return abandoned
    }
  })
