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

export const runMain = <A, E>(
  program: Effect.Effect<A, E>,
  options: {
    readonly finalizerDeadline?: Duration.DurationInput
    readonly teardown?: Runtime.Teardown
  } = {}
): void => {
  const deadline = Duration.toMillis(Duration.decode(options.finalizerDeadline ?? "30 seconds"))
  const arm = () => {
    const timer = setTimeout(() => {
      process.stderr.write(`cleanup did not finish within ${deadline} ms; exiting\n`)
      process.exit(130)
    }, deadline)
    timer.unref()
  }
  process.once("SIGINT", arm)
  process.once("SIGTERM", arm)
  NodeRuntime.runMain(program, options.teardown === undefined ? {} : { teardown: options.teardown })
}
