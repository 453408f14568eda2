/**
 * Starting plugin instances (docs/city-plugin-lifecycle.md, "Two lifecycle checkpoints"): `start`
 * runs initialize as the acquire, in a fresh CleanupScope, bounded by `initializeTimeout`; what it
 * returns is an Incarnation, whose dispose closes that Scope at most once.
 *
 * - **Every initialize is bounded.** It runs in a fiber of its own (Checkpoint) that the caller
 *   awaits with the timeout, so an initialize stuck inside an uninterruptible region (the acquire
 *   of `Effect.acquireRelease`) still fails `add` on time with reason `timed-out`. The stuck fiber
 *   is interrupted and left to finish in the background: its Scope is already closed, so whatever
 *   it acquires late is released at once. Close reports an initialize still running after its
 *   bounded wait as abandoned (`abandon`).
 * - **A failed initialize reports its release too.** What it acquired is released at once; if that
 *   fails, the failure is carried by PluginInitializeFailed (`release`) and the error snapshot.
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Runtime from "effect/Runtime"
import * as Scope from "effect/Scope"
import { mkdirSync } from "node:fs"
import * as path from "node:path"
import { describeCause, PluginInitializeFailed } from "../../schema/Errors.ts"
import { initializeDuration, spans, traceLifecycle } from "../Observability.ts"
import type { Contributions } from "../Contributions.ts"
import type { Plugin } from "../Plugin.ts"
import * as LifecycleContext from "../PluginLifecycleContext.ts"
import * as Checkpoint from "./Checkpoint.ts"
import * as CleanupScope from "./CleanupScope.ts"
import { CityConfig } from "./CityConfig.ts"
import { CityState } from "./CityState.ts"
import { PluginInstance } from "./ExecutionView.ts"
import { type Incarnation, make as makeIncarnation } from "./Incarnation.ts"

/**
 * How a started instance's lifecycle context answers `requestReload`.
 * @since 0.1.0
 * @category models
 */
export interface StartOptions {
  readonly requestReload?: LifecycleContext.PluginLifecycleContextShape["requestReload"] | undefined
  readonly config?: LifecycleContext.PluginConfig | undefined
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
  const state = yield* CityState
  /** Initializations in flight, by fiber: their plugin's name. */
  const running = new Map<Fiber.RuntimeFiber<unknown, unknown>, string>()

  /** A settled initialize: the incarnation, or the failure (after releasing what it acquired). */
  const settle = (
    plugin: Plugin<unknown, unknown>,
    cleanup: CleanupScope.CleanupScope,
    checkpoint: Runtime.Runtime<never>,
    exit: Exit.Exit<Contributions, unknown>,
    reason?: PluginInitializeFailed["reason"]
  ): Effect.Effect<Either.Either<Incarnation, PluginInitializeFailed>> => {
    const name = plugin.name
    if (Exit.isSuccess(exit)) {
      const instance = new PluginInstance(name, plugin.version, exit.value, {})
      return Effect.succeed(Either.right(makeIncarnation({ name, instance, cleanup, checkpoint, disposeTimeout: config.disposeTimeout })))
    }
    const cause = exit.cause
    return Effect.map(cleanup.close(exit), (release) =>
      Either.left(
        new PluginInitializeFailed({ name, reason: reason ?? reasonOf(cause), cause, ...(release === undefined ? {} : { release }) })
      ))
  }

  /** An initialize still running: awaited with its timeout, cut short when close begins. */
  const awaitRunning = (
    plugin: Plugin<unknown, unknown>,
    cleanup: CleanupScope.CleanupScope,
    checkpoint: Runtime.Runtime<never>,
    fiber: Fiber.RuntimeFiber<Contributions, unknown>,
    restore: <A, E2, R2>(effect: Effect.Effect<A, E2, R2>) => Effect.Effect<A, E2, R2>
  ) => {
    const name = plugin.name
    running.set(fiber, name)
    fiber.addObserver(() => running.delete(fiber))
    const awaited = restore(
      Checkpoint.awaitBounded(fiber, config.initializeTimeout, () => state.cancelled(`initialize of ${name}`))
    )
    return Effect.flatMap(Effect.exit(awaited), (awaited) => {
      if (Exit.isSuccess(awaited)) return settle(plugin, cleanup, checkpoint, awaited.value)
      fiber.unsafeInterruptAsFork(FiberId.none)
      const failure = Option.getOrUndefined(Cause.failureOption(awaited.cause))
      return failure?._tag === "TimeoutException"
        ? settle(plugin, cleanup, checkpoint, Exit.fail(timedOut(`initialize of ${name}`, config.initializeTimeout)), "timed-out")
        : settle(plugin, cleanup, checkpoint, Exit.failCause(awaited.cause), "interrupted")
    })
  }

  const start: PluginInstancesShape["start"] = <E, R>(
    plugin: Plugin<E, R>,
    options: StartOptions | undefined,
    restore: <A, E2, R2>(effect: Effect.Effect<A, E2, R2>) => Effect.Effect<A, E2, R2>
  ) =>
    traceLifecycle(
      Effect.flatMap(Effect.runtime<R>(), (runtime) => {
        const name = plugin.name
        const cleanup = CleanupScope.make()
        const lifecycle = LifecycleContext.make({
          name,
          version: plugin.version,
          storage: new LazyStorage(path.join(config.root, "data", name)),
          scope: cleanup.scope,
          requestReload: options?.requestReload,
          config: options?.config
        })
        // Its own fiber, not a child of the caller's: a stuck initialize must not hold the caller.
        // Its context is the caller's plus the plugin's own Scope and lifecycle context.
        const checkpoint = Checkpoint.runtimeFor(
          name,
          runtime,
          Context.add(Context.add(runtime.context, Scope.Scope, cleanup.scope), LifecycleContext.PluginLifecycleContext, lifecycle)
        )
        const fiber: Fiber.RuntimeFiber<Contributions, unknown> = Checkpoint.start(
          checkpoint,
          Effect.interruptible(Effect.suspend(() => plugin.initialize)),
          initializeDuration
        )
        const done = fiber.unsafePoll()
        return done === null
          ? awaitRunning(plugin, cleanup, checkpoint, fiber, restore)
          : settle(plugin, cleanup, checkpoint, done)
      }),
      spans.initialize,
      { plugin: plugin.name, version: plugin.version }
    )

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
