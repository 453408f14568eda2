/**
 * The City's assembly, behind `City.make`, `City.layer` and `City.layerConfig` (src/City.ts
 * declares them). The core services are composed in acquisition order Workspaces →
 * PluginRegistry → ExecutionLeases → Sessions, so closing releases them in reverse: Sessions stop
 * admitting, running Steps drain (then are interrupted), plugins are disposed, Workspaces are
 * released (docs/city-plugin-lifecycle.md: "city.close() stops Sessions before releasing Plugins
 * and Workspaces"). The order is the composition's, not hand-written sequencing.
 *
 * Plugins given in `options.plugins` start while the City builds (../StartPlugins.ts: checked
 * first, then added concurrently, an optional one isolated, a required one failing the build);
 * `city.close` is close.ts. This module only wires.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { type CityShape, makeCalls } from "../CityService.ts"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as CityConfig from "../CityConfig.ts"
import type { StateRoot } from "../../root/StateRoot.ts"
import * as Sessions from "../Sessions.ts"
import * as StartPlugins from "../StartPlugins.ts"
import type { CheckedStartPlugins, RequiredStartFailure, StartPlugin, StartRequirements } from "../StartPlugins.ts"
import * as Workspaces from "../Workspaces.ts"
import * as Close from "./close.ts"
import * as ExecutionLeases from "./executionLeases.ts"
import * as InitializeFailure from "./initializeFailure.ts"
import * as LeaseTable from "./leaseTable.ts"
import * as PluginLifecycle from "./pluginLifecycle.ts"
import * as PluginRegistry from "./pluginRegistry.ts"

/**
 * The core services on a given configuration, in acquisition order, as tags (the loader's Layer,
 * layers/internal/loaderCore.ts, is built over them).
 * @since 0.1.0
 * @category layers
 */
export const core = <E, R>(config: Layer.Layer<CityConfig.CityConfig | StateRoot, E, R>) =>
  Sessions.layer.pipe(
    Layer.provideMerge(ExecutionLeases.layer),
    Layer.provideMerge(PluginRegistry.layer),
    Layer.provideMerge(PluginLifecycle.layer.pipe(Layer.provideMerge(LeaseTable.layer))),
    Layer.provideMerge(Workspaces.layer),
    Layer.provideMerge(Layer.merge(Close.layer, config))
  )

/** The core services the City façade and its close read. */
type CoreServices =
  | PluginRegistry.PluginRegistry
  | ExecutionLeases.ExecutionLeases
  | Workspaces.Workspaces
  | Sessions.Sessions
  | Close.Closing

/**
 * A City assembled from its core: the core's services, the `City` façade over them, and its close.
 * @since 0.1.0
 * @category models
 */
export interface Assembled<ROut> {
  /** The core's services, as built. */
  readonly context: Context.Context<ROut>
  /** The `City` façade over that core. */
  readonly city: CityShape
  /** `city.close`, and the teardown the current Scope runs. */
  readonly close: Close.CityClose
}

/**
 * The one assembly of a City from its core (`City.make`, `Loader.city`, `CityTest`,
 * `PluginHarness`): the core is built in a Scope of its own that `city.close` closes, and closing
 * the current Scope runs the close's teardown.
 * @since 0.1.0
 * @category constructors
 */
export const fromCore = <ROut, E, R>(
  core: Layer.Layer<ROut | CoreServices, E, R>
): Effect.Effect<Assembled<ROut | CoreServices>, E, R | Scope.Scope> =>
  Effect.gen(function*() {
    const outer = yield* Effect.scope
    const inner = yield* Scope.fork(outer, ExecutionStrategy.sequential)
    const context = yield* Layer.buildWithScope(core, inner)
    const registry = Context.get(context, PluginRegistry.PluginRegistry)
    const close = yield* Close.closeOnce(inner, Context.get(context, Close.Closing))
    yield* Scope.addFinalizer(outer, close.teardown)
    const leases = Context.get(context, ExecutionLeases.ExecutionLeases)
    const city: CityShape = {
      plugins: registry,
      workspaces: Context.get(context, Workspaces.Workspaces),
      agents: Context.get(context, Sessions.Sessions).agents,
      leases,
      calls: makeCalls(registry, leases),
      close: close.close
    }
    return { context, city, close }
  })

/**
 * Builds a City in the current Scope on `options` (its timeouts, and its state root on Node's file
 * system: the City reads only its plugins' data folders from it), with its start plugins: checked first, then the
 * core is assembled and they start. A required start plugin's own typed failure is unwrapped
 * (initializeFailure.ts): it is one of `P`'s. `City.make` and `City.layerConfig` are this. A start
 * plugin's SiblingNeeds are types only (nothing reads them from a context), each met by another
 * start plugin (CheckedStartPlugins): the requirements are named without them.
 * @since 0.1.0
 * @category constructors
 */
export const build = <P extends ReadonlyArray<StartPlugin<unknown>>>(
  options: CityConfig.CityOptions,
  plugins: CheckedStartPlugins<P> | undefined
) => {
  const start = (plugins ?? []) as ReadonlyArray<StartPlugin<StartRequirements<P>>>
  return Effect.gen(function*() {
    yield* StartPlugins.check(start)
    const { city, context } = yield* fromCore(core(CityConfig.layer(options).pipe(Layer.provide(NodeFileSystem.layer))))
    yield* StartPlugins.start(Context.get(context, PluginRegistry.PluginRegistry), start)
    return city
  }).pipe(
    Effect.catchTag("RegistryError", (error) =>
      error.reason === "PluginInitializeFailed" ? InitializeFailure.unwrap<RequiredStartFailure<P>>(error) : Effect.fail(error))
  )
}
