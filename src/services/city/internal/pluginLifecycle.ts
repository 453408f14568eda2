/**
 * The two lifecycle checkpoints of a plugin instance (docs/city-plugin-lifecycle.md, "Two lifecycle
 * checkpoints": "initialize(context) runs once when the Plugin enters City", "dispose(context) runs
 * once when the Plugin is removed or City closes"), and what the registry keeps of the instances
 * that started.
 *
 * - `PluginLifecycle.start` runs initialize as the acquire, into a fresh Effect `Scope`, bounded by
 *   `initializeTimeout`. What it returns is a {@link Started} instance, whose dispose closes that
 *   Scope; a failed initialize is a `PluginInitializeFailed` and nothing else ("The failed instance
 *   never enters the execution Registry").
 * - {@link ExecutionRegistry}: one registry's started instances (ready or disposing), the ready ones
 *   as the persistent map every execution view is published from.
 * - {@link PluginLost}: how a ready plugin tells the City that it can no longer serve.
 *
 * Initialize, decisions:
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
 *
 * Dispose, decisions:
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
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as FiberMap from "effect/FiberMap"
import * as FiberRef from "effect/FiberRef"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as Scope from "effect/Scope"
import * as SortedMap from "effect/SortedMap"
import { type CityClosed, describeCause, type InitializeOutcome, RegistryError } from "../../../schema/Errors.ts"
import type { Skill } from "../../../schema/PluginChange.ts"
import { spans } from "../../Observability.ts"
import { traceLifecycle } from "../../internal/tracing.ts"
import { unsafeLifecycleDuration } from "../../internal/counters.ts"
import type { Contributions } from "../../Contributions.ts"
import type { Plugin } from "../../Plugin.ts"
import * as LifecycleContext from "../../PluginLifecycleContext.ts"
import { SiblingViews, type SiblingViewsShape } from "../../Siblings.ts"
import { CityConfig } from "../CityConfig.ts"
import * as CityRoot from "../../root/CityRoot.ts"
import { StateRoot } from "../../root/StateRoot.ts"
import { emptyPlugins, PluginInstance, type Plugins, providerIn, without, withInstance } from "../ExecutionView.ts"
import { LeaseTable, type LeaseTableShape } from "./leaseTable.ts"
import { PluginStorage } from "./pluginStorage.ts"

/**
 * How a ready plugin tells the City that it can no longer serve (docs/plugin-loader.md,
 * "Isolation": a worker that ended on its own). The registry gives each plugin's initialize one,
 * bound to its name, as it gives SiblingViews: `lost(reason)` takes the plugin out of the next
 * view, disposes it after the last lease on it, and leaves an `error` snapshot with the reason, so
 * a later add is a retry (PluginRegistry's `crashed`). Calling it before the plugin is ready, or
 * while the City closes, does nothing.
 *
 * A plugin reads it with `Effect.serviceOption`, so one run outside a registry (a test harness)
 * still initializes. Not for plugin authors: a plugin's own failure is its action's error.
 * @since 0.1.0
 * @category tags
 */
export class PluginLost extends Context.Tag("effect-city/PluginLost")<PluginLost, {
  /**
   * Takes the plugin out of the City with a snapshot saying `reason`: `unresponsive` when it was
   * ended for not answering, else `error`; the registry then starts it again with backoff.
   */
  readonly lost: (reason: string, status?: "error" | "unresponsive") => Effect.Effect<void>
}>() {}

// --- Dispose: a started instance ----------------------------------------------------------------

/**
 * A started plugin instance: what the registry publishes, and how it ends (its dispose checkpoint).
 * @since 0.1.0
 * @category models
 */
export interface Started {
  /** The instance views show; a skills reload replaces it by one of the same start. */
  instance: PluginInstance
  /**
   * Starts the disposal (closing its Scope) the first time, as a fiber of `runtime` (the caller's:
   * its logger, its tracer); the fiber that runs it. Synchronous, so that close starts a thousand
   * with one runtime.
   */
  readonly beginIn: (runtime: Runtime.Runtime<never>) => Fiber.RuntimeFiber<void, RegistryError>
  /** Disposes the instance the first time; later calls share that result. Bounded by disposeTimeout. */
  readonly dispose: Effect.Effect<void, RegistryError>
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
  new RegistryError({ reason: "PluginDisposeFailed",
    plugin: name,
    outcome: "timed-out",
    cause: Cause.fail(new Cause.TimeoutException(`dispose of ${name} did not complete${timeout === undefined ? " in time" : ` within ${Duration.format(timeout)}`}`))
  })

/** Closes a plugin's Scope: a finalizer that fails or dies makes the dispose fail with every Cause. */
const closeScope = (name: string, scope: Scope.CloseableScope, exit: Exit.Exit<unknown, unknown>) =>
  Effect.flatMap(Effect.exit(Scope.close(scope, exit)), (closed) =>
    Exit.isSuccess(closed) ? Effect.void : Effect.fail(new RegistryError({ reason: "PluginDisposeFailed", plugin: name, outcome: "failed", cause: closed.cause })))

/** The started instance of an initialize that succeeded, over the Scope it acquired into. */
const started = (options: {
  readonly name: string
  readonly instance: PluginInstance
  readonly scope: Scope.CloseableScope
  readonly disposeTimeout: Duration.Duration
  /** The Clock the dispose's duration is read from (the registry's). */
  readonly clock: Clock.Clock
}): Started => {
  const { clock, disposeTimeout, name } = options
  let fiber: Fiber.RuntimeFiber<void, RegistryError> | undefined
  let begunAt: bigint | undefined
  let endedAt: bigint | undefined
  // unsafe: `started` is synchronous (the registry publishes an instance in the step its initialize ends).
  const ended = Deferred.unsafeMake<void>(FiberId.none)
  const run = Effect.suspend(() => {
    // unsafe: read in this step, as the registry's Snapshots read their clock (a close's cost).
    const begun = clock.unsafeCurrentTimeNanos()
    begunAt = begun
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
  const dispose = Effect.flatMap(begin, (running) =>
    Effect.flatMap(Fiber.poll(running), (done) =>
      Option.isSome(done)
        ? done.value
        : Effect.interruptible(Fiber.await(running)).pipe(
          Effect.timeout(disposeTimeout),
          Effect.catchTag("TimeoutException", () => Effect.fail(disposeTimedOut(name, disposeTimeout))),
          Effect.flatten
        )))
  const disposed = Deferred.await(ended)
  const elapsed = () => {
    if (begunAt === undefined) return Duration.zero
    if (endedAt !== undefined) return Duration.nanos(endedAt - begunAt)
    // unsafe: a synchronous read for close's report, of a disposal still running.
    return Duration.nanos(clock.unsafeCurrentTimeNanos() - begunAt)
  }
  return { instance: options.instance, beginIn, dispose, disposed, elapsed }
}

// --- The execution registry: the started instances of one registry ------------------------------

/**
 * The started instances of one registry (ready or disposing), and the ready ones as the persistent
 * map every execution view is published from. Entering, leaving the view and replacing an instance
 * publish the next view (O(log P)); leaving the table is separate, since a removed plugin stays
 * (disposing) until its disposal has run.
 * @since 0.1.0
 * @category models
 */
export interface ExecutionRegistry {
  readonly get: (name: string) => Started | undefined
  /** Whether `name` is ready: in the next view. */
  readonly isReady: (name: string) => boolean
  /** Every started instance, by name. */
  readonly all: ReadonlyMap<string, Started>
  /** A started instance enters the registry, ready: in the next view. */
  readonly enter: (name: string, started: Started) => void
  /** Out of the next view (it stays in the table until it `leave`s). */
  readonly hide: (name: string) => void
  /** Out of the table, if `started` is still the instance of `name`. */
  readonly leave: (name: string, started: Started) => boolean
  /** The next view carries `skills` as the plugin's skill set. */
  readonly replaceSkills: (started: Started, skills: ReadonlyArray<Skill>) => void
  /** Publishes an empty view (close). */
  readonly hideAll: () => void
}

/**
 * Makes an empty execution registry that publishes to `views`.
 * @since 0.1.0
 * @category constructors
 */
export const makeExecutionRegistry = (views: LeaseTableShape): ExecutionRegistry => {
  const instances = new Map<string, Started>()
  let ready: Plugins = emptyPlugins
  const publish = (next: Plugins) => {
    ready = next
    views.publish(ready)
  }
  return {
    get: (name) => instances.get(name),
    isReady: (name) => SortedMap.has(ready, name),
    all: instances,
    enter: (name, started) => {
      instances.set(name, started)
      publish(withInstance(ready, started.instance))
    },
    hide: (name) => publish(without(ready, name)),
    leave: (name, started) => instances.get(name) === started && instances.delete(name),
    replaceSkills: (started, skills) => {
      const previous = started.instance
      const instance = new PluginInstance(
        previous.name,
        previous.version,
        { ...previous.contributions, skills },
        previous.life
      )
      started.instance = instance
      publish(withInstance(ready, instance))
    },
    hideAll: () => publish(emptyPlugins)
  }
}

// --- Initialize: starting instances -------------------------------------------------------------

/**
 * What a start needs besides the plugin: how its lifecycle context answers `requestReload`, its
 * settings, what its PluginLost does, and the City's close beginning, which cancels the wait.
 * @since 0.1.0
 * @category models
 */
export interface StartOptions {
  readonly requestReload?: LifecycleContext.PluginLifecycleContextShape["requestReload"] | undefined
  readonly config?: LifecycleContext.PluginConfig | undefined
  /** What the plugin's PluginLost does when it is lost (the registry's `crashed`). */
  readonly lost?: PluginLost["Type"]["lost"] | undefined
  /** Fails with CityClosed when close begins: the wait for initialize ends then. */
  readonly cancelled: Effect.Effect<never, CityClosed>
}

/**
 * Starts plugin instances (bounded initialize), and abandons those in flight at close.
 * @since 0.1.0
 * @category models
 */
export interface PluginLifecycleShape {
  /**
   * Must run uninterruptibly (the caller's bookkeeping follows it); `restore` makes the wait for
   * initialize interruptible again, so that interrupting the caller fails it with `interrupted`.
   */
  readonly start: <E, R>(
    plugin: Plugin<E, R>,
    options: StartOptions,
    restore: <A, E2, R2>(effect: Effect.Effect<A, E2, R2>) => Effect.Effect<A, E2, R2>
  ) => Effect.Effect<Either.Either<Started, RegistryError>, never, R>
  /**
   * Close's part: interrupts every initialize in flight, waits for them up to `disposeTimeout`,
   * and returns the names of those still running (abandoned in the background).
   */
  readonly abandon: Effect.Effect<ReadonlyArray<string>>
}

/**
 * The plugin lifecycle as a service.
 * @since 0.1.0
 * @category tags
 */
export class PluginLifecycle extends Context.Tag("effect-city/PluginLifecycle")<PluginLifecycle, PluginLifecycleShape>() {}

const timedOut = (what: string, duration: Duration.Duration) =>
  new Cause.TimeoutException(`${what} did not complete within ${Duration.format(duration)}`)

const reasonOf = (cause: Cause.Cause<unknown>): InitializeOutcome =>
  Option.match(Cause.failureOption(cause), {
    onNone: () => (Cause.isInterruptedOnly(cause) ? "interrupted" : "died"),
    onSome: () => "failed"
  })

/**
 * Makes the plugin lifecycle on the City's configuration and execution views.
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const config = yield* CityConfig
  const { root } = yield* StateRoot
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

  const failed = (name: string, cause: Cause.Cause<unknown>, reason: InitializeOutcome, release?: Cause.Cause<unknown>) =>
    Either.left(new RegistryError({ reason: "PluginInitializeFailed", plugin: name, outcome: reason, cause, ...(release === undefined ? {} : { release }) }))

  /** A settled initialize: the started instance, or the failure (after releasing what it acquired). */
  const settle = (
    plugin: Plugin<unknown, unknown>,
    scope: Scope.CloseableScope,
    exit: Exit.Exit<Contributions, unknown>
  ): Effect.Effect<Either.Either<Started, RegistryError>> => {
    const name = plugin.name
    if (Exit.isSuccess(exit)) {
      const instance = new PluginInstance(name, plugin.version, exit.value, {})
      return Effect.succeed(Either.right(started({ name, instance, scope, disposeTimeout: config.disposeTimeout, clock })))
    }
    return Effect.map(Effect.either(closeScope(name, scope, exit)), (released) =>
      failed(name, exit.cause, reasonOf(exit.cause), released._tag === "Left" ? released.left.cause : undefined))
  }

  const start: PluginLifecycleShape["start"] = <E, R>(
    plugin: Plugin<E, R>,
    options: StartOptions,
    restore: <A, E2, R2>(effect: Effect.Effect<A, E2, R2>) => Effect.Effect<A, E2, R2>
  ) =>
    traceLifecycle(
      Effect.gen(function*() {
        const name = plugin.name
        const scope = yield* Scope.make()
        const lifecycle = LifecycleContext.make({
          name,
          version: plugin.version,
          storage: new PluginStorage(CityRoot.dataFolder(root, name)),
          scope,
          requestReload: options.requestReload,
          config: options.config
        })
        const initialize = Effect.suspend(() => plugin.initialize).pipe(
          Effect.interruptible,
          Effect.provideService(Scope.Scope, scope),
          Effect.provideService(LifecycleContext.PluginLifecycleContext, lifecycle),
          Effect.provideService(SiblingViews, siblingViews),
          Effect.provideService(PluginLost, { lost: options.lost ?? (() => Effect.void) }),
          // Its logs carry the plugin's name. This is the first step of the fiber `FiberMap.run`
          // gives it, whose refs no one inherits: set, with nothing to restore.
          (initialize) =>
            Effect.zipRight(FiberRef.update(FiberRef.currentLogAnnotations, (annotations) => HashMap.set(annotations, "plugin", name)), initialize)
        )
        // How long it took, successful or not, until the wait for it ended.
        // unsafe: read in this step, as the registry's Snapshots read their clock (an add's cost).
        const startedAt = clock.unsafeCurrentTimeNanos()
        // unsafe: recorded where the wait ends, in no Effect step of its own (internal/counters.ts).
        const took = () => unsafeLifecycleDuration("initialize", clock.unsafeCurrentTimeNanos() - startedAt)
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
            (bounded) => Effect.raceFirst(bounded, options.cancelled)
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

  const abandon: PluginLifecycleShape["abandon"] = Effect.gen(function*() {
    const fibers = Array.from(running, ([, fiber]) => fiber)
    yield* Effect.forEach(fibers, (fiber) => Fiber.interruptFork(fiber), { discard: true })
    yield* Effect.forEach(fibers, (fiber) => Fiber.await(fiber), { concurrency: "unbounded", discard: true }).pipe(
      Effect.interruptible,
      Effect.timeout(config.disposeTimeout),
      Effect.ignore
    )
    return Array.from(running, ([key]) => key.slice(0, key.lastIndexOf("#"))).sort()
  })

  return { start, abandon } satisfies PluginLifecycleShape
})

/**
 * The plugin lifecycle as a Layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(PluginLifecycle, make)

/**
 * The first line of a failed initialize's causes, for its error snapshot.
 * @since 0.1.0
 * @category utils
 */
export const lastError = (error: RegistryError): string =>
  error.cause === undefined
    ? error.message
    : error.release === undefined
    ? describeCause(error.cause)
    : `${describeCause(error.cause)}; releasing what it acquired failed too: ${describeCause(error.release)}`
