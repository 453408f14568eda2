/**
 * Adding a plugin (docs/city-plugin-lifecycle.md, "Plugin Lifecycle": "city.plugins.add()
 * registers one unique instance. A Plugin ID cannot be registered twice in one City").
 *
 * - One instance per name: a second `add` of a name that is initializing or ready fails at once
 *   with `PluginAlreadyRegistered`, and so does a name that equals a registered one (any snapshot,
 *   or an add in flight) ignoring case (schema/PluginName.ts); a required plugin that is not ready, or is being removed,
 *   fails it with `PluginDependencyMissing`.
 * - Operations on one name are serialized (KeyedMutex); an instance of the name still disposing
 *   (pending on a lease) is waited for first.
 * - `add` starts the instance (internal/pluginLifecycle.ts: bounded initialize, release on failure). A failure
 *   leaves an `error` snapshot with `last_error`; a later successful add replaces it. Closing begun
 *   meanwhile disposes the started instance, which never becomes ready.
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import {
  type CityClosed,
  RegistryError
} from "../../schema/Errors.ts"
import * as PluginName from "../../schema/PluginName.ts"
import type { PluginSnapshot } from "../../schema/PluginSnapshot.ts"
import type { Plugin } from "../Plugin.ts"
import type { PluginConfig, PluginLifecycleContextShape } from "../PluginLifecycleContext.ts"
import type { SiblingNeed } from "../Siblings.ts"
import * as InitializeFailure from "./internal/initializeFailure.ts"
import { caseKey } from "./internal/caseKey.ts"
import { lastError, type Started } from "./internal/pluginLifecycle.ts"
import * as PluginRecovery from "./internal/pluginRecovery.ts"
import type { RegistryParts, Restore } from "./internal/registryParts.ts"

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
 * Why an `add` failed, besides the plugin's own typed failure.
 * @since 0.1.0
 * @category models
 */
export type AddFailure = RegistryError | CityClosed

/**
 * Makes `add` (the plugin's own typed failure unwrapped, internal/initializeFailure.ts) and `addWrapped`
 * (every failed initialize a `PluginInitializeFailed`) on the registry's parts; `crashed` is what a
 * started plugin's PluginLost reports to.
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  parts: RegistryParts,
  crashed: (name: string, reason: string, status: "error" | "unresponsive") => Effect.Effect<boolean>,
  recovery: PluginRecovery.PluginRecovery
) => {
  const { closing, dependents, instances, lifecycle, mutex, snapshots } = parts
  /** Names whose add was admitted and has not finished, by case key (internal/caseKey.ts). */
  const adding = new Map<string, string>()

  const initialize = <E, R>(
    plugin: Plugin<E, R>,
    options: AddOptions | undefined,
    restore: Restore
  ): Effect.Effect<PluginSnapshot, RegistryError | CityClosed, R> =>
    Effect.suspend(() => {
      const name = plugin.name
      // A previous instance of this name still disposing (pending on a lease) goes first.
      const previous = instances.get(name)
      if (previous !== undefined) {
        return Effect.zipRight(
          restore(Effect.raceFirst(previous.disposed, closing.cancelled(`add plugin ${name}`))),
          initialize(plugin, options, restore)
        )
      }
      const refused = closing.refuse(`add plugin ${name}`)
      if (refused !== undefined) return Effect.fail(refused)
      return snapshots.initializing(name, plugin.version, options?.source ?? "code").pipe(
        Effect.zipRight(lifecycle.start(plugin, {
          ...options,
          lost: lostFor(plugin, options),
          cancelled: closing.cancelled(`initialize of ${name}`)
        }, restore)),
        Effect.flatMap((started): Effect.Effect<PluginSnapshot, RegistryError | CityClosed> =>
          Either.isLeft(started)
            ? Effect.zipRight(snapshots.failed(name, lastError(started.left)), Effect.fail(started.left))
            : becomeReady(name, started.right)
        )
      )
    })

  /** A started instance joins the registry and the next view, unless closing began meanwhile. */
  const becomeReady = (name: string, started: Started) =>
    Effect.suspend((): Effect.Effect<PluginSnapshot, CityClosed> => {
      const refused = closing.refuse(`add plugin ${name}`)
      if (refused !== undefined) {
        // Closing began while it initialized: it never becomes ready; dispose it here.
        return Effect.ignore(started.dispose).pipe(Effect.zipRight(snapshots.remove(name)), Effect.zipRight(Effect.fail(refused)))
      }
      instances.enter(name, started)
      return snapshots.ready(name)
    })

  /**
   * A started plugin lost on its own (PluginLost): out of the City with a snapshot saying why,
   * then started again with backoff, until the crash limit (internal/pluginRecovery.ts).
   */
  const lostFor = <E, R>(plugin: Plugin<E, R>, options: AddOptions | undefined) =>
  (reason: string, status: "error" | "unresponsive" = "error"): Effect.Effect<void> =>
    Effect.gen(function*() {
      const name = plugin.name
      const decision = yield* recovery.crashed(name)
      if (decision._tag === "GiveUp") {
        const why = PluginRecovery.gaveUp(reason, decision.crashes)
        if (yield* crashed(name, why, "error")) {
          yield* Effect.logError(`plugin ${name} stays down: ${why}`).pipe(Effect.annotateLogs({ code: "plugin.crash_limit", plugin: name }))
        }
        return
      }
      if (!(yield* crashed(name, reason, status))) return
      yield* restartLater(plugin, options, reason, decision)
    })

  /** Says when the plugin starts again, and starts it then; a restart that fails is a crash too. */
  const restartLater = <E, R>(
    plugin: Plugin<E, R>,
    options: AddOptions | undefined,
    reason: string,
    decision: { readonly wait: Duration.Duration; readonly crashes: number }
  ): Effect.Effect<void> => {
    const name = plugin.name
    const restart = Effect.suspend(() => {
      const status = snapshots.statusOf(name)
      // Added, removed or restarted meanwhile: nothing is owed.
      if ((status !== "error" && status !== "unresponsive") || instances.get(name) !== undefined) return Effect.void
      return addOnce(plugin as Plugin<E, never>, options).pipe(
        Effect.catchAll((failure) => {
          if (failure._tag !== "RegistryError" || failure.reason !== "PluginInitializeFailed") return Effect.void
          return Effect.flatMap(recovery.crashed(name), (next) =>
            next._tag === "GiveUp"
              ? Effect.zipRight(
                snapshots.failed(name, PluginRecovery.gaveUp(lastError(failure), next.crashes)),
                Effect.logError(`plugin ${name} stays down after ${next.crashes} crashes`).pipe(Effect.annotateLogs({ code: "plugin.crash_limit", plugin: name }))
              )
              : restartLater(plugin, options, lastError(failure), next))
        }),
        Effect.asVoid
      )
    })
    return Effect.zipRight(
      Effect.logWarning(`plugin ${name} lost: ${reason}; starting it again in ${Duration.format(decision.wait)} (crash ${decision.crashes} of ${PluginRecovery.crashLimit} within ${Duration.format(PluginRecovery.crashWindow)})`).pipe(
        Effect.annotateLogs({ code: "plugin.restart", plugin: name })
      ),
      recovery.schedule(name, decision.wait, restart)
    )
  }

  const addAny = <E, R>(plugin: Plugin<E, R>, options?: AddOptions) =>
    Effect.zipRight(recovery.forget(plugin.name), addOnce(plugin, options))

  const addOnce = <E, R>(plugin: Plugin<E, R>, options?: AddOptions) =>
    Effect.suspend((): Effect.Effect<PluginSnapshot, AddFailure, R> => {
      const name = plugin.name
      const invalid = PluginName.check(name)
      if (invalid !== undefined) return Effect.fail(invalid)
      const refused = closing.refuse(`add plugin ${name}`)
      if (refused !== undefined) return Effect.fail(refused)
      const key = caseKey(name)
      const registered = adding.get(key) ?? snapshots.holder(key)
      if (registered !== undefined && registered !== name) {
        return Effect.fail(new RegistryError({ reason: "PluginAlreadyRegistered", plugin: name, registered }))
      }
      const status = snapshots.statusOf(name)
      if (adding.has(key) || status === "initializing" || status === "ready") {
        return Effect.fail(new RegistryError({ reason: "PluginAlreadyRegistered", plugin: name }))
      }
      // Its required plugins are ready, and none is being removed: they stay until it is gone.
      const requires = plugin.requires ?? []
      if (requires.length > 0) {
        const missing = dependents.missing(requires, instances.isReady)
        if (missing.length > 0) return Effect.fail(new RegistryError({ reason: "PluginDependencyMissing", plugin: name, missing }))
        dependents.admit(name, requires)
      }
      adding.set(key, name)
      return mutex.withLock(name, (restore) => initialize(plugin, options, restore), closing.cancelled(`add plugin ${name}`)).pipe(
        Effect.onExit((exit) =>
          Effect.sync(() => {
            adding.delete(key)
            if (Exit.isFailure(exit) && instances.get(name) === undefined) dependents.forget(name)
          })
        )
      )
    })

  // A plugin's SiblingNeeds are types only (nothing reads them from a context): at `add` its
  // provider is checked by `requires`, so they are taken off what the call requires.
  const addWrapped = <E, R>(plugin: Plugin<E, R>, options?: AddOptions) =>
    addAny(plugin, options) as Effect.Effect<PluginSnapshot, AddFailure, Exclude<R, SiblingNeed<any>>>
  const add = <E, R>(
    plugin: Plugin<E, R>,
    options?: AddOptions
  ): Effect.Effect<PluginSnapshot, E | AddFailure, Exclude<R, SiblingNeed<any>>> =>
    Effect.catchTag(addWrapped(plugin, options), "RegistryError", (error) =>
      error.reason === "PluginInitializeFailed" ? InitializeFailure.unwrap<E>(error) : Effect.fail(error))

  return { add, addWrapped }
}
