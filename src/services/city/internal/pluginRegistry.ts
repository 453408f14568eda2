/**
 * The registry (docs/city-plugin-lifecycle.md, "Plugin Lifecycle": "city.plugins.add() registers
 * one unique instance. A Plugin ID cannot be registered twice in one City"): `city.plugins`, put
 * together from its parts.
 *
 * - `add`: ../PluginAdd.ts (one instance per name, bounded initialize, error snapshots and retries).
 * - `remove` and `crashed`: pluginRemoval.ts (out of the next view at once, disposed after the
 *   last lease: ../LeasedDisposal.ts).
 * - The state they share: registryParts.ts (snapshots, started instances, dependencies, per-name lock).
 * - The registry's finalizer is the plugin part of close (close.ts): queued adds and
 *   removes fail with CityClosed, initializations in flight are interrupted (reported when they
 *   do not end in time), then every plugin is disposed in reverse name order
 *   (`disposeConcurrency` at once), each after its last lease (bounded by `disposeTimeout`, then
 *   `still-leased`), every failure reported.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Stream from "effect/Stream"
import {
  type CityClosed,
  type RegistryError,
  ActionRejected
} from "../../../schema/Errors.ts"
import type { Skill } from "../../../schema/PluginChange.ts"
import type { PluginSnapshot, SnapshotChange } from "../../../schema/PluginSnapshot.ts"
import type { Plugin } from "../../Plugin.ts"
import type { SiblingNeed } from "../../Siblings.ts"
import { closePlugins } from "./close.ts"
import type { Removal } from "../LeasedDisposal.ts"
import * as PluginAdd from "../PluginAdd.ts"
import * as PluginRecovery from "./pluginRecovery.ts"
import * as PluginRemoval from "./pluginRemoval.ts"
import * as RegistryParts from "./registryParts.ts"

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
    options?: PluginAdd.AddOptions
  ) => Effect.Effect<
    PluginSnapshot,
    E | RegistryError | CityClosed,
    Exclude<R, SiblingNeed<any>>
  >
  /**
   * `add`, with every failed initialize a `PluginInitializeFailed` (reason `failed` carries the
   * plugin's own failure in its `cause`): for plugins whose error type is `unknown` (the loader's)
   * and the City's start. Internal to the City (not part of `city.plugins`).
   */
  readonly addWrapped: <E, R>(
    plugin: Plugin<E, R>,
    options?: PluginAdd.AddOptions
  ) => Effect.Effect<
    PluginSnapshot,
    RegistryError | CityClosed,
    Exclude<R, SiblingNeed<any>>
  >
  /** `None` for an unknown name; see {@link Removal}. Clearing an error snapshot is `disposed`. */
  readonly remove: (
    name: string,
    options?: PluginRemoval.RemoveOptions
  ) => Effect.Effect<Option.Option<Removal>, RegistryError | CityClosed>
  readonly get: (name: string) => Effect.Effect<Option.Option<PluginSnapshot>>
  /** Every live or failed plugin, sorted by name in code-unit order. */
  readonly snapshots: Effect.Effect<ReadonlyArray<PluginSnapshot>>
  /** The current snapshots as `Updated` changes, then every change as it happens. */
  readonly changes: Stream.Stream<SnapshotChange>
  /**
   * Replaces a ready plugin's skill set: the next view carries the new set (so the next Turn sees
   * it), views already leased keep theirs.
   */
  readonly replaceSkills: (name: string, skills: ReadonlyArray<Skill>) => Effect.Effect<void, ActionRejected>
  /**
   * Why a plugin is not in a view, for the City's calls: not ready (with its last error) or unknown.
   * Synchronous and internal to the City (not part of `city.plugins`).
   */
  readonly explain: (name: string) => ActionRejected
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
  readonly crashed: (name: string, reason: string, status?: "error" | "unresponsive") => Effect.Effect<void>
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
  const parts = yield* RegistryParts.make
  const { instances, lifecycle, snapshots } = parts
  const { crashed, remove: removeNow } = PluginRemoval.make(parts)
  const recovery = yield* PluginRecovery.make
  const { add, addWrapped } = PluginAdd.make(parts, crashed, recovery)
  const remove: typeof removeNow = (name, options) => Effect.zipRight(recovery.forget(name), removeNow(name, options))

  const unstarted: PluginRegistryShape["unstarted"] = (plugin, reason, source) =>
    Effect.zipRight(snapshots.initializing(plugin.name, plugin.version, source ?? "code"), snapshots.failed(plugin.name, reason))

  const replaceSkills: PluginRegistryShape["replaceSkills"] = (name, skills) =>
    Effect.suspend(() => {
      const started = instances.get(name)
      if (started === undefined || snapshots.statusOf(name) !== "ready") {
        return Effect.fail(new ActionRejected({ reason: "PluginNotFound", plugin: name }))
      }
      instances.replaceSkills(started, skills)
      return Effect.void
    })

  // Close: the registry's finalizer.
  yield* Effect.addFinalizer(() =>
    closePlugins({
      lifecycle,
      snapshots,
      instances: instances.all,
      requiresOf: parts.dependents.requiresOf,
      unpublish: instances.hideAll,
      // Each leaves the registry as it is disposed; the snapshots are cleared at once at the end.
      dispose: { config: parts.config, views: parts.views, closing: parts.closing, left: ({ name, started }) => Effect.sync(() => instances.leave(name, started)) }
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
    crashed: (name, reason, status) => Effect.asVoid(crashed(name, reason, status))
  } satisfies PluginRegistryShape
})

/**
 * The plugin registry as a scoped Layer: closing it disposes every plugin.
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.scoped(PluginRegistry, make)
