/**
 * Running a program as a Node process: `NodeRuntime.runMain` plus the finalizer deadline it lacks
 * (docs/library.md, "Process exit"). On SIGINT/SIGTERM the main fiber is interrupted and its
 * finalizers run (a City layer closes the City); if they have not finished within
 * `finalizerDeadline` (default 30 s), the process writes why to stderr and exits with code 130
 * instead of hanging on a stuck cleanup. A second signal during the wait ends the process at once,
 * as Node does by default.
 *
 * This module only wires the process: the CLI, the daemon and the demo run through it, and an
 * application that embeds a City can too.
 * @since 0.1.0
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Runtime from "@effect/platform/Runtime"
import * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"

/**
 * The options of `runMain`.
 * @since 0.1.0
 * @category models
 */
export interface RunMainOptions {
  /**
   * How long the finalizers may run after SIGINT/SIGTERM before the process exits (code 130);
   * default 30 seconds. A function is called when the signal arrives, for a program that learns
   * its deadline from its configuration once it runs.
   */
  readonly finalizerDeadline?: Duration.DurationInput | (() => Duration.DurationInput) | undefined
  /** The exit code once the program has ended (`NodeRuntime.runMain`'s `teardown`; default: 1 on a failure, else 0). */
  readonly teardown?: Runtime.Teardown | undefined
  /**
   * Runs when the deadline passes, just before the exit: synchronous, since nothing else can run
   * then (release what must not outlive the process). What it returns, if anything, is added to
   * the message as what the deadline abandons. A throw is ignored: the exit happens anyway.
   */
  readonly atDeadline?: (() => string | undefined) | undefined
}

/**
 * Runs `program` as the process's main fiber, like `NodeRuntime.runMain`, with a deadline on the
 * finalizers that a signal starts.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { City, runMain } from "effect-city"
 *
 * const program = Effect.flatMap(City.City, (city) => city.plugins.snapshots)
 *
 * // Ctrl-C closes the City; a plugin whose dispose hangs cannot keep the process alive past 10 s.
 * runMain(Effect.zipRight(program, Effect.never).pipe(Effect.provide(City.layer({ root: "/tmp/city" }))), {
 *   finalizerDeadline: "10 seconds"
 * })
 * ```
 * @since 0.1.0
 * @category utils
 */
export const runMain = <A, E>(program: Effect.Effect<A, E>, options: RunMainOptions = {}): void => {
  const disarm = () => {
    process.removeListener("SIGINT", arm)
    process.removeListener("SIGTERM", arm)
  }
  const given = options.finalizerDeadline ?? "30 seconds"
  // Decoded now, so that a bad value throws at the call rather than when a signal comes.
  const fixed = typeof given === "function" ? undefined : Duration.toMillis(Duration.decode(given))
  const arm = () => {
    // Armed once: a second signal finds no listener and ends the process at once.
    disarm()
    const deadline = fixed ?? Duration.toMillis(Duration.decode((given as () => Duration.DurationInput)()))
    const timer = setTimeout(() => {
      let abandoned: string | undefined
      try {
        abandoned = options.atDeadline?.()
      } catch {
        // Best effort: the exit must happen whatever the last words do.
      }
      process.stderr.write(
        `cleanup did not finish within ${deadline} ms; exiting${abandoned === undefined || abandoned === "" ? "" : `; abandoned: ${abandoned}`}\n`
      )
      process.exit(130)
    }, deadline)
    // The deadline never keeps the process alive by itself.
    timer.unref()
  }
  process.on("SIGINT", arm)
  process.on("SIGTERM", arm)
  const teardown = options.teardown ?? Runtime.defaultTeardown
  NodeRuntime.runMain(program, {
    teardown: (exit, onExit) => {
      // The program has ended: a later signal gets Node's default behaviour again.
      disarm()
      teardown(exit, onExit)
    }
  })
}
