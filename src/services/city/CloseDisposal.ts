/**
 * The plugin part of close (docs/city-plugin-lifecycle.md: "city.close() ... aggregates cleanup
 * errors. A single Plugin dispose failure does not prevent other Plugins from cleaning up").
 *
 * Plugins are disposed in dependency order (docs/library.md, "Plugin dependencies"): in waves, a
 * plugin after every plugin that requires it (Dependencies.ts); within a wave (all of them, when
 * none requires another) in reverse name order, `disposeConcurrency` at a time. Each waits first for
 * the last lease on a view that contains it, at most `disposeTimeout` (then it is reported
 * `still-leased` and disposed anyway); each dispose is bounded by `disposeTimeout` (then reported
 * `timed-out` and left to finish in the background). Every failure is reported, none skips another;
 * a dispose that failed can be retried by a later close. A dispose still running after a second is
 * said in the log as it goes (`closing: still disposing plugin <name> after 1s`,
 * `code=city.dispose_slow`), so a stop that waits says on what.
 *
 * With unbounded concurrency every disposal starts at once and one deadline bounds them all: no
 * timer and no waiting fiber per plugin, so closing N plugins costs about what closing N bare
 * Scopes concurrently costs.
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import { PluginDisposeFailed } from "../../schema/Errors.ts"
import type { Requirement } from "../Plugin.ts"
import type { CityConfigShape } from "./CityConfig.ts"
import { disposeWaves } from "./Dependencies.ts"
import type { ClosingPhaseShape } from "./ClosingPhase.ts"
import type { CloseRecorderShape } from "./CloseRecorder.ts"
import type { LeaseTableShape } from "./LeaseTable.ts"
import { disposeTimedOut, type PluginLifecycleShape, type Started } from "./internal/pluginLifecycle.ts"
import type { Snapshots } from "./Snapshots.ts"

/** How long a plugin's dispose runs before close says, in the log, that it is still waiting for it. */
const slowNotice = Duration.seconds(1)

/**
 * A plugin to dispose in close: its name and its started instance.
 * @since 0.1.0
 * @category models
 */
export interface Closing {
  readonly name: string
  readonly started: Started
}

/**
 * The registry's finalizer: close begins, initializations in flight are interrupted (those still
 * running after `disposeTimeout` are reported abandoned), every live plugin leaves the view and is
 * disposed (`disposeAll`), and the snapshots are cleared.
 * @since 0.1.0
 * @category constructors
 */
export const closePlugins = (options: {
  readonly state: ClosingPhaseShape
  readonly lifecycle: PluginLifecycleShape
  readonly snapshots: Snapshots
  readonly instances: ReadonlyMap<string, Started>
  /** What each live plugin with requirements requires. */
  readonly requiresOf: ReadonlyMap<string, ReadonlyArray<Requirement>>
  readonly unpublish: () => void
  readonly dispose: Omit<Parameters<typeof disposeAll>[0], "closing">
}): Effect.Effect<void> =>
  Effect.gen(function*() {
    const { lifecycle, snapshots } = options
    options.state.close()
    for (const name of yield* lifecycle.abandon) {
      options.dispose.report.report(
        `initialize of ${name}`,
        Cause.fail(new Cause.TimeoutException(`initialize of ${name} abandoned: still running after close`))
      )
    }
    const reverseByName = (a: Closing, b: Closing) => (a.name < b.name ? 1 : a.name > b.name ? -1 : 0)
    const closing = Array.from(options.instances, ([name, started]) => ({ name, started })).sort(reverseByName)
    yield* snapshots.disposingAll(closing.map((item) => item.name))
    options.unpublish()
    if (options.requiresOf.size === 0) {
      yield* disposeAll({ ...options.dispose, closing })
    } else {
      const graph = new Map(closing.map((item) => [item.name, options.requiresOf.get(item.name) ?? []] as const))
      for (const wave of disposeWaves(graph)) {
        const names = new Set(wave)
        yield* disposeAll({ ...options.dispose, closing: closing.filter((item) => names.has(item.name)) })
      }
    }
    yield* snapshots.clear
  })

/**
 * Disposes every plugin of `closing` (already in reverse name order); `left(name)` runs once each
 * has been handled.
 * @since 0.1.0
 * @category constructors
 */
export const disposeAll = (options: {
  readonly closing: ReadonlyArray<Closing>
  readonly config: CityConfigShape
  readonly views: LeaseTableShape
  readonly report: CloseRecorderShape
  readonly left: (closing: Closing) => Effect.Effect<void>
}): Effect.Effect<void> => {
  const { config, report, views } = options

  const reportExit = (item: Closing, exit: Exit.Exit<void, PluginDisposeFailed>) => {
    const duration = item.started.elapsed()
    if (Exit.isSuccess(exit)) return report.disposed({ plugin: item.name, outcome: "disposed", duration })
    const timedOut = Option.exists(Cause.failureOption(exit.cause), (failure) => failure.reason === "timed-out")
    report.disposed({ plugin: item.name, outcome: timedOut ? "timed-out" : "failed", duration })
    report.report(`plugin ${item.name}`, exit.cause)
  }

  const waitForLeases = (item: Closing) =>
    Effect.suspend(() => {
      const instance = item.started.instance
      if (!views.isLeased(instance)) return Effect.void
      return Effect.interruptible(views.unleased(instance)).pipe(
        Effect.timeout(config.disposeTimeout),
        Effect.catchTag("TimeoutException", () =>
          Effect.sync(() =>
            report.report(
              `plugin ${item.name}`,
              Cause.fail(
                new PluginDisposeFailed({
                  plugin: item.name,
                  reason: "still-leased",
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
  const disposeSaid = (item: Closing) =>
    !noticeFirst ? item.started.dispose : Effect.flatMap(Effect.fork(item.started.dispose), (fiber) =>
      Effect.flatMap(Effect.timeout(Effect.interruptible(Fiber.await(fiber)), slowNotice).pipe(Effect.option), (done) =>
        Option.match(done, {
          onSome: (exit) => exit,
          onNone: () => Effect.zipRight(said([item.name]), Fiber.join(fiber))
        })))

  const one = (item: Closing) =>
    Effect.zipRight(
      waitForLeases(item),
      Effect.flatMap(Effect.exit(disposeSaid(item)), (exit) => {
        reportExit(item, exit)
        return options.left(item)
      })
    )

  if (config.disposeConcurrency !== "unbounded") {
    return Effect.forEach(options.closing, one, { concurrency: config.disposeConcurrency, discard: true })
  }

  return Effect.gen(function*() {
    const leased = options.closing.filter((item) => views.isLeased(item.started.instance))
    if (leased.length > 0) yield* Effect.forEach(leased, waitForLeases, { concurrency: "unbounded", discard: true })
    const runtime = yield* Effect.runtime<never>()
    const fibers = options.closing.map((item) => item.started.beginIn(runtime))
    // One timer for all: those still running after the notice are said, then all are awaited.
    const quick = yield* Fiber.awaitAll(fibers).pipe(
      Effect.interruptible,
      Effect.timeout(noticeFirst ? slowNotice : config.disposeTimeout),
      Effect.option
    )
    if (Option.isNone(quick) && noticeFirst) {
      const running: Array<string> = []
      for (let i = 0; i < fibers.length; i++) if (Option.isNone(yield* Fiber.poll(fibers[i]!))) running.push(options.closing[i]!.name)
      yield* said(running)
      yield* Fiber.awaitAll(fibers).pipe(
        Effect.interruptible,
        Effect.timeout(Duration.subtract(config.disposeTimeout, slowNotice)),
        Effect.ignore
      )
    }
    for (let i = 0; i < fibers.length; i++) {
      const item = options.closing[i]!
      const exit = yield* Fiber.poll(fibers[i]!)
      reportExit(item, Option.getOrElse(exit, () => Exit.fail(disposeTimedOut(item.name, config.disposeTimeout))))
      yield* options.left(item)
    }
  })
}
