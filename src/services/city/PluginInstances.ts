/**
 * Starting plugin instances (docs/city-plugin-lifecycle.md, "Two lifecycle checkpoints"): `start`
 * runs initialize as the acquire, into a fresh Effect `Scope`, bounded by `initializeTimeout`; what
 * it returns is an PluginLife, whose dispose closes that Scope at most once.
 *
 * - **Every initialize is bounded.** It runs in a fiber of its own, started at once in a
 *   `FiberMap` this service owns (`FiberMap.run`), which the caller awaits with the timeout: an
 *   initialize stuck inside an uninterruptible region (the acquire of `Effect.acquireRelease`)
 *   still fails `add` on time with reason `timed-out`. The stuck fiber is interrupted and left to
 *   finish in the background; its Scope is closed when it has ended, so whatever it acquired,
 *   late too, is released then. Close reports an initialize still running after its bounded wait
 *   as abandoned (`abandon`: the FiberMap's entries are the initializations in flight).
 * - **A failed initialize reports its release too.** What it acquired is released at once; if that
 *   fails, the failure is carried by PluginInitializeFailed (`release`) and the error snapshot.
 * - Its log lines carry `plugin=<name>`; its duration goes into the initialize histogram.
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberMap from "effect/FiberMap"
import * as FiberRef from "effect/FiberRef"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import { describeCause, PluginInitializeFailed } from "../../schema/Errors.ts"
import { spans } from "../Observability.ts"
import { traceLifecycle } from "../internal/tracing.ts"
import { unsafeLifecycleDuration } from "../internal/counters.ts"
import type { Contributions } from "../Contributions.ts"
import type { Plugin } from "../Plugin.ts"
import * as LifecycleContext from "../PluginLifecycleContext.ts"
import { PluginLiveness } from "./PluginLiveness.ts"
import { SiblingViews, type SiblingViewsShape } from "../Siblings.ts"
import { LeaseTable } from "./LeaseTable.ts"
import { providerIn } from "./ExecutionView.ts"
import { CityConfig } from "./CityConfig.ts"
import * as CityRoot from "./CityRoot.ts"
import { ClosingPhase } from "./ClosingPhase.ts"
import { PluginInstance } from "./ExecutionView.ts"
import { closeScope, type PluginLife, make as makePluginLife } from "./PluginLife.ts"
import { PluginStorage } from "./PluginStorage.ts"

/**
 * How a started instance's lifecycle context answers `requestReload`.
 * @since 0.1.0
 * @category models
 */
export interface StartOptions {
  readonly requestReload?: LifecycleContext.PluginLifecycleContextShape["requestReload"] | undefined
  readonly config?: LifecycleContext.PluginConfig | undefined
  /** What the plugin's PluginLiveness does when it is lost (the registry's `crashed`). */
  readonly lost?: PluginLiveness["Type"]["lost"] | undefined
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
  ) => Effect.Effect<Either.Either<PluginLife, PluginInitializeFailed>, never, R>
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

const reasonOf = (cause: Cause.Cause<unknown>): PluginInitializeFailed["reason"] =>
  Option.match(Cause.failureOption(cause), {
    onNone: () => (Cause.isInterruptedOnly(cause) ? "interrupted" : "died"),
    onSome: () => "failed"
  })

/**
 * Makes the plugin instances on the City's configuration and closing state.
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const config = yield* CityConfig
  const state = yield* ClosingPhase
  const table = yield* LeaseTable
  const siblingViews: SiblingViewsShape = {
    lease: () => {
      const lease = table.acquire()
      return { provider: (tag) => providerIn(lease.view, tag), release: lease.release }
    }
  }
  // Initializations in flight, keyed by `<name>#<attempt>` (a stuck one may outlive its attempt).
  // The map lives in a Scope of its own that is never closed: close interrupts the fibers
  // (`abandon`) and waits for them only up to its bound; one stuck in an uninterruptible region
  // is left to end in the background, where its Scope is closed then.
  const running = yield* Scope.extend(FiberMap.make<string, Contributions, unknown>(), yield* Scope.make())
  // The Clock of the fiber that makes the registry (a TestClock in a test), for the durations.
  const clock = yield* Effect.clock
  let attempts = 0

  const failed = (name: string, cause: Cause.Cause<unknown>, reason: PluginInitializeFailed["reason"], release?: Cause.Cause<unknown>) =>
    Either.left(new PluginInitializeFailed({ plugin: name, reason, cause, ...(release === undefined ? {} : { release }) }))

  /** A settled initialize: the life, or the failure (after releasing what it acquired). */
  const settle = (
    plugin: Plugin<unknown, unknown>,
    scope: Scope.CloseableScope,
    exit: Exit.Exit<Contributions, unknown>
  ): Effect.Effect<Either.Either<PluginLife, PluginInitializeFailed>> => {
    const name = plugin.name
    if (Exit.isSuccess(exit)) {
      const instance = new PluginInstance(name, plugin.version, exit.value, {})
      return Effect.succeed(Either.right(makePluginLife({ name, instance, scope, disposeTimeout: config.disposeTimeout, clock })))
    }
    return Effect.map(Effect.either(closeScope(name, scope, exit)), (released) =>
      failed(name, exit.cause, reasonOf(exit.cause), released._tag === "Left" ? released.left.cause : undefined))
  }

  const start: PluginInstancesShape["start"] = <E, R>(
    plugin: Plugin<E, R>,
    options: StartOptions | undefined,
    restore: <A, E2, R2>(effect: Effect.Effect<A, E2, R2>) => Effect.Effect<A, E2, R2>
  ) =>
    traceLifecycle(
      Effect.gen(function*() {
        const name = plugin.name
        const scope = yield* Scope.make()
        const lifecycle = LifecycleContext.make({
          name,
          version: plugin.version,
          storage: new PluginStorage(CityRoot.dataFolder(config.root, name)),
          scope,
          requestReload: options?.requestReload,
          config: options?.config
        })
        const initialize = Effect.suspend(() => plugin.initialize).pipe(
          Effect.interruptible,
          Effect.provideService(Scope.Scope, scope),
          Effect.provideService(LifecycleContext.PluginLifecycleContext, lifecycle),
          Effect.provideService(SiblingViews, siblingViews),
          Effect.provideService(PluginLiveness, { lost: options?.lost ?? (() => Effect.void) }),
          // Its logs carry the plugin's name. This is the first step of the fiber `FiberMap.run`
          // gives it, whose refs no one inherits: set, with nothing to restore.
          (initialize) =>
            Effect.zipRight(FiberRef.update(FiberRef.currentLogAnnotations, (annotations) => HashMap.set(annotations, "plugin", name)), initialize)
        )
        // How long it took, successful or not, until the wait for it ended.
        // unsafe: read in this step, as the registry's Snapshots read their clock (an add's cost).
        const started = clock.unsafeCurrentTimeNanos()
        // unsafe: recorded where the wait ends, in no Effect step of its own (internal/counters.ts).
        const took = () => unsafeLifecycleDuration("initialize", clock.unsafeCurrentTimeNanos() - started)
        // Its own fiber, not a child of the caller's: a stuck initialize must not hold the caller.
        const fiber = yield* FiberMap.run(running, `${name}#${++attempts}`, initialize)
        // The fiber started at once: a synchronous initialize (most of them) has already ended,
        // and needs neither the bounded wait nor the race with close.
        const done = yield* Fiber.poll(fiber)
        if (Option.isSome(done)) {
          took()
          return yield* settle(plugin as Plugin<unknown, unknown>, scope, done.value)
        }
        const awaited = yield* Effect.exit(restore(
          Effect.interruptible(Fiber.await(fiber)).pipe(
            Effect.timeout(config.initializeTimeout),
            (bounded) => Effect.raceFirst(bounded, state.cancelled(`initialize of ${name}`))
          )
        ))
        took()
        if (Exit.isSuccess(awaited)) return yield* settle(plugin as Plugin<unknown, unknown>, scope, awaited.value)
        // Timed out, cancelled by close, or the caller interrupted: the fiber is interrupted and its
        // Scope closed once it has ended (an uninterruptible region runs to its end first).
        yield* Effect.forkDaemon(Effect.zipRight(Fiber.interrupt(fiber), Effect.ignore(closeScope(name, scope, Exit.void))))
        const failure = Option.getOrUndefined(Cause.failureOption(awaited.cause))
        return failure?._tag === "TimeoutException"
          ? failed(name, Cause.fail(timedOut(`initialize of ${name}`, config.initializeTimeout)), "timed-out")
          : failed(name, awaited.cause, "interrupted")
      }),
      spans.initialize,
      { plugin: plugin.name, version: plugin.version }
    )

  const abandon: PluginInstancesShape["abandon"] = Effect.gen(function*() {
    const fibers = Array.from(running, ([, fiber]) => fiber)
    yield* Effect.forEach(fibers, (fiber) => Fiber.interruptFork(fiber), { discard: true })
    yield* Effect.forEach(fibers, (fiber) => Fiber.await(fiber), { concurrency: "unbounded", discard: true }).pipe(
      Effect.interruptible,
      Effect.timeout(config.disposeTimeout),
      Effect.ignore
    )
    return Array.from(running, ([key]) => key.slice(0, key.lastIndexOf("#"))).sort()
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
