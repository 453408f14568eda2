/**
 * How a plugin's two checkpoints run (docs/city-plugin-lifecycle.md, "Two lifecycle checkpoints"):
 * initialize and dispose each run in a fiber of their own, so that whoever waits for one waits at
 * most its timeout (`initializeTimeout`, `disposeTimeout`) while a checkpoint stuck in an
 * uninterruptible region goes on in the background.
 *
 * The fiber is started at once, on the caller's stack (`Runtime.runFork`, which starts a fiber
 * immediately, unlike `Effect.forkDaemon`, which starts it on the scheduler): a synchronous
 * initialize or dispose (most of them) has ended when `start` returns, so awaiting it costs
 * neither a scheduler round trip nor a timer. Adding and removing a plugin is a measured path
 * (bench/registry.bench.ts, goal ≤ 25x a bare Scope op), and this is most of what makes it cheap.
 * @since 0.1.0
 */
import type * as Cause from "effect/Cause"
import type * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"
import * as FiberRefs from "effect/FiberRefs"
import * as HashMap from "effect/HashMap"
import type * as Metric from "effect/Metric"
import * as Runtime from "effect/Runtime"

const noLabels: ReadonlyArray<never> = []

/**
 * Where a plugin's checkpoints run: the fiber refs of the fiber that added it, with `context` as
 * its services and `plugin=<name>` in its log annotations. Made once per instance and kept for its
 * dispose when the instance acquired something: `Effect.addFinalizer` (and so `acquireRelease`)
 * runs each finalizer with the fiber refs of its acquire, patched over the dispose fiber's by a
 * diff whose cost grows with what differs; from the same refs nothing differs.
 * @since 0.1.0
 * @category constructors
 */
export const runtimeFor = <R>(plugin: string, caller: Runtime.Runtime<never>, context: Context.Context<R>): Runtime.Runtime<R> =>
  Runtime.make({
    context,
    fiberRefs: FiberRefs.updateAs(caller.fiberRefs, {
      fiberId: FiberId.unsafeMake(),
      fiberRef: FiberRef.currentLogAnnotations,
      value: HashMap.set(FiberRefs.getOrDefault(caller.fiberRefs, FiberRef.currentLogAnnotations), "plugin", plugin)
    }),
    runtimeFlags: caller.runtimeFlags
  })

/**
 * Starts a checkpoint now on `runtime` (see {@link runtimeFor}): a root fiber (a daemon: it
 * outlives its caller) whose fiber refs are forked from the runtime's, as `fork` does. Its
 * duration, from start to end, goes into `histogram` (monotonic clock).
 * @since 0.1.0
 * @category constructors
 */
export const start = <A, E, R>(
  runtime: Runtime.Runtime<R>,
  effect: Effect.Effect<A, E, R>,
  histogram: Pick<Metric.Metric<unknown, Duration.Duration, unknown>, "unsafeUpdate">
): Fiber.RuntimeFiber<A, E> => {
  const began = performance.now()
  const fiber = Runtime.runFork(runtime, effect)
  const record = () => histogram.unsafeUpdate(Duration.millis(performance.now() - began), noLabels)
  if (fiber.unsafePoll() === null) fiber.addObserver(record)
  else record()
  return fiber
}

/**
 * Awaits a checkpoint's fiber for at most `duration` (and until `cancel`, if given); when the wait
 * ends first, the fiber goes on in the background. A fiber that has already ended costs no timer
 * and no race. The wait is interruptible.
 * @since 0.1.0
 * @category combinators
 */
export const awaitBounded = <A, E, E2 = never>(
  fiber: Fiber.RuntimeFiber<A, E>,
  duration: Duration.Duration,
  cancel?: () => Effect.Effect<never, E2>
): Effect.Effect<Exit.Exit<A, E>, Cause.TimeoutException | E2> =>
  Effect.suspend(() => {
    const done = fiber.unsafePoll()
    if (done !== null) return Effect.succeed(done)
    const bounded = Effect.timeout(Effect.interruptible(fiber.await), duration)
    return cancel === undefined ? bounded : Effect.raceFirst(bounded, cancel())
  })
