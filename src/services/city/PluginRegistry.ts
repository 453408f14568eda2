/**
 * The registry (spec/city-plugin-lifecycle.md, "Plugin Lifecycle": "city.plugins.add() registers
 * one unique instance. A Plugin ID cannot be registered twice in one City").
 *
 * - One instance per name; operations on one name are serialized by a per-name lock, different
 *   names proceed concurrently.
 * - `add` runs initialize in a fresh Scope, bounded by `initializeTimeout`. A failure, defect,
 *   timeout or interruption closes that Scope, publishes nothing, leaves an `error` snapshot with
 *   `last_error` and fails with PluginInitializeFailed. A later successful add replaces it.
 * - `remove` takes the plugin out of the next execution view at once, waits until no leased view
 *   contains it, then disposes it (closes its Scope), bounded by `disposeTimeout`. `remove`
 *   completes when dispose has run; if its caller is interrupted, the disposal still completes in
 *   the background. Dispose runs at most once per instance whatever races (remove vs close, double
 *   remove).
 * - The registry's finalizer is the plugin part of close: interrupt initializations in flight,
 *   then dispose every plugin in reverse name order (`disposeConcurrency` at once), each bounded
 *   by `disposeTimeout`, reporting every failure to the CloseReport and never skipping one.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as PubSub from "effect/PubSub"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as path from "node:path"
import {
  CityClosed,
  describeCause,
  InvalidPluginName,
  PluginAlreadyRegistered,
  PluginNotFound,
  PluginDisposeFailed,
  PluginInitializeFailed
} from "../../schema/Errors.ts"
import type { Plugin } from "../Plugin.ts"
import { PluginName } from "../../schema/PluginName.ts"
import type { PluginSnapshot, PluginStatus } from "../../schema/PluginSnapshot.ts"
import { Admission } from "./Admission.ts"
import { CityConfig } from "./CityConfig.ts"
import { CloseReport } from "./CloseReport.ts"
import { normalizeHooks, type PluginInstance } from "./ExecutionView.ts"
import * as LifecycleContext from "../PluginLifecycleContext.ts"
import type { PluginLifecycleContextShape } from "../PluginLifecycleContext.ts"
import type { Skill } from "../../schema/PluginChange.ts"
import { ViewTable } from "./ViewTable.ts"

export interface AddOptions {
  /** Where the plugin came from, shown in its snapshot. Default `code`. */
  readonly source?: string | undefined
  /** What the plugin's `ctx.requestReload` does (the loader passes its own); default: ReloadRejected. */
  readonly requestReload?: PluginLifecycleContextShape["requestReload"] | undefined
}

export interface PluginRegistryShape {
  readonly add: <E, R>(
    plugin: Plugin<E, R>,
    options?: AddOptions
  ) => Effect.Effect<
    PluginSnapshot,
    PluginAlreadyRegistered | PluginInitializeFailed | InvalidPluginName | CityClosed,
    R
  >
  /** `true` if it removed a live plugin or cleared an error snapshot, `false` for an unknown name. */
  readonly remove: (name: string) => Effect.Effect<boolean, PluginDisposeFailed | CityClosed>
  readonly get: (name: string) => Effect.Effect<Option.Option<PluginSnapshot>>
  /**
   * Replaces a ready plugin's skill set: the next view carries the new set (so the next Turn sees
   * it), views already leased keep theirs.
   */
  readonly replaceSkills: (name: string, skills: ReadonlyArray<Skill>) => Effect.Effect<void, PluginNotFound>
  /** Every live or failed plugin, sorted by name in code-unit order. */
  readonly snapshots: Effect.Effect<ReadonlyArray<PluginSnapshot>>
  /** The snapshot list, now and after every change. */
  readonly changes: Stream.Stream<ReadonlyArray<PluginSnapshot>>
  /** Synchronous snapshot lookup, for calls that need to explain a missing plugin. */
  readonly snapshotOf: (name: string) => Option.Option<PluginSnapshot>
  /** The execution views and their leases (see ExecutionLeases). */
  readonly views: ViewTable
}

export class PluginRegistry extends Context.Tag("effect-city/PluginRegistry")<PluginRegistry, PluginRegistryShape>() {}

interface Entry {
  readonly name: string
  status: PluginStatus
  live: Live | undefined
  version: string | undefined
  source: string
  attempts: number
  last_error: string | undefined
  updated_at: string
  snapshot: PluginSnapshot
}

/** An initialized instance and its one-shot disposal. */
interface Live {
  instance: PluginInstance
  /** Completed when its disposal begins (by remove or by close, whichever comes first). */
  readonly started: Deferred.Deferred<void>
  disposal: Deferred.Deferred<Exit.Exit<void, PluginDisposeFailed>> | undefined
}

const makeLive = (instance: PluginInstance): Live => ({
  instance,
  started: Deferred.unsafeMake<void>(FiberId.none),
  disposal: undefined
})

const compareNames = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** Index of `name` in a name-sorted array, or where it would be inserted. */
const searchSorted = <A>(items: ReadonlyArray<A>, name: string, nameOf: (a: A) => string) => {
  let lo = 0
  let hi = items.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (compareNames(nameOf(items[mid]!), name) < 0) lo = mid + 1
    else hi = mid
  }
  return lo
}

const instanceName = (p: PluginInstance) => p.name
const identity = (s: string) => s

const timedOut = (what: string, duration: Duration.Duration) =>
  new Cause.TimeoutException(`${what} did not complete within ${Duration.format(duration)}`)

export const make = Effect.gen(function*() {
  const admission = yield* Admission
  const report = yield* CloseReport
  const config = yield* CityConfig
  const fs = yield* FileSystem.FileSystem

  const entries = new Map<string, Entry>()
  /** Entry names, sorted (internal, mutated in place). */
  const names: Array<string> = []
  /** Ready instances, sorted by name: the next view's content (copied per change: views are immutable). */
  let ready: Array<PluginInstance> = []
  const views = new ViewTable()
  // Snapshot lists are built only for watchers of `changes` (and on demand for `snapshots`), so
  // a registry change costs O(1) here when nobody watches.
  const pubsub = yield* PubSub.unbounded<ReadonlyArray<PluginSnapshot>>()
  let watchers = 0
  const initializing = yield* FiberSet.make<unknown, unknown>()
  const background = yield* FiberSet.make<unknown, unknown>()
  /** Adds in flight (between their admission and their last state change). */
  const adding = new Set<string>()
  const addGate = yield* Effect.makeSemaphore(Number.MAX_SAFE_INTEGER)
  let closed = false

  // --- per-name serialization -------------------------------------------------------------------
  const locks = new Map<string, { readonly semaphore: Effect.Semaphore; users: number }>()
  const withLock = <A, E, R>(name: string, effect: Effect.Effect<A, E, R>) =>
    Effect.suspend(() => {
      let lock = locks.get(name)
      if (lock === undefined) {
        lock = { semaphore: Effect.unsafeMakeSemaphore(1), users: 0 }
        locks.set(name, lock)
      }
      const held = lock
      held.users++
      return Effect.ensuring(
        held.semaphore.withPermits(1)(effect),
        Effect.sync(() => {
          if (--held.users === 0) locks.delete(name)
        })
      )
    })

  // --- snapshots ---------------------------------------------------------------------------------
  const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

  const refresh = (entry: Entry) => {
    entry.snapshot = {
      name: entry.name,
      status: entry.status,
      ...(entry.last_error === undefined ? {} : { last_error: entry.last_error }),
      ...(entry.version === undefined ? {} : { version: entry.version }),
      source: entry.source,
      attempts: entry.attempts,
      updated_at: entry.updated_at
    }
  }

  const setEntry = (entry: Entry) => {
    if (!entries.has(entry.name)) {
      names.splice(searchSorted(names, entry.name, identity), 0, entry.name)
    }
    entries.set(entry.name, entry)
  }

  const deleteEntry = (entry: Entry) => {
    if (entries.get(entry.name) !== entry) return
    entries.delete(entry.name)
    names.splice(searchSorted(names, entry.name, identity), 1)
  }

  const list = (): ReadonlyArray<PluginSnapshot> => names.map((n) => entries.get(n)!.snapshot)

  const publishSnapshots = Effect.suspend(() => (watchers === 0 ? Effect.void : PubSub.publish(pubsub, list())))

  const changes: Stream.Stream<ReadonlyArray<PluginSnapshot>> = Stream.unwrapScoped(
    Effect.gen(function*() {
      const queue = yield* PubSub.subscribe(pubsub)
      watchers++
      yield* Effect.addFinalizer(() => Effect.sync(() => watchers--))
      return Stream.concat(Stream.succeed(list()), Stream.fromQueue(queue))
    })
  )

  const update = (entry: Entry, change: Partial<Pick<Entry, "status" | "live" | "last_error" | "attempts">>) =>
    Effect.map(now, (at) => {
      Object.assign(entry, change)
      entry.updated_at = at
      refresh(entry)
    })

  // --- views -------------------------------------------------------------------------------------
  const publishReady = (instance: PluginInstance) => {
    const at = searchSorted(ready, instance.name, instanceName)
    ready = [...ready.slice(0, at), instance, ...ready.slice(at)]
    views.publish(ready)
  }

  const unpublish = (instance: PluginInstance) => {
    const at = searchSorted(ready, instance.name, instanceName)
    if (ready[at] !== instance) return
    ready = [...ready.slice(0, at), ...ready.slice(at + 1)]
    views.publish(ready)
  }

  // --- dispose (once per instance) ----------------------------------------------------------------
  const runDispose = (instance: PluginInstance): Effect.Effect<void, PluginDisposeFailed> =>
    Scope.close(instance.scope, Exit.void).pipe(
      Effect.exit,
      // A dispose that outlives its timeout goes on in the background; it is reported, not awaited.
      Effect.disconnect,
      Effect.interruptible,
      Effect.timeoutFail({
        duration: config.disposeTimeout,
        onTimeout: () =>
          new PluginDisposeFailed({
            name: instance.name,
            reason: "timed-out",
            cause: Cause.fail(timedOut(`dispose of ${instance.name}`, config.disposeTimeout))
          })
      }),
      Effect.flatMap((exit) =>
        Exit.isSuccess(exit)
          ? Effect.void
          : Effect.fail(new PluginDisposeFailed({ name: instance.name, reason: "failed", cause: exit.cause }))
      ),
      Effect.annotateLogs("plugin", instance.name)
    )

  const disposeOnce = (live: Live): Effect.Effect<void, PluginDisposeFailed> =>
    Effect.uninterruptible(Effect.suspend(() => {
      if (live.disposal !== undefined) return Effect.flatten(Deferred.await(live.disposal))
      const disposal = Deferred.unsafeMake<Exit.Exit<void, PluginDisposeFailed>>(FiberId.none)
      live.disposal = disposal
      Deferred.unsafeDone(live.started, Exit.void)
      return Effect.flatMap(Effect.exit(runDispose(live.instance)), (exit) => {
        Deferred.unsafeDone(disposal, Exit.succeed(exit))
        return exit
      })
    }))

  // --- add ---------------------------------------------------------------------------------------
  const initialize = <E, R>(plugin: Plugin<E, R>, entry: Entry, options: AddOptions | undefined) =>
    Effect.uninterruptibleMask((restore) =>
      Effect.gen(function*() {
        const name = plugin.name
        const scope = yield* Scope.make()
        const lifecycle = LifecycleContext.make({
          name,
          version: plugin.version,
          storagePath: path.join(config.root, "plugins", name),
          scope,
          requestReload: options?.requestReload
        })
        const timeout = timedOut(`initialize of ${name}`, config.initializeTimeout)
        const run = fs.makeDirectory(lifecycle.storage.path, { recursive: true }).pipe(
          Effect.zipRight(Effect.suspend(() => plugin.initialize)),
          Scope.extend(scope),
          Effect.provideService(LifecycleContext.PluginLifecycleContext, lifecycle),
          Effect.timeoutFail({ duration: config.initializeTimeout, onTimeout: () => timeout }),
          Effect.annotateLogs("plugin", name),
          Effect.interruptible
        )
        const fiber = yield* FiberSet.run(initializing, run)
        const awaited = yield* Effect.exit(restore(Fiber.await(fiber)))
        if (Exit.isFailure(awaited)) yield* Fiber.interrupt(fiber)
        const exit = yield* Fiber.await(fiber)

        if (Exit.isSuccess(exit)) {
          const contributions = exit.value
          const instance: PluginInstance = {
            name,
            version: plugin.version,
            contributions,
            hooks: normalizeHooks(contributions),
            lifecycle,
            scope
          }
          yield* update(entry, { status: "ready", live: makeLive(instance), last_error: undefined })
          publishReady(instance)
          yield* publishSnapshots
          return Either.right(entry.snapshot)
        }

        const cause = exit.cause
        const reason = Cause.failureOption(cause).pipe(
          Option.match({
            onNone: () => (Cause.isInterruptedOnly(cause) ? "interrupted" as const : "died" as const),
            onSome: (error) => (error === timeout ? "timed-out" as const : "failed" as const)
          })
        )
        const closing = yield* Effect.exit(Scope.close(scope, exit))
        if (Exit.isFailure(closing)) {
          yield* Effect.logWarning(`releasing what ${name} acquired failed: ${describeCause(closing.cause)}`)
        }
        yield* update(entry, { status: "error", live: undefined, last_error: describeCause(cause) })
        yield* publishSnapshots
        return Either.left(new PluginInitializeFailed({ name, reason, cause }))
      })
    ).pipe(Effect.flatten)

  const add: PluginRegistryShape["add"] = <E, R>(plugin: Plugin<E, R>, options?: AddOptions) =>
    Effect.suspend((): Effect.Effect<
      PluginSnapshot,
      PluginAlreadyRegistered | PluginInitializeFailed | InvalidPluginName | CityClosed,
      R
    > => {
      const name = plugin.name
      const valid = Schema.decodeUnknownEither(PluginName)(name)
      if (Either.isLeft(valid)) {
        return Effect.fail(
          new InvalidPluginName({ name: String(name), reason: ParseResult.TreeFormatter.formatErrorSync(valid.left) })
        )
      }
      if (closed || admission.isClosed()) return Effect.fail(new CityClosed({ operation: `add plugin ${name}` }))
      const existing = entries.get(name)
      if (adding.has(name) || existing?.status === "initializing" || existing?.status === "ready") {
        return Effect.fail(new PluginAlreadyRegistered({ name }))
      }
      adding.add(name)
      const source = options?.source ?? "code"
      return addGate.withPermits(1)(withLock(
        name,
        Effect.gen(function*() {
          yield* admission.check(`add plugin ${name}`)
          const previous = entries.get(name)
          const at = yield* now
          const entry: Entry = previous ?? {
            name,
            status: "initializing",
            live: undefined,
            version: plugin.version,
            source,
            attempts: 0,
            last_error: undefined,
            updated_at: at,
            snapshot: undefined as unknown as PluginSnapshot
          }
          entry.version = plugin.version
          entry.source = source
          yield* update(entry, { status: "initializing", attempts: entry.attempts + 1 })
          setEntry(entry)
          yield* publishSnapshots
          return yield* initialize(plugin, entry, options)
        })
      )).pipe(Effect.ensuring(Effect.sync(() => adding.delete(name))))
    })

  // --- remove ------------------------------------------------------------------------------------
  const removeEntry = (name: string): Effect.Effect<boolean, PluginDisposeFailed> =>
    Effect.gen(function*() {
      const entry = entries.get(name)
      if (entry === undefined) return false
      const live = entry.live
      if (live === undefined) {
        deleteEntry(entry)
        yield* publishSnapshots
        return true
      }
      if (entry.status !== "disposing") {
        yield* update(entry, { status: "disposing" })
        unpublish(live.instance)
        yield* publishSnapshots
      }
      // Wait for the last lease on a view containing it, unless close already disposes it.
      yield* Effect.raceFirst(views.unleased(live.instance), Deferred.await(live.started))
      const exit = yield* Effect.exit(disposeOnce(live))
      deleteEntry(entry)
      yield* publishSnapshots
      yield* exit
      return true
    })

  const remove: PluginRegistryShape["remove"] = (name) =>
    Effect.suspend((): Effect.Effect<boolean, PluginDisposeFailed | CityClosed> => {
      if (closed || admission.isClosed()) return Effect.fail(new CityClosed({ operation: `remove plugin ${name}` }))
      return Effect.flatMap(FiberSet.run(background, withLock(name, removeEntry(name))), Fiber.join)
    })

  // --- close: the registry's finalizer ---------------------------------------------------------------
  yield* Effect.addFinalizer(() =>
    Effect.gen(function*() {
      closed = true
      yield* FiberSet.clear(initializing)
      yield* addGate.withPermits(Number.MAX_SAFE_INTEGER)(Effect.void)
      const lives: Array<Live> = []
      for (const name of [...names].reverse()) {
        const entry = entries.get(name)!
        if (entry.live !== undefined) {
          lives.push(entry.live)
          if (entry.status !== "disposing") yield* update(entry, { status: "disposing" })
        } else {
          deleteEntry(entry)
        }
      }
      ready = []
      views.publish(ready)
      yield* publishSnapshots
      yield* Effect.forEach(
        lives,
        (live) =>
          Effect.gen(function*() {
            const name = live.instance.name
            const drained = yield* Effect.interruptible(views.unleased(live.instance)).pipe(
              Effect.timeout(config.disposeTimeout),
              Effect.option
            )
            if (Option.isNone(drained)) {
              report.report(
                `plugin ${name}`,
                Cause.fail(
                  new PluginDisposeFailed({
                    name,
                    reason: "still-leased",
                    cause: Cause.fail(timedOut(`the last lease on ${name}`, config.disposeTimeout))
                  })
                )
              )
            }
            const exit = yield* Effect.exit(disposeOnce(live))
            if (Exit.isFailure(exit)) report.report(`plugin ${name}`, exit.cause)
            const entry = entries.get(name)
            if (entry !== undefined) deleteEntry(entry)
            yield* publishSnapshots
          }),
        { concurrency: config.disposeConcurrency, discard: true }
      )
      for (const entry of Array.from(entries.values())) deleteEntry(entry)
      yield* publishSnapshots
      // Removals in flight end now that every plugin is disposed; give them their bounded moment.
      yield* Effect.interruptible(FiberSet.awaitEmpty(background)).pipe(
        Effect.timeout(config.disposeTimeout),
        Effect.ignore
      )
      yield* FiberSet.clear(background)
    })
  )

  const replaceSkills: PluginRegistryShape["replaceSkills"] = (name, skills) =>
    withLock(
      name,
      Effect.suspend(() => {
        const entry = entries.get(name)
        const live = entry?.live
        if (entry === undefined || live === undefined || entry.status !== "ready") {
          return Effect.fail(new PluginNotFound({ name }))
        }
        const previous = live.instance
        const instance: PluginInstance = { ...previous, contributions: { ...previous.contributions, skills } }
        const at = searchSorted(ready, name, instanceName)
        ready = [...ready.slice(0, at), instance, ...ready.slice(at + 1)]
        entry.live = Object.assign(live, { instance })
        views.publish(ready)
        return Effect.void
      })
    )

  const service: PluginRegistryShape = {
    add,
    remove,
    replaceSkills,
    get: (name) => Effect.sync(() => Option.map(Option.fromNullable(entries.get(name)), (e) => e.snapshot)),
    snapshots: Effect.sync(list),
    changes,
    snapshotOf: (name) => Option.map(Option.fromNullable(entries.get(name)), (e) => e.snapshot),
    views
  }
  return service
})

export const layer = Layer.scoped(PluginRegistry, make)
