/**
 * What the parts of the registry share (docs/city-plugin-lifecycle.md, "Plugin Lifecycle"): the
 * City's closing state, configuration and close report, the execution views, the plugin lifecycle,
 * and the registry's own tables (snapshots, started instances, dependencies, the per-name lock). `add`
 * (../PluginAdd.ts), `remove` (pluginRemoval.ts) and close (close.ts) work on one set of them.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { CityConfig, type CityConfigShape } from "../CityConfig.ts"
import { Closing, type ClosingShape } from "./close.ts"
import * as KeyedMutex from "../../internal/keyedMutex.ts"
import { LeaseTable, type LeaseTableShape } from "./leaseTable.ts"
import * as PluginDependents from "./pluginDependents.ts"
import { type ExecutionRegistry, makeExecutionRegistry, PluginLifecycle, type PluginLifecycleShape, type Started } from "./pluginLifecycle.ts"
import * as Snapshots from "./snapshots.ts"

/**
 * Makes a part of a locked body interruptible again (as in `Effect.uninterruptibleMask`).
 * @since 0.1.0
 * @category models
 */
export type Restore = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

/**
 * The state one registry's operations share.
 * @since 0.1.0
 * @category models
 */
export interface RegistryParts {
  /** Whether close has begun, and where close records what it closed and its failures. */
  readonly closing: ClosingShape
  /** The City's deadlines and root. */
  readonly config: CityConfigShape
  /** The execution views and their leases. */
  readonly views: LeaseTableShape
  /** Starts instances (bounded initialize). */
  readonly lifecycle: PluginLifecycleShape
  /** The observable snapshots. */
  readonly snapshots: Snapshots.Snapshots
  /** Operations on one name are serialized. */
  readonly mutex: KeyedMutex.KeyedMutex<string>
  /** The started instances and the ready view. */
  readonly instances: ExecutionRegistry
  /** Who requires whom. */
  readonly dependents: PluginDependents.PluginDependents
  /** A disposed instance leaves the registry: the instance, its dependencies and its snapshot. */
  readonly leave: (name: string, started: Started) => Effect.Effect<void>
}

/**
 * Makes the parts on the City's services; the snapshots' changes end with the Scope.
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<
  RegistryParts,
  never,
  Closing | CityConfig | LeaseTable | PluginLifecycle | Scope.Scope
> = Effect.gen(function*() {
  const views = yield* LeaseTable
  const snapshots = yield* Snapshots.make
  const instances = makeExecutionRegistry(views)
  const dependents = PluginDependents.make()
  return {
    closing: yield* Closing,
    config: yield* CityConfig,
    views,
    lifecycle: yield* PluginLifecycle,
    snapshots,
    mutex: KeyedMutex.make<string>(),
    instances,
    dependents,
    leave: (name, started) =>
      Effect.suspend(() => {
        if (!instances.leave(name, started)) return Effect.void
        dependents.forget(name)
        return snapshots.remove(name)
      })
  }
})
