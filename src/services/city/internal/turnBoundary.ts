/**
 * A Session's Turn boundary (`session.atNextBoundary`): effects queued while a Turn runs, run in
 * order right after it ends and before the next one begins (or at once, by whoever finds the
 * Session idle). A caller interrupted before its turn comes is forgotten: its effect never runs.
 * When the Session closes, every queued caller fails with SessionError (reason SessionError).
 * @since 0.1.0
 */
import type * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import type { SessionError } from "../../../schema/Errors.ts"

/**
 * The queue of one Session's boundary.
 * @since 0.1.0
 * @category models
 */
export interface TurnBoundary {
  /** Runs the queued effects, in order, until none is left. */
  readonly drain: Effect.Effect<void>
  /**
   * Queues `effect`, then runs `kick()` (which drains the queue if the Session is idle; asked right
   * after queueing, so that a Turn ending meanwhile cannot leave it behind) and waits for the
   * effect's result.
   */
  readonly enqueue: <A, E, R>(
    effect: Effect.Effect<A, E, R>,
    session: {
      /** The Session's refusal, if it is closed: checked in the same step as queueing. */
      readonly refuse: () => SessionError | undefined
      readonly kick: () => Effect.Effect<void>
    }
  ) => Effect.Effect<A, E | SessionError, R>
  /** Fails every queued caller with `error`. */
  readonly cancelAll: (error: SessionError) => void
}

interface Job {
  readonly run: Effect.Effect<void>
  readonly cancel: (error: SessionError) => void
}

/**
 * Makes an empty boundary queue.
 * @since 0.1.0
 * @category constructors
 */
export const make = (): TurnBoundary => {
  let pending: Array<Job> = []

  const drain: Effect.Effect<void> = Effect.suspend(() => {
    const job = pending.shift()
    return job === undefined ? Effect.void : Effect.zipRight(job.run, drain)
  })

  return {
    drain,
    enqueue: <A, E, R>(effect: Effect.Effect<A, E, R>, session: Parameters<TurnBoundary["enqueue"]>[1]) =>
      Effect.contextWithEffect((context: Context.Context<R>): Effect.Effect<A, E | SessionError> => {
        const refused = session.refuse()
        if (refused !== undefined) return Effect.fail(refused)
        // unsafe: registered and cancelled by the Session's synchronous boundary bookkeeping.
        const done = Deferred.unsafeMake<Exit.Exit<A, E | SessionError>>(FiberId.none)
        const job: Job = {
          run: Effect.flatMap(Effect.exit(Effect.provide(effect, context)), (exit) => Deferred.succeed(done, exit)),
          // unsafe: as above.
          cancel: (error) => Deferred.unsafeDone(done, Exit.succeed(Exit.fail(error)))
        }
        pending.push(job)
        return Effect.zipRight(session.kick(), Effect.flatten(Deferred.await(done))).pipe(
          // A caller interrupted before its turn came is forgotten.
          Effect.onInterrupt(() =>
            Effect.sync(() => {
              pending = pending.filter((j) => j !== job)
            })
          )
        )
      }),
    cancelAll: (error) => {
      const cancelled = pending
      pending = []
      for (const job of cancelled) job.cancel(error)
    }
  }
}
