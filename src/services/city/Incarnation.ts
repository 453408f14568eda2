/**
 * A started plugin instance and its dispose checkpoint (docs/city-plugin-lifecycle.md, "Two
 * lifecycle checkpoints"; docs/design.md: "dispose once").
 *
 * - **Dispose once, whatever races**: the disposal (closing the instance's CleanupScope) runs once,
 *   in a fiber of its own (Checkpoint); remove and close share its result. Whoever waits for it
 *   waits at most `disposeTimeout`: a dispose that outlives that is reported `timed-out` and goes
 *   on in the background. The finalizers that failed can run again (`retry`).
 * - **Cheap while it lives**: one object; the Deferred behind `disposed` is made only when someone
 *   waits for a disposal that has not ended. Adding and removing a plugin is a measured path
 *   (bench/registry.bench.ts), and 10,000 live plugins should cost little memory.
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as Scope from "effect/Scope"
import * as Tracer from "effect/Tracer"
import * as FiberId from "effect/FiberId"
import { PluginDisposeFailed } from "../../schema/Errors.ts"
import { disposeDuration, spans, traceLifecycle } from "../Observability.ts"
import * as Checkpoint from "./Checkpoint.ts"
import type * as CleanupScope from "./CleanupScope.ts"
import type { PluginInstance } from "./ExecutionView.ts"

/**
 * A started plugin instance: what the registry publishes, and how it ends.
 * @since 0.1.0
 * @category models
 */
export interface Incarnation {
  /** The instance views show; a skills reload replaces it by one of the same incarnation. */
  instance: PluginInstance
  /** Starts the disposal (closing its Scope) the first time; returns the fiber that runs it. */
  readonly begin: Effect.Effect<Fiber.RuntimeFiber<void, PluginDisposeFailed>>
  /** Disposes the instance the first time; later calls share that result. Bounded by disposeTimeout. */
  readonly dispose: Effect.Effect<void, PluginDisposeFailed>
  /** Completes when the disposal has ended, whoever started it; starts nothing. */
  readonly disposed: Effect.Effect<void>
  /** Runs again the finalizers that failed; succeeds with what still fails. */
  readonly retry: Effect.Effect<Cause.Cause<unknown> | undefined>
}

/**
 * The failure of a dispose that did not end within `disposeTimeout` (it goes on in the background).
 * @since 0.1.0
 * @category constructors
 */
export const disposeTimedOut = (name: string, timeout?: Duration.Duration) =>
  new PluginDisposeFailed({
    name,
    reason: "timed-out",
    cause: Cause.fail(new Cause.TimeoutException(`dispose of ${name} did not complete${timeout === undefined ? " in time" : ` within ${Duration.format(timeout)}`}`))
  })

class Live implements Incarnation {
  /** The disposal fiber, once begun. */
  #disposal: Fiber.RuntimeFiber<void, PluginDisposeFailed> | undefined
  #ended = false
  #waiters: Deferred.Deferred<void> | undefined
  constructor(
    readonly name: string,
    public instance: PluginInstance,
    readonly cleanup: CleanupScope.CleanupScope,
    readonly checkpoint: Runtime.Runtime<never> | undefined,
    readonly disposeTimeout: Duration.Duration
  ) {}

  /** Starts the disposal, the first time, on the caller's fiber refs. */
  #begin(caller: Runtime.Runtime<never>) {
    if (this.#disposal !== undefined) return this.#disposal
    const name = this.name
    const run = Effect.flatMap(this.cleanup.close(Exit.void), (cause) =>
      cause === undefined ? Effect.void : Effect.fail(new PluginDisposeFailed({ name, reason: "failed", cause })))
    // The instance acquired something: its finalizers run on the fiber refs of its initialize
    // (Checkpoint.runtimeFor), under the span of the caller that disposes it. Otherwise the
    // caller's refs, without its Scope: a dispose runs on its own, whoever removes or closes.
    const runtime = this.checkpoint ?? Runtime.make({
      context: Context.omit(Scope.Scope)(caller.context),
      fiberRefs: caller.fiberRefs,
      runtimeFlags: caller.runtimeFlags
    })
    const parent = Option.getOrUndefined(Context.getOption(caller.context, Tracer.ParentSpan))
    const fiber = Checkpoint.start(runtime, traceLifecycle(run, spans.dispose, { plugin: name }, parent), disposeDuration)
    this.#disposal = fiber
    const ended = () => {
      this.#ended = true
      if (this.#waiters !== undefined) Deferred.unsafeDone(this.#waiters, Exit.void)
    }
    if (fiber.unsafePoll() === null) fiber.addObserver(ended)
    else ended()
    return fiber
  }

  get begin(): Effect.Effect<Fiber.RuntimeFiber<void, PluginDisposeFailed>> {
    return Effect.map(Effect.runtime<never>(), (runtime) => this.#begin(runtime))
  }

  get dispose(): Effect.Effect<void, PluginDisposeFailed> {
    return Effect.flatMap(Effect.runtime<never>(), (runtime) => {
      const fiber = this.#begin(runtime)
      // Ended already (a synchronous dispose): its Exit is the result.
      const done = fiber.unsafePoll()
      if (done !== null) return done
      return Checkpoint.awaitBounded(fiber, this.disposeTimeout).pipe(
        Effect.catchTag("TimeoutException", () => Effect.fail(disposeTimedOut(this.name, this.disposeTimeout))),
        Effect.flatten
      )
    })
  }

  get disposed(): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (this.#ended) return Effect.void
      this.#waiters ??= Deferred.unsafeMake<void>(FiberId.none)
      return Deferred.await(this.#waiters)
    })
  }

  get retry(): Effect.Effect<Cause.Cause<unknown> | undefined> {
    return this.cleanup.close(Exit.void)
  }
}

/**
 * Makes the incarnation of an instance whose initialize succeeded.
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: {
  readonly name: string
  readonly instance: PluginInstance
  readonly cleanup: CleanupScope.CleanupScope
  /** Where its initialize ran (Checkpoint.runtimeFor); kept for its dispose if it acquired something. */
  readonly checkpoint: Runtime.Runtime<never>
  readonly disposeTimeout: Duration.Duration
}): Incarnation =>
  new Live(
    options.name,
    options.instance,
    options.cleanup,
    options.cleanup.acquired() ? options.checkpoint : undefined,
    options.disposeTimeout
  )
