/**
 * A started plugin instance and its dispose checkpoint (docs/city-plugin-lifecycle.md, "Two
 * lifecycle checkpoints": "dispose(context) runs once when the Plugin is removed or City closes").
 *
 * The instance's resources live in an Effect `Scope` (the one its initialize acquired into);
 * dispose is closing it. Decisions:
 * - **Once, whatever races.** The disposal runs at most once, in a root fiber of its own started on
 *   the first caller's runtime (`Runtime.runFork`): remove and close share its result, and a later
 *   dispose returns that result again (a failure too) without running anything twice.
 * - **Bounded waits.** Whoever waits for it waits at most `disposeTimeout`: a dispose that outlives
 *   that is reported `timed-out` and goes on in the background.
 * - **Failures are reported, not retried.** A finalizer that fails makes the dispose fail with
 *   `PluginDisposeFailed` (`failed`, with every failure's Cause). A release that may fail
 *   transiently retries inside itself, so its Scope closes once:
 *   `Effect.acquireRelease(open, (conn) => conn.close.pipe(Effect.retry(Schedule.recurs(3))))`.
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as Scope from "effect/Scope"
import { PluginDisposeFailed } from "../../schema/Errors.ts"
import { spans } from "../Observability.ts"
import { traceLifecycle } from "../internal/tracing.ts"
import { unsafeLifecycleDuration } from "../internal/counters.ts"
import type { PluginInstance } from "./ExecutionView.ts"

/**
 * A started plugin instance: what the registry publishes, and how it ends.
 * @since 0.1.0
 * @category models
 */
export interface PluginLife {
  /** The instance views show; a skills reload replaces it by one of the same life. */
  instance: PluginInstance
  /**
   * Starts the disposal (closing its Scope) the first time, as a fiber of `runtime` (the caller's:
   * its logger, its tracer); the fiber that runs it. Synchronous, so that close starts a thousand
   * with one runtime.
   */
  readonly beginIn: (runtime: Runtime.Runtime<never>) => Fiber.RuntimeFiber<void, PluginDisposeFailed>
  /** Disposes the instance the first time; later calls share that result. Bounded by disposeTimeout. */
  readonly dispose: Effect.Effect<void, PluginDisposeFailed>
  /** Completes when the disposal has ended, whoever started it; starts nothing. */
  readonly disposed: Effect.Effect<void>
  /** How long the disposal took, or has taken so far if it is still running (zero before it starts). */
  readonly elapsed: () => Duration.Duration
}

/**
 * The failure of a dispose that did not end within `disposeTimeout` (it goes on in the background).
 * @since 0.1.0
 * @category constructors
 */
export const disposeTimedOut = (name: string, timeout?: Duration.Duration) =>
  new PluginDisposeFailed({
    plugin: name,
    reason: "timed-out",
    cause: Cause.fail(new Cause.TimeoutException(`dispose of ${name} did not complete${timeout === undefined ? " in time" : ` within ${Duration.format(timeout)}`}`))
  })

/**
 * Closes a plugin's Scope: a finalizer that fails or dies makes the dispose fail with every Cause.
 * @since 0.1.0
 * @category constructors
 */
export const closeScope = (name: string, scope: Scope.CloseableScope, exit: Exit.Exit<unknown, unknown>) =>
  Effect.flatMap(Effect.exit(Scope.close(scope, exit)), (closed) =>
    Exit.isSuccess(closed) ? Effect.void : Effect.fail(new PluginDisposeFailed({ plugin: name, reason: "failed", cause: closed.cause })))

/**
 * Makes the life of an instance whose initialize succeeded, over the Scope it acquired into.
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: {
  readonly name: string
  readonly instance: PluginInstance
  readonly scope: Scope.CloseableScope
  readonly disposeTimeout: Duration.Duration
  /** The Clock the dispose's duration is read from (the registry's). */
  readonly clock: Clock.Clock
}): PluginLife => {
  const { clock, disposeTimeout, name } = options
  let fiber: Fiber.RuntimeFiber<void, PluginDisposeFailed> | undefined
  let started: bigint | undefined
  let endedAt: bigint | undefined
  // unsafe: `make` is synchronous (the registry publishes a life in the step its initialize ends).
  const ended = Deferred.unsafeMake<void>(FiberId.none)
  const run = Effect.suspend(() => {
    // unsafe: read in this step, as the registry's Snapshots read their clock (a close's cost).
    const begun = clock.unsafeCurrentTimeNanos()
    started = begun
    return closeScope(name, options.scope, Exit.void).pipe(
      (close) => traceLifecycle(close, spans.dispose, { plugin: name }),
      // The disposal's logs carry the plugin's name. This runs as the first step of its own root
      // fiber (`beginIn`), whose refs no one inherits: set, with nothing to restore
      // (`Effect.annotateLogs` would restore them, a third of a close's cost).
      (close) => Effect.zipRight(FiberRef.update(FiberRef.currentLogAnnotations, (annotations) => HashMap.set(annotations, "plugin", name)), close),
      Effect.ensuring(Effect.suspend(() => {
        // unsafe: read in the step that ends every disposal (internal/counters.ts says why).
        endedAt = clock.unsafeCurrentTimeNanos()
        // unsafe: recorded in that same step.
        unsafeLifecycleDuration("dispose", endedAt - begun)
        return Deferred.succeed(ended, undefined)
      }))
    )
  })
  const beginIn = (runtime: Runtime.Runtime<never>) => (fiber ??= Runtime.runFork(runtime)(run))
  const begin = Effect.flatMap(Effect.runtime<never>(), (runtime) => Effect.sync(() => beginIn(runtime)))
  // The wait is interruptible even inside close's uninterruptible region, so the timeout can end it.
  // A dispose that has already ended (a synchronous one) is its Exit, without a timer.
  const dispose = Effect.flatMap(begin, (started) =>
    Effect.flatMap(Fiber.poll(started), (done) =>
      Option.isSome(done)
        ? done.value
        : Effect.interruptible(Fiber.await(started)).pipe(
          Effect.timeout(disposeTimeout),
          Effect.catchTag("TimeoutException", () => Effect.fail(disposeTimedOut(name, disposeTimeout))),
          Effect.flatten
        )))
  const disposed = Deferred.await(ended)
  const elapsed = () => {
    if (started === undefined) return Duration.zero
    if (endedAt !== undefined) return Duration.nanos(endedAt - started)
    // unsafe: a synchronous read for close's report, of a disposal still running.
    return Duration.nanos(clock.unsafeCurrentTimeNanos() - started)
  }
  return { instance: options.instance, beginIn, dispose, disposed, elapsed }
}
