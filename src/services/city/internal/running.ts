/**
 * The bodies running under a close that waits for them: Steps and calls under a lease
 * (ExecutionLeases) and Turns (Sessions). One primitive for both (docs/city-plugin-lifecycle.md,
 * "Execution leases": "city.close() stops Sessions before releasing Plugins"; docs/design.md,
 * "Close": "let running Steps finish up to drainTimeout, then interrupt").
 *
 * `track(body)` counts the current fiber while `body` runs (a fiber may run nested bodies: a Step
 * that makes calls); `drain(timeout)` waits until none runs, at most `timeout`, then interrupts the
 * fibers still running and waits for them as long again. Tracking costs a Map update; the Deferred
 * a drain waits on is made only when a drain begins.
 * @since 0.1.0
 */
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"

/**
 * Bodies being run, and the drain of close.
 * @since 0.1.0
 * @category models
 */
export interface Running {
  /** Runs `body`, counting the current fiber as running until it ends, whatever the exit. */
  readonly track: <A, E, R>(body: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** How many fibers run a body now. */
  readonly size: () => number
  /**
   * Waits until no body runs, at most `timeout`; then interrupts the fibers still running and
   * waits for them, at most `timeout` again. Succeeds with how many fibers it interrupted.
   */
  readonly drain: (timeout: Duration.DurationInput) => Effect.Effect<number>
}

/**
 * Makes an empty set of running bodies.
 * @since 0.1.0
 * @category constructors
 */
export const make = (): Running => {
  const fibers = new Map<Fiber.RuntimeFiber<unknown, unknown>, number>()
  let idle: Deferred.Deferred<void> | undefined

  const leave = (fiber: Fiber.RuntimeFiber<unknown, unknown>) =>
    Effect.suspend(() => {
      const n = (fibers.get(fiber) ?? 1) - 1
      if (n > 0) fibers.set(fiber, n)
      else fibers.delete(fiber)
      return fibers.size === 0 && idle !== undefined ? Deferred.succeed(idle, undefined) : Effect.void
    })

  const track: Running["track"] = (body) =>
    Effect.withFiberRuntime((fiber) => {
      fibers.set(fiber, (fibers.get(fiber) ?? 0) + 1)
      return Effect.ensuring(body, leave(fiber))
    })

  const awaitIdle = (done: Deferred.Deferred<void>, timeout: Duration.DurationInput) =>
    Effect.interruptible(Deferred.await(done)).pipe(Effect.timeout(timeout), Effect.option)

  const drain: Running["drain"] = (timeout) =>
    Effect.gen(function*() {
      if (fibers.size === 0) return 0
      const done = idle ?? (idle = yield* Deferred.make<void>())
      if ((yield* awaitIdle(done, timeout))._tag === "Some") return 0
      const left = Array.from(fibers.keys())
      yield* Effect.forEach(left, (fiber) => Fiber.interruptFork(fiber), { discard: true })
      yield* awaitIdle(done, timeout)
      return left.length
    })

  return { track, size: () => fibers.size, drain }
}
