/**
 * `city.close` (docs/city-plugin-lifecycle.md: "city.close() stops Sessions before releasing
 * Plugins and Workspaces, and aggregates cleanup errors. A single Plugin dispose failure does not
 * prevent other Plugins from cleaning up").
 *
 * - **One closing state, one record.** Every service of the City asks {@link Closing} before
 *   admitting work, and waits on it where a wait must end when close begins (a queued add, a
 *   removal waiting for a lease): one phase, `Open` then `Closing`, instead of a flag per service.
 *   Each closing service records there what it closed (the Sessions it stopped, the drain, each
 *   plugin it disposed, each Workspace it released) and reports its failures instead of failing its
 *   finalizer, so one failure never stops the others.
 * - **The close itself** ({@link closeOnce}) closes the Scope the City's core was built in (its
 *   layers release in reverse: Sessions, plugins, Workspaces), then takes what was recorded as one
 *   `CloseReport`: the value close succeeds with, or the report `CityCloseError` carries when
 *   cleanups failed. It runs once (`Effect.cached`): concurrent calls share the one run, and a later
 *   call returns its result again, a failure too, without running any cleanup twice. A release that
 *   may fail transiently retries inside itself (docs/library.md). The City layer's Scope runs
 *   `teardown`: the same close, whose failure it logs only when no caller of `city.close` received
 *   it (a host that handled the failure does not see it logged again; a close that only the layer
 *   ran is logged), with the report's one-line form (`city closed: 3 plugins disposed, 0 cleanup
 *   failures, in 12 ms`); a close without failures logs that line at debug level.
 * - **The plugins' part** ({@link closePlugins}, the registry's finalizer). Plugins are disposed in
 *   dependency order (docs/library.md, "Plugin dependencies"): in waves, a plugin after every
 *   plugin that requires it (dependencies.ts); within a wave (all of them, when none requires
 *   another) in reverse name order, `disposeConcurrency` at a time. Each waits first for the last
 *   lease on a view that contains it, at most `disposeTimeout` (then it is reported `still-leased`
 *   and disposed anyway); each dispose is bounded by `disposeTimeout` (then reported `timed-out` and
 *   left to finish in the background). Every failure is reported, none skips another; a dispose
 *   that failed can be retried by a later close. A dispose still running after a second is said in
 *   the log as it goes (`closing: still disposing plugin <name> after 1s`, `code=city.dispose_slow`),
 *   so a stop that waits says on what. With unbounded concurrency every disposal starts at once and
 *   one deadline bounds them all: no timer and no waiting fiber per plugin, so closing N plugins
 *   costs about what closing N bare Scopes concurrently costs.
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Pretty from "effect/Pretty"
import * as Scope from "effect/Scope"
import { type ClosedPlugin, type CloseFailure, CloseReport } from "../../../schema/CloseReport.ts"
import { CityClosed, CityCloseError, RegistryError } from "../../../schema/Errors.ts"
import type { Requirement } from "../../Plugin.ts"
import type { CityConfigShape } from "../CityConfig.ts"
import { disposeWaves } from "./dependencies.ts"
import type { LeaseTableShape } from "./leaseTable.ts"
import type { Snapshots } from "./snapshots.ts"
import { disposeTimedOut, type PluginLifecycleShape, type Started } from "./pluginLifecycle.ts"

// --- The closing state and its record -----------------------------------------------------------

/**
 * The City's phase: `Open`, then `Closing` once close has begun (never back).
 * @since 0.1.0
 * @category models
 */
export type Phase = { readonly _tag: "Open" } | { readonly _tag: "Closing" }

/**
 * What the City's services share of its close: the phase they consult before admitting work, and
 * the record of what they closed, which close takes as its report.
 * @since 0.1.0
 * @category models
 */
export interface ClosingShape {
  /** The current phase; a synchronous read for the hot paths. */
  readonly phase: () => Phase
  /** `CityClosed` naming the operation once close has begun, else undefined. */
  readonly refuse: (operation: string) => CityClosed | undefined
  /** Fails with CityClosed naming the operation once close has begun. */
  readonly check: (operation: string) => Effect.Effect<void, CityClosed>
  /** Completes when close begins (at once if it has). */
  readonly begun: Effect.Effect<void>
  /** Fails with CityClosed when close begins: race a wait against it to cancel the wait. */
  readonly cancelled: (operation: string) => Effect.Effect<never, CityClosed>
  /** Begins closing; `true` for the call that did it. */
  readonly begin: () => boolean
  /** A cleanup failure: what failed (`plugin <name>`, `workspace <id>`, ...) and its Cause. */
  readonly report: (subject: string, cause: Cause.Cause<unknown>) => void
  /** A Session that close stopped. */
  readonly stopped: (session: string) => void
  /** The drain of running Steps and calls: how long it waited and how many it interrupted. */
  readonly drained: (waited: Duration.Duration, interrupted: number) => void
  /** A plugin that close disposed. */
  readonly disposed: (plugin: ClosedPlugin) => void
  /** A Workspace that close released. */
  readonly released: (workspace: string) => void
  /** The report of what was recorded since the last call, given the whole close's duration. */
  readonly take: (duration: Duration.Duration) => CloseReport
}

/**
 * The City's closing state and record as a service.
 * @since 0.1.0
 * @category tags
 */
export class Closing extends Context.Tag("effect-city/Closing")<Closing, ClosingShape>() {}

const open: Phase = { _tag: "Open" }
const closingPhase: Phase = { _tag: "Closing" }

/**
 * Makes an `Open` closing state with an empty record.
 * @since 0.1.0
 * @category constructors
 */
export const make = (): ClosingShape => {
  let phase: Phase = open
  // unsafe: `begin()` below is a plain function, called from synchronous close bookkeeping.
  const signal = Deferred.unsafeMake<void>(FiberId.none)
  const refuse = (operation: string) => (phase === open ? undefined : new CityClosed({ operation }))
  let sessions: Array<string> = []
  let drain = Duration.zero
  let interrupted = 0
  let plugins: Array<ClosedPlugin> = []
  let workspaces: Array<string> = []
  let failures: Array<CloseFailure> = []
  return {
    phase: () => phase,
    refuse,
    check: (operation) =>
      Effect.suspend(() => {
        const refused = refuse(operation)
        return refused === undefined ? Effect.void : Effect.fail(refused)
      }),
    begun: Deferred.await(signal),
    cancelled: (operation) => Effect.zipRight(Deferred.await(signal), Effect.failSync(() => new CityClosed({ operation }))),
    begin: () => {
      if (phase !== open) return false
      phase = closingPhase
      // unsafe: see where the signal is made.
      Deferred.unsafeDone(signal, Exit.void)
      return true
    },
    report: (subject, cause) => {
      failures.push({ subject, cause })
    },
    stopped: (session) => {
      sessions.push(session)
    },
    drained: (waited, count) => {
      drain = waited
      interrupted = count
    },
    disposed: (plugin) => {
      plugins.push(plugin)
    },
    released: (workspace) => {
      workspaces.push(workspace)
    },
    take: (duration) => {
      const report: CloseReport = { sessions, interrupted, drain, plugins, workspaces, failures, duration }
      sessions = []
      drain = Duration.zero
      interrupted = 0
      plugins = []
      workspaces = []
      failures = []
      return report
    }
  }
}

/**
 * A fresh closing state as a Layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.sync(Closing, make)

// --- The close, once ------------------------------------------------------------------------------

/** A report's one-line text form (its Schema's `pretty` annotation). */
const summary = Pretty.make(CloseReport)

/**
 * A City's close: `close` for its callers, `teardown` for the Scope that owns the City.
 * @since 0.1.0
 * @category models
 */
export interface CityClose {
  /** `city.close`: runs the close once and returns its report (or fails with it). */
  readonly close: Effect.Effect<CloseReport, CityCloseError>
  /** The owning Scope's finalizer: the same close, its failure logged unless a caller of `close` received it. */
  readonly teardown: Effect.Effect<void>
}

/**
 * The close of a City whose core lives in `scope`: run once, its result shared.
 * @since 0.1.0
 * @category constructors
 */
export const closeOnce = (scope: Scope.CloseableScope, closing: ClosingShape): Effect.Effect<CityClose> =>
  Effect.map(
    Effect.cached(
      Effect.uninterruptible(
        Effect.flatMap(Effect.timed(Scope.close(scope, Exit.void)), ([duration]) => {
          const report = closing.take(duration)
          return report.failures.length === 0 ? Effect.succeed(report) : Effect.fail(new CityCloseError({ report }))
        })
      )
    ),
    (run) => {
      // Whether a caller of `close` has received its result (an interrupted caller has not).
      let received = false
      return {
        close: Effect.onExit(run, (exit) =>
          Exit.isInterrupted(exit) ? Effect.void : Effect.sync(() => {
            received = true
          })),
        teardown: Effect.matchEffect(run, {
          onSuccess: (report) => Effect.logDebug(`city closed: ${summary(report)}`),
          onFailure: (error) => received ? Effect.void : Effect.logError(`${error.message}\ncity closed: ${summary(error.report)}`)
        })
      }
    }
  )

// --- The plugins' part ----------------------------------------------------------------------------

/** How long a plugin's dispose runs before close says, in the log, that it is still waiting for it. */
const slowNotice = Duration.seconds(1)

/**
 * A plugin to dispose in close: its name and its started instance.
 * @since 0.1.0
 * @category models
 */
export interface ClosingPlugin {
  readonly name: string
  readonly started: Started
}

/**
 * The registry's finalizer: close begins, initializations in flight are interrupted (those still
 * running after `disposeTimeout` are reported abandoned), every started plugin leaves the view and
 * is disposed (`disposeAll`), and the snapshots are cleared.
 * @since 0.1.0
 * @category constructors
 */
export const closePlugins = (options: {
  readonly lifecycle: PluginLifecycleShape
  readonly snapshots: Snapshots
  readonly instances: ReadonlyMap<string, Started>
  /** What each started plugin with requirements requires. */
  readonly requiresOf: ReadonlyMap<string, ReadonlyArray<Requirement>>
  readonly unpublish: () => void
  readonly dispose: Omit<Parameters<typeof disposeAll>[0], "plugins">
}): Effect.Effect<void> =>
  Effect.gen(function*() {
    const { lifecycle, snapshots } = options
    const { closing } = options.dispose
    closing.begin()
    for (const name of yield* lifecycle.abandon) {
      closing.report(
        `initialize of ${name}`,
        Cause.fail(new Cause.TimeoutException(`initialize of ${name} abandoned: still running after close`))
      )
    }
    const reverseByName = (a: ClosingPlugin, b: ClosingPlugin) => (a.name < b.name ? 1 : a.name > b.name ? -1 : 0)
    const plugins = Array.from(options.instances, ([name, started]) => ({ name, started })).sort(reverseByName)
    yield* snapshots.disposingAll(plugins.map((item) => item.name))
    options.unpublish()
    if (options.requiresOf.size === 0) {
      yield* disposeAll({ ...options.dispose, plugins })
    } else {
      const graph = new Map(plugins.map((item) => [item.name, options.requiresOf.get(item.name) ?? []] as const))
      for (const wave of disposeWaves(graph)) {
        const names = new Set(wave)
        yield* disposeAll({ ...options.dispose, plugins: plugins.filter((item) => names.has(item.name)) })
      }
    }
    yield* snapshots.clear
  })

/**
 * Disposes every plugin of `plugins` (already in reverse name order); `left(plugin)` runs once each
 * has been handled.
 * @since 0.1.0
 * @category constructors
 */
export const disposeAll = (options: {
  readonly plugins: ReadonlyArray<ClosingPlugin>
  readonly config: CityConfigShape
  readonly views: LeaseTableShape
  readonly closing: ClosingShape
  readonly left: (plugin: ClosingPlugin) => Effect.Effect<void>
}): Effect.Effect<void> => {
  const { closing, config, views } = options

  const reportExit = (item: ClosingPlugin, exit: Exit.Exit<void, RegistryError>) => {
    const duration = item.started.elapsed()
    if (Exit.isSuccess(exit)) return closing.disposed({ plugin: item.name, outcome: "disposed", duration })
    const timedOut = Option.exists(Cause.failureOption(exit.cause), (failure) => failure.outcome === "timed-out")
    closing.disposed({ plugin: item.name, outcome: timedOut ? "timed-out" : "failed", duration })
    closing.report(`plugin ${item.name}`, exit.cause)
  }

  const waitForLeases = (item: ClosingPlugin) =>
    Effect.suspend(() => {
      const instance = item.started.instance
      if (!views.isLeased(instance)) return Effect.void
      return Effect.interruptible(views.unleased(instance)).pipe(
        Effect.timeout(config.disposeTimeout),
        Effect.catchTag("TimeoutException", () =>
          Effect.sync(() =>
            closing.report(
              `plugin ${item.name}`,
              Cause.fail(
                new RegistryError({ reason: "PluginDisposeFailed",
                  plugin: item.name,
                  outcome: "still-leased",
                  cause: Cause.fail(new Cause.TimeoutException(`the last lease on ${item.name} was not released in time`))
                })
              )
            )
          ))
      )
    })

  /** A dispose still running after {@link slowNotice} is said as it goes, once. */
  const said = (names: ReadonlyArray<string>) =>
    names.length === 0 ? Effect.void : Effect.logInfo(
      `closing: still disposing ${names.map((n) => `plugin ${n}`).join(", ")} after ${Duration.format(slowNotice)} ` +
        `(each at most ${Duration.format(config.disposeTimeout)})`
    ).pipe(Effect.annotateLogs({ code: "city.dispose_slow" }))

  /** Whether a dispose can still be running after the notice (its deadline is later). */
  const noticeFirst = Duration.lessThan(slowNotice, config.disposeTimeout)

  /**
   * The dispose, said when it is slow: it runs in a fiber of its own, awaited twice (the wait is
   * interruptible for its timeout: close runs uninterruptibly).
   */
  const disposeSaid = (item: ClosingPlugin) =>
    !noticeFirst ? item.started.dispose : Effect.flatMap(Effect.fork(item.started.dispose), (fiber) =>
      Effect.flatMap(Effect.timeout(Effect.interruptible(Fiber.await(fiber)), slowNotice).pipe(Effect.option), (done) =>
        Option.match(done, {
          onSome: (exit) => exit,
          onNone: () => Effect.zipRight(said([item.name]), Fiber.join(fiber))
        })))

  const one = (item: ClosingPlugin) =>
    Effect.zipRight(
      waitForLeases(item),
      Effect.flatMap(Effect.exit(disposeSaid(item)), (exit) => {
        reportExit(item, exit)
        return options.left(item)
      })
    )

  if (config.disposeConcurrency !== "unbounded") {
    return Effect.forEach(options.plugins, one, { concurrency: config.disposeConcurrency, discard: true })
  }

  return Effect.gen(function*() {
    const leased = options.plugins.filter((item) => views.isLeased(item.started.instance))
    if (leased.length > 0) yield* Effect.forEach(leased, waitForLeases, { concurrency: "unbounded", discard: true })
    const runtime = yield* Effect.runtime<never>()
    const fibers = options.plugins.map((item) => item.started.beginIn(runtime))
    // One timer for all: those still running after the notice are said, then all are awaited.
    const quick = yield* Fiber.awaitAll(fibers).pipe(
      Effect.interruptible,
      Effect.timeout(noticeFirst ? slowNotice : config.disposeTimeout),
      Effect.option
    )
    if (Option.isNone(quick) && noticeFirst) {
      const running: Array<string> = []
      for (let i = 0; i < fibers.length; i++) if (Option.isNone(yield* Fiber.poll(fibers[i]!))) running.push(options.plugins[i]!.name)
      yield* said(running)
      yield* Fiber.awaitAll(fibers).pipe(
        Effect.interruptible,
        Effect.timeout(Duration.subtract(config.disposeTimeout, slowNotice)),
        Effect.ignore
      )
    }
    for (let i = 0; i < fibers.length; i++) {
      const item = options.plugins[i]!
      const exit = yield* Fiber.poll(fibers[i]!)
      reportExit(item, Option.getOrElse(exit, () => Exit.fail(disposeTimedOut(item.name, config.disposeTimeout))))
      yield* options.left(item)
    }
  })
}
