/**
 * The registry (docs/city-plugin-lifecycle.md, "Plugin Lifecycle": "city.plugins.add() registers
 * one unique instance. A Plugin ID cannot be registered twice in one City").
 *
 * - One instance per name; operations on one name are serialized (KeyedMutex), different names
 *   proceed concurrently. A second `add` of a name that is initializing or ready fails at once.
 * - `add` starts the instance (PluginInstances: bounded initialize, release on failure). A failure
 *   leaves an `error` snapshot with `last_error`; a later successful add replaces it.
 * - `remove` takes the plugin out of the next execution view at once. If nothing holds it, it is
 *   disposed in the call: `disposed`. If the caller itself runs under a lease that covers it (an
 *   action removing another plugin, a host Step), it returns `pending` at once and the disposal
 *   follows when the last lease lets go; the caller may wait with `disposal`. Leases held by other
 *   fibers are waited for. An unknown name is `Option.none()`.
 * - The registry's finalizer is the plugin part of close: queued adds and removes fail with
 *   CityClosed, initializations in flight are interrupted (reported when they do not end in time),
 *   then every plugin is disposed in reverse name order (`disposeConcurrency` at once), each after
 *   its last lease (bounded by `disposeTimeout`, then `still-leased`), every failure reported.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Stream from "effect/Stream"
import {
  CityClosed,
  InvalidPluginName,
  PluginAlreadyRegistered,
  PluginDependencyMissing,
  PluginDisposeFailed,
  PluginHasDependents,
  type PluginInitializeFailed,
  PluginNotFound,
  PluginNotReady
} from "../../schema/Errors.ts"
import type { Skill } from "../../schema/PluginChange.ts"
import * as PluginName from "../../schema/PluginName.ts"
import type { PluginSnapshot, SnapshotChange } from "../../schema/PluginSnapshot.ts"
import type { Plugin, Requirement } from "../Plugin.ts"
import type { SiblingNeed } from "../Siblings.ts"
import * as Dependencies from "./Dependencies.ts"
import * as InitializeFailure from "./InitializeFailure.ts"
import type { PluginConfig, PluginLifecycleContextShape } from "../PluginLifecycleContext.ts"
import { CityConfig } from "./CityConfig.ts"
import { ClosingPhase } from "./ClosingPhase.ts"
import { CloseRecorder } from "./CloseRecorder.ts"
import { LeaseTable } from "./LeaseTable.ts"
import { disposeAfterLeases, disposed, Removal } from "./LeasedDisposal.ts"
import * as KeyedMutex from "./KeyedMutex.ts"
import * as PluginLives from "./PluginLives.ts"
import { closePlugins } from "./CloseDisposal.ts"
import type { PluginLife } from "./PluginLife.ts"
import { lastError, PluginInstances } from "./PluginInstances.ts"
import * as Snapshots from "./Snapshots.ts"

/**
 * The options of `city.plugins.add`.
 * @since 0.1.0
 * @category models
 */
export interface AddOptions {
  /** Where the plugin came from, shown in its snapshot. Default `code`. */
  readonly source?: string | undefined
  /** What the plugin's `ctx.requestReload` does (the loader passes its own); default: ReloadRejected. */
  readonly requestReload?: PluginLifecycleContextShape["requestReload"] | undefined
  /** The plugin's settings, `ctx.config` (the loader passes the decoded `plugins.json` ones); default: none. */
  readonly config?: PluginConfig | undefined
}

/**
 * The options of `city.plugins.remove`.
 * @since 0.1.0
 * @category models
 */
export interface RemoveOptions {
  /**
   * Removes the plugins that require this one first, dependents before what they depend on (each
   * disposal after its own leases); without it, a plugin others require is not removed
   * (`PluginHasDependents`).
   */
  readonly cascade?: boolean | undefined
}

/**
 * The registry: `city.plugins` (add, remove, get, snapshots, changes) and the City's own part.
 * @since 0.1.0
 * @category models
 */
export interface PluginRegistryShape {
  /**
   * Adds and initializes a plugin. An initialize that fails with the plugin's own typed failure
   * fails `add` with that failure itself, `E`, as a Layer fails with its own error (so
   * `Effect.catchTag` reaches it); when releasing what it had acquired failed too, that release
   * failure follows it in the Cause. One that dies, outlives `initializeTimeout` or is
   * interrupted fails with `PluginInitializeFailed`. Either way the plugin keeps an error
   * snapshot with both (docs/library.md, "Decisions where the specification is silent").
   */
  readonly add: <E, R>(
    plugin: Plugin<E, R>,
    options?: AddOptions
  ) => Effect.Effect<
    PluginSnapshot,
    E | PluginInitializeFailed | PluginAlreadyRegistered | PluginDependencyMissing | InvalidPluginName | CityClosed,
    Exclude<R, SiblingNeed<any>>
  >
  /**
   * `add`, with every failed initialize a `PluginInitializeFailed` (reason `failed` carries the
   * plugin's own failure in its `cause`): for plugins whose error type is `unknown` (the loader's)
   * and the City's start. Internal to the City (not part of `city.plugins`).
   */
  readonly addWrapped: <E, R>(
    plugin: Plugin<E, R>,
    options?: AddOptions
  ) => Effect.Effect<
    PluginSnapshot,
    PluginAlreadyRegistered | PluginDependencyMissing | PluginInitializeFailed | InvalidPluginName | CityClosed,
    Exclude<R, SiblingNeed<any>>
  >
  /** `None` for an unknown name; see {@link Removal}. Clearing an error snapshot is `disposed`. */
  readonly remove: (
    name: string,
    options?: RemoveOptions
  ) => Effect.Effect<Option.Option<Removal>, PluginDisposeFailed | PluginHasDependents | CityClosed>
  readonly get: (name: string) => Effect.Effect<Option.Option<PluginSnapshot>>
  /** Every live or failed plugin, sorted by name in code-unit order. */
  readonly snapshots: Effect.Effect<ReadonlyArray<PluginSnapshot>>
  /** The current snapshots as `Updated` changes, then every change as it happens. */
  readonly changes: Stream.Stream<SnapshotChange>
  /**
   * Replaces a ready plugin's skill set: the next view carries the new set (so the next Turn sees
   * it), views already leased keep theirs.
   */
  readonly replaceSkills: (name: string, skills: ReadonlyArray<Skill>) => Effect.Effect<void, PluginNotFound>
  /**
   * Why a plugin is not in a view, for the City's calls: not ready (with its last error) or unknown.
   * Synchronous and internal to the City (not part of `city.plugins`).
   */
  readonly explain: (name: string) => PluginNotFound | PluginNotReady
  /**
   * Records that a plugin was not initialized because a plugin it requires is not there (a start
   * plugin whose dependency failed): an error snapshot with `reason`. Internal to the City.
   */
  readonly unstarted: (plugin: Plugin<unknown, unknown>, reason: string, source?: string) => Effect.Effect<void>
  /**
   * Records that a ready plugin failed on its own (its worker thread ended): it leaves the next
   * view at once, is disposed after the last lease on it, and then keeps an error snapshot with
   * `reason`, so a later `add` is a retry. Nothing happens when it is not ready (being added,
   * removed or gone) or when the City is closing (the close disposes it). Internal to the City.
   */
  readonly crashed: (name: string, reason: string) => Effect.Effect<void>
}

/**
 * The plugin registry as a service.
 * @since 0.1.0
 * @category tags
 */
export class PluginRegistry extends Context.Tag("effect-city/PluginRegistry")<PluginRegistry, PluginRegistryShape>() {}

/**
 * Makes the registry; its finalizer is the plugin part of close.
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const state = yield* ClosingPhase
  const report = yield* CloseRecorder
  const config = yield* CityConfig
  const views = yield* LeaseTable
  const instances = yield* PluginInstances
  const snapshots = yield* Snapshots.make
  const mutex = KeyedMutex.make<string>()
  const lives = PluginLives.make(views)
  /** Names whose add was admitted and has not finished. */
  const adding = new Set<string>()
  /** What each admitted plugin with requirements requires (until it fails to start or leaves). */
  const requiresOf = new Map<string, ReadonlyArray<Requirement>>()
  /** The admitted plugins that require each plugin (not optionally). */
  const dependents = new Map<string, Set<string>>()
  /** Plugins being removed: no new dependent is admitted on them. */
  const leaving = new Set<string>()

  const admitDependent = (name: string, requires: ReadonlyArray<Requirement>) => {
    requiresOf.set(name, requires)
    for (const r of requires) {
      if (r.optional) continue
      const set = dependents.get(r.name)
      if (set === undefined) dependents.set(r.name, new Set([name]))
      else set.add(name)
    }
  }
  const forgetDependent = (name: string) => {
    const requires = requiresOf.get(name)
    if (requires === undefined) return
    requiresOf.delete(name)
    for (const r of requires) {
      const set = dependents.get(r.name)
      if (set === undefined) continue
      set.delete(name)
      if (set.size === 0) dependents.delete(r.name)
    }
  }
  const dependentsOf = (name: string): ReadonlyArray<string> => [...(dependents.get(name) ?? [])].sort()

  const leaveRegistry = (name: string, life: PluginLife) =>
    Effect.suspend(() => {
      if (!lives.leave(name, life)) return Effect.void
      forgetDependent(name)
      return snapshots.remove(name)
    })

  // --- add ---------------------------------------------------------------------------------------
  const initialize = <E, R>(
    plugin: Plugin<E, R>,
    options: AddOptions | undefined,
    restore: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  ): Effect.Effect<PluginSnapshot, PluginInitializeFailed | CityClosed, R> =>
    Effect.suspend(() => {
      const name = plugin.name
      // A previous instance of this name still disposing (pending on a lease) goes first.
      const previous = lives.get(name)
      if (previous !== undefined) {
        return Effect.zipRight(
          restore(Effect.raceFirst(previous.disposed, state.cancelled(`add plugin ${name}`))),
          initialize(plugin, options, restore)
        )
      }
      const refused = state.refuse(`add plugin ${name}`)
      if (refused !== undefined) return Effect.fail(refused)
      return snapshots.initializing(name, plugin.version, options?.source ?? "code").pipe(
        Effect.zipRight(instances.start(plugin, { ...options, lost: (reason) => crashed(name, reason) }, restore)),
        Effect.flatMap((started): Effect.Effect<PluginSnapshot, PluginInitializeFailed | CityClosed> =>
          Either.isLeft(started)
            ? Effect.zipRight(snapshots.failed(name, lastError(started.left)), Effect.fail(started.left))
            : becomeReady(name, started.right)
        )
      )
    })

  /** A started instance joins the registry and the next view, unless closing began meanwhile. */
  const becomeReady = (name: string, life: PluginLife) =>
    Effect.suspend((): Effect.Effect<PluginSnapshot, CityClosed> => {
      const refused = state.refuse(`add plugin ${name}`)
      if (refused !== undefined) {
        // Closing began while it initialized: it never becomes ready; dispose it here.
        return Effect.ignore(life.dispose).pipe(Effect.zipRight(snapshots.remove(name)), Effect.zipRight(Effect.fail(refused)))
      }
      lives.join(name, life)
      return snapshots.ready(name)
    })

  // A plugin's SiblingNeeds are types only (nothing reads them from a context): at `add` its
  // provider is checked by `requires`, so they are taken off what the call requires.
  const addWrapped: PluginRegistryShape["addWrapped"] = <E, R>(plugin: Plugin<E, R>, options?: AddOptions) =>
    addAny(plugin, options) as Effect.Effect<
      PluginSnapshot,
      PluginAlreadyRegistered | PluginDependencyMissing | PluginInitializeFailed | InvalidPluginName | CityClosed,
      Exclude<R, SiblingNeed<any>>
    >
  // The public form: the plugin's own typed failure unwrapped (InitializeFailure.ts).
  const add: PluginRegistryShape["add"] = <E, R>(plugin: Plugin<E, R>, options?: AddOptions) =>
    Effect.catchTag(addWrapped(plugin, options), "PluginInitializeFailed", (error) => InitializeFailure.unwrap<E>(error))
  const addAny = <E, R>(plugin: Plugin<E, R>, options?: AddOptions) =>
    Effect.suspend((): Effect.Effect<
      PluginSnapshot,
      PluginAlreadyRegistered | PluginDependencyMissing | PluginInitializeFailed | InvalidPluginName | CityClosed,
      R
    > => {
      const name = plugin.name
      const invalid = PluginName.check(name)
      if (invalid !== undefined) return Effect.fail(invalid)
      const refused = state.refuse(`add plugin ${name}`)
      if (refused !== undefined) return Effect.fail(refused)
      const status = snapshots.statusOf(name)
      if (adding.has(name) || status === "initializing" || status === "ready") {
        return Effect.fail(new PluginAlreadyRegistered({ plugin: name }))
      }
      // Its required plugins are ready, and none is being removed: they stay until it is gone.
      const requires = plugin.requires ?? []
      if (requires.length > 0) {
        const missing = requires.filter((r) => !r.optional && (!lives.isReady(r.name) || leaving.has(r.name))).map((r) => r.name)
        if (missing.length > 0) return Effect.fail(new PluginDependencyMissing({ plugin: name, missing: [...new Set(missing)].sort() }))
        admitDependent(name, requires)
      }
      adding.add(name)
      return mutex.withLock(name, (restore) => initialize(plugin, options, restore), state.cancelled(`add plugin ${name}`)).pipe(
        Effect.onExit((exit) =>
          Effect.sync(() => {
            adding.delete(name)
            if (Exit.isFailure(exit) && lives.get(name) === undefined) forgetDependent(name)
          })
        )
      )
    })

  // --- remove ------------------------------------------------------------------------------------
  const removeLive = (
    name: string,
    life: PluginLife,
    restore: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  ) =>
    Effect.zipRight(
      Effect.suspend(() => {
        if (snapshots.statusOf(name) === "disposing") return Effect.void
        lives.hide(name)
        return snapshots.disposing(name)
      }),
      disposeAfterLeases({
        life,
        dispose: Effect.ensuring(life.dispose, leaveRegistry(name, life)),
        views,
        state,
        restore
      })
    )

  const removeOne = (name: string, restore: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>) =>
    Effect.suspend((): Effect.Effect<Option.Option<Removal>, PluginDisposeFailed> => {
      const life = lives.get(name)
      if (life !== undefined) return Effect.map(removeLive(name, life, restore), Option.some)
      if (snapshots.statusOf(name) === undefined) return Effect.succeed(Option.none())
      return Effect.as(snapshots.remove(name), Option.some(disposed(Effect.void)))
    })

  /**
   * Removes `name`'s dependents (all that require it, directly or not), each before what it
   * depends on, then `name`; a dependent whose disposal is pending (on the caller's lease) makes
   * the disposals after it wait for it in the background, and `name`'s removal pending too.
   */
  const cascade = (name: string, restore: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>) =>
    Effect.gen(function*() {
      const closure = Dependencies.transitiveDependents(requiresOf, [name], true)
      const graph = new Map(closure.map((n) => [n, requiresOf.get(n) ?? []] as const))
      const pending: Array<Removal> = []
      for (const wave of Dependencies.disposeWaves(graph)) {
        for (const dependent of wave) {
          const removed = yield* mutex.withLock(dependent, (inner) => removeOne(dependent, inner), state.cancelled(`remove plugin ${dependent}`))
          if (Option.isSome(removed) && removed.value.status === "pending") pending.push(removed.value)
        }
      }
      if (pending.length === 0) return yield* removeOne(name, restore)
      // Hidden now; disposed once the pending dependents are.
      const life = lives.get(name)
      if (life === undefined) return yield* removeOne(name, restore)
      lives.hide(name)
      yield* snapshots.disposing(name)
      const waitDependents = Effect.forEach(pending, (r) => Effect.ignore(r.disposal), { discard: true })
      const fiber = yield* Effect.forkDaemon(Effect.zipRight(
        waitDependents,
        Effect.flatMap(
          disposeAfterLeases({ life, dispose: Effect.ensuring(life.dispose, leaveRegistry(name, life)), views, state, restore: (e) => e }),
          (removal) => removal.disposal
        )
      ))
      return Option.some(new Removal("pending", Effect.flatten(fiber.await)))
    })

  const remove: PluginRegistryShape["remove"] = (name, options) =>
    Effect.suspend(() => {
      const refused = state.refuse(`remove plugin ${name}`)
      if (refused !== undefined) return Effect.fail(refused)
      const body = (restore: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>) =>
        Effect.suspend((): Effect.Effect<Option.Option<Removal>, PluginDisposeFailed | PluginHasDependents | CityClosed> => {
          const required = dependentsOf(name)
          if (required.length > 0 && options?.cascade !== true) {
            return Effect.fail(new PluginHasDependents({ plugin: name, dependents: required }))
          }
          // From here on no new dependent is admitted on it.
          leaving.add(name)
          return (required.length > 0 ? cascade(name, restore) : removeOne(name, restore)).pipe(
            Effect.ensuring(Effect.sync(() => leaving.delete(name)))
          )
        })
      return mutex.withLock(name, body, state.cancelled(`remove plugin ${name}`))
    })

  const unstarted: PluginRegistryShape["unstarted"] = (plugin, reason, source) =>
    Effect.zipRight(snapshots.initializing(plugin.name, plugin.version, source ?? "code"), snapshots.failed(plugin.name, reason))

  const crashed: PluginRegistryShape["crashed"] = (name, reason) =>
    Effect.suspend(() => {
      if (state.refuse(`record the crash of plugin ${name}`) !== undefined) return Effect.void
      const body = (restore: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>) =>
        Effect.suspend(() => {
          const life = lives.get(name)
          const before = snapshots.current(name)
          if (life === undefined || before?.status !== "ready") return Effect.void
          return removeLive(name, life, restore).pipe(
            Effect.flatMap((removal) => removal.disposal),
            Effect.ignore,
            Effect.zipRight(snapshots.initializing(name, before.version, before.source)),
            Effect.zipRight(snapshots.failed(name, reason))
          )
        })
      return Effect.ignore(mutex.withLock(name, body, state.cancelled(`record the crash of plugin ${name}`)))
    })

  const replaceSkills: PluginRegistryShape["replaceSkills"] = (name, skills) =>
    Effect.suspend(() => {
      const life = lives.get(name)
      if (life === undefined || snapshots.statusOf(name) !== "ready") {
        return Effect.fail(new PluginNotFound({ plugin: name }))
      }
      lives.replaceSkills(life, skills)
      return Effect.void
    })

  // --- close: the registry's finalizer ---------------------------------------------------------------
  yield* Effect.addFinalizer(() =>
    closePlugins({
      state,
      instances,
      snapshots,
      lives: lives.all,
      requiresOf,
      unpublish: lives.hideAll,
      // Each leaves the registry as it is disposed; the snapshots are cleared at once at the end.
      dispose: { config, views, report, left: ({ life, name }) => Effect.sync(() => lives.leave(name, life)) }
    })
  )

  return {
    add,
    addWrapped,
    remove,
    get: snapshots.get,
    snapshots: snapshots.list,
    changes: snapshots.changes,
    replaceSkills,
    explain: snapshots.explain,
    unstarted,
    crashed
  } satisfies PluginRegistryShape
})


/**
 * The plugin registry as a scoped Layer: closing it disposes every plugin.
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.scoped(PluginRegistry, make)
