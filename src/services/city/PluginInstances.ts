/**
 * One plugin instance's two checkpoints (spec/city-plugin-lifecycle.md, "Two lifecycle
 * checkpoints"): `start` runs initialize as the acquire, in a fresh CleanupScope, bounded by
 * `initializeTimeout`; the instance's `dispose` closes that Scope, at most once, bounded by
 * `disposeTimeout`.
 *
 * - **Every initialize is bounded.** It runs in a fiber of its own that the caller awaits with the
 *   timeout, so an initialize stuck inside an uninterruptible region (the acquire of
 *   `Effect.acquireRelease`) still fails `add` on time with reason `timed-out`. The stuck fiber is
 *   interrupted and left to finish in the background: its Scope is already closed, so whatever it
 *   acquires late is released at once. Close reports an initialize still running after its bounded
 *   wait as abandoned (`abandoned` below).
 * - **A failed initialize reports its release too.** What it acquired is released at once; if that
 *   fails, the failure is carried by PluginInitializeFailed (`release`) and the error snapshot.
 * - **Dispose once, whatever races**: a memoized effect; remove and close share its result. A
 *   dispose that outlives `disposeTimeout` is reported `timed-out` and left to finish in the
 *   background (`Effect.disconnect`). The finalizers that failed can run again (`retry`).
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import * as FiberRef from "effect/FiberRef"
import * as FiberRefs from "effect/FiberRefs"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as Scope from "effect/Scope"
import { mkdirSync } from "node:fs"
import * as path from "node:path"
import { describeCause, PluginDisposeFailed, PluginInitializeFailed } from "../../schema/Errors.ts"
import { disposeDuration, initializeDuration, spans, timed, traceLifecycle } from "../Observability.ts"
import type { Contributions } from "../Contributions.ts"
import type { Plugin } from "../Plugin.ts"
import * as LifecycleContext from "../PluginLifecycleContext.ts"
import * as CleanupScope from "./CleanupScope.ts"
import { CityConfig } from "./CityConfig.ts"
import { CityState } from "./CityState.ts"
import { PluginInstance } from "./ExecutionView.ts"

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
 * How a started instance's lifecycle context answers `requestReload`.
 * @since 0.1.0
 * @category models
 */
export interface StartOptions {
  readonly requestReload?: LifecycleContext.PluginLifecycleContextShape["requestReload"] | undefined
}

/**
 * Starts plugin instances (bounded initialize), and abandons those in flight at close.
 * @since 0.1.0
 * @category models
 */
export interface PluginInstancesShape {
  /**
   * Must run uninterruptibly (the caller's bookkeeping follows it); `restore` makes the wait for
   * initialize interruptible again, so that interrupting the caller fails it with `interrupted`.
   */
  readonly start: <E, R>(
    plugin: Plugin<E, R>,
    options: StartOptions | undefined,
    restore: <A, E2, R2>(effect: Effect.Effect<A, E2, R2>) => Effect.Effect<A, E2, R2>
  ) => Effect.Effect<Either.Either<Incarnation, PluginInitializeFailed>, never, R>
  /**
   * Close's part: interrupts every initialize in flight, waits for them up to `disposeTimeout`,
   * and returns the names of those still running (abandoned in the background).
   */
  readonly abandon: Effect.Effect<ReadonlyArray<string>>
}

/**
 * The plugin instances as a service.
 * @since 0.1.0
 * @category tags
 */
export class PluginInstances extends Context.Tag("effect-city/PluginInstances")<PluginInstances, PluginInstancesShape>() {}

const timedOut = (what: string, duration: Duration.Duration) =>
  new Cause.TimeoutException(`${what} did not complete within ${Duration.format(duration)}`)

/** The storage folder, created the first time the plugin asks for its path. */
class LazyStorage {
  #made = false
  constructor(readonly folder: string) {}
  get path(): string {
    if (!this.#made) {
      mkdirSync(this.folder, { recursive: true })
      this.#made = true
    }
    return this.folder
  }
}

/**
 * Forks `effect` as a daemon (a root fiber, inheriting the caller's fiber refs as `fork` does) and
 * starts it at once, on the caller's stack: a synchronous initialize or dispose has finished when
 * this returns, so awaiting it costs no scheduler round trip (`forkDaemon` starts the child on the
 * scheduler). One that suspends goes on in the background like any forked fiber. The fiber starts
 * with `services` added to its context and `plugin=<name>` in its log annotations, which costs
 * nothing more than the fork (`provideService` and `annotateLogs` would each add a scoped update).
 */
const forkNow = <A, E, R, S>(
  plugin: string,
  effect: Effect.Effect<A, E, R | S>,
  services: (context: Context.Context<R>) => Context.Context<R | S>
): Effect.Effect<Fiber.RuntimeFiber<A, E>, never, R> =>
  Effect.map(Effect.runtime<R>(), (runtime) =>
    Runtime.runFork(
      Runtime.make({ context: services(runtime.context), fiberRefs: runtime.fiberRefs, runtimeFlags: runtime.runtimeFlags }),
      effect,
      {
        updateRefs: (refs, fiberId) =>
          FiberRefs.updateAs(refs, {
            fiberId,
            fiberRef: FiberRef.currentLogAnnotations,
            value: HashMap.set(FiberRefs.getOrDefault(refs, FiberRef.currentLogAnnotations), "plugin", plugin)
          })
      }
    ))

/**
 * Awaits a fiber for at most `duration` (and until `cancel`, if given); when the wait ends first,
 * the fiber goes on in the background. A fiber already done (a synchronous initialize or dispose,
 * started by `forkNow`) costs no timer and no race.
 */
const awaitBounded = <A, E, E2 = never>(
  fiber: Fiber.RuntimeFiber<A, E>,
  duration: Duration.Duration,
  cancel?: Effect.Effect<never, E2>
): Effect.Effect<Exit.Exit<A, E>, Cause.TimeoutException | E2> =>
  Effect.suspend(() => {
    const done = fiber.unsafePoll()
    if (done !== null) return Effect.succeed(done)
    const bounded = Effect.timeout(Effect.interruptible(fiber.await), duration)
    return cancel === undefined ? bounded : Effect.raceFirst(bounded, cancel)
  })

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

const reasonOf = (cause: Cause.Cause<unknown>): PluginInitializeFailed["reason"] =>
  Option.match(Cause.failureOption(cause), {
    onNone: () => (Cause.isInterruptedOnly(cause) ? "interrupted" : "died"),
    onSome: () => "failed"
  })

/**
 * A started instance. A class, and the disposal's Deferred made only when someone waits for a
 * disposal that has not ended: adding and removing a plugin is a measured path
 * (bench/registry.bench.ts), and a live plugin should cost little memory.
 */
class Live implements Incarnation {
  /** The disposal fiber, once begun. */
  #disposal: Fiber.RuntimeFiber<void, PluginDisposeFailed> | undefined
  #ended = false
  #waiters: Deferred.Deferred<void> | undefined
  constructor(
    readonly name: string,
    public instance: PluginInstance,
    readonly cleanup: CleanupScope.CleanupScope,
    readonly disposeTimeout: Duration.Duration
  ) {}

  // The disposal runs once, in a fiber of its own: whoever waits for it waits at most
  // disposeTimeout, and a dispose that outlives that goes on in the background.
  get begin(): Effect.Effect<Fiber.RuntimeFiber<void, PluginDisposeFailed>> {
    return Effect.suspend(() => {
      if (this.#disposal !== undefined) return Effect.succeed(this.#disposal)
      const name = this.name
      const run = Effect.flatMap(this.cleanup.close(Exit.void), (cause) =>
        cause === undefined ? Effect.void : Effect.fail(new PluginDisposeFailed({ name, reason: "failed", cause })))
      const traced = traceLifecycle(timed(disposeDuration, run), spans.dispose, { plugin: name })
      const ended = Effect.sync(() => {
        this.#ended = true
        if (this.#waiters !== undefined) Deferred.unsafeDone(this.#waiters, Exit.void)
      })
      return Effect.map(
        forkNow(name, Effect.ensuring(traced, ended), (context) => context),
        (fiber) => (this.#disposal = fiber)
      )
    })
  }

  get dispose(): Effect.Effect<void, PluginDisposeFailed> {
    return Effect.uninterruptible(Effect.flatMap(this.begin, (fiber) =>
      awaitBounded(fiber, this.disposeTimeout).pipe(
        Effect.catchTag("TimeoutException", () => Effect.fail(disposeTimedOut(this.name, this.disposeTimeout))),
        Effect.flatten
      )))
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
 * Makes the plugin instances on the City's configuration and closing state.
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const config = yield* CityConfig
  const state = yield* CityState
  /** Initializations in flight, by fiber: their plugin's name. */
  const running = new Map<Fiber.RuntimeFiber<unknown, unknown>, string>()

  const start: PluginInstancesShape["start"] = <E, R>(
    plugin: Plugin<E, R>,
    options: StartOptions | undefined,
    restore: <A, E2, R2>(effect: Effect.Effect<A, E2, R2>) => Effect.Effect<A, E2, R2>
  ) =>
      Effect.gen(function*() {
        const name = plugin.name
        const cleanup = CleanupScope.make()
        const lifecycle = LifecycleContext.make({
          name,
          version: plugin.version,
          storage: new LazyStorage(path.join(config.root, "data", name)),
          scope: cleanup.scope,
          requestReload: options?.requestReload
        })
        // The caller's context goes outermost: the plugin's own Scope and lifecycle context win.
        const attempt = timed(initializeDuration, Effect.suspend(() => plugin.initialize))
        // Its own fiber, not a child of the caller's: a stuck initialize must not hold the caller.
        // Its context is the caller's plus the plugin's own Scope and lifecycle context.
        const fiber = yield* forkNow<Contributions, E, R, Scope.Scope | LifecycleContext.PluginLifecycleContext>(name, Effect.interruptible(attempt), (context) =>
          Context.add(Context.add(context, Scope.Scope, cleanup.scope), LifecycleContext.PluginLifecycleContext, lifecycle))
        running.set(fiber, name)
        fiber.addObserver(() => running.delete(fiber))
        // Bounded by initializeTimeout, and cut short when close begins.
        const awaited = yield* Effect.exit(restore(
          awaitBounded(fiber, config.initializeTimeout, state.cancelled(`initialize of ${name}`))
        ))
        let cause: Cause.Cause<unknown>
        let reason: PluginInitializeFailed["reason"]
        if (Exit.isFailure(awaited)) {
          fiber.unsafeInterruptAsFork(FiberId.none)
          const failure = Option.getOrUndefined(Cause.failureOption(awaited.cause))
          reason = failure?._tag === "TimeoutException" ? "timed-out" : "interrupted"
          cause = failure?._tag === "TimeoutException"
            ? Cause.fail(timedOut(`initialize of ${name}`, config.initializeTimeout))
            : awaited.cause
        } else if (Exit.isSuccess(awaited.value)) {
          const instance = new PluginInstance(name, plugin.version, awaited.value.value, {})
          return Either.right<Incarnation>(new Live(name, instance, cleanup, config.disposeTimeout))
        } else {
          cause = awaited.value.cause
          reason = reasonOf(cause)
        }
        const release = yield* cleanup.close(Exit.failCause(cause))
        return Either.left(
          new PluginInitializeFailed({ name, reason, cause, ...(release === undefined ? {} : { release }) })
        )
      }).pipe((effect) => traceLifecycle(effect, spans.initialize, { plugin: plugin.name, version: plugin.version }))

  const abandon: PluginInstancesShape["abandon"] = Effect.suspend(() => {
    const fibers = Array.from(running.keys())
    for (const fiber of fibers) fiber.unsafeInterruptAsFork(FiberId.none)
    return Effect.forEach(fibers, (fiber) => fiber.await, { concurrency: "unbounded", discard: true }).pipe(
      Effect.interruptible,
      Effect.timeout(config.disposeTimeout),
      Effect.ignore,
      Effect.map(() => Array.from(running.values()).sort())
    )
  })

  return { start, abandon } satisfies PluginInstancesShape
})

/**
 * The plugin instances as a Layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(PluginInstances, make)

/**
 * The first line of a failed initialize's causes, for its error snapshot.
 * @since 0.1.0
 * @category utils
 */
export const lastError = (error: PluginInitializeFailed): string =>
  error.release === undefined
    ? describeCause(error.cause)
    : `${describeCause(error.cause)}; releasing what it acquired failed too: ${describeCause(error.release)}`
