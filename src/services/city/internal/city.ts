/**
 * `City.layer(options)`: the City as a Layer. The core services are composed in acquisition
 * order Workspaces → PluginRegistry → ExecutionLeases → Sessions, so closing releases them in
 * reverse: Sessions stop admitting, running Steps drain (then are interrupted), plugins are
 * disposed, Workspaces are released (docs/city-plugin-lifecycle.md: "city.close() stops Sessions before releasing Plugins
 * and Workspaces"). The order is the composition's, not hand-written sequencing.
 *
 * Plugins given in `options.plugins` start while the layer builds (services/city/StartPlugins.ts:
 * checked first, then added concurrently, an optional one isolated, a required one failing the
 * layer); `city.close` is services/city/internal/close.ts. This module only wires.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import type * as ConfigError from "effect/ConfigError"
import {
  type InvalidPluginName,
  PluginAlreadyRegistered,
  type PluginDependencyCycle,
  type PluginDependencyMissing,
  type PluginInitializeFailed
} from "../../../schema/Errors.ts"
import { City, type CityShape, makeCalls } from "../CityService.ts"
import * as CityConfig from "../CityConfig.ts"
import * as Close from "./close.ts"
import * as ExecutionLeases from "./executionLeases.ts"
import * as LeaseTable from "./leaseTable.ts"
import * as PluginLifecycle from "./pluginLifecycle.ts"
import * as PluginRegistry from "./pluginRegistry.ts"
import * as Sessions from "../Sessions.ts"
import * as StartPlugins from "../StartPlugins.ts"
import type { CheckedStartPlugins, RequiredStartFailure, StartPlugin, StartRequirements } from "../StartPlugins.ts"
import * as InitializeFailure from "./initializeFailure.ts"
import * as Workspaces from "../Workspaces.ts"

export type {
  CheckedStartPlugins,
  NoStartPluginProvides,
  RequiredStartFailure,
  StartNeeds,
  StartPlugin,
  StartProvides,
  StartRequirements
} from "../StartPlugins.ts"

/**
 * The options of `City.layer`, `City.layerConfig` and `City.make`, given the list of start plugins
 * `P`: a start plugin that needs a sibling service no plugin of `P` provides does not compile
 * ({@link CheckedStartPlugins}).
 * @since 0.1.0
 * @category models
 */
export type CityLayerOptionsFor<P extends ReadonlyArray<StartPlugin<unknown>>> =
  & CityConfig.CityOptions
  & { readonly plugins?: CheckedStartPlugins<P> | undefined }

/**
 * The options of `City.layer` and `City.make`: the City's options and the plugins to start with it.
 * @since 0.1.0
 * @category models
 */
export interface CityLayerOptions<R = never> extends CityConfig.CityOptions {
  /** The plugins started while the layer builds (concurrently), each optional unless marked `required`. */
  readonly plugins?: ReadonlyArray<StartPlugin<R>> | undefined
}

/**
 * Why building a City failed: a start plugin with a bad name, a name given twice, a required
 * dependency missing from the list or a cycle, or a required plugin whose initialize died, timed
 * out or was interrupted (or whose dependency failed: `PluginDependencyMissing`). A required
 * plugin's own typed failure is not wrapped: `City.layer` fails with it
 * ({@link RequiredStartFailure}).
 * @since 0.1.0
 * @category errors
 */
export type CityBuildError =
  | InvalidPluginName
  | PluginAlreadyRegistered
  | PluginInitializeFailed
  | PluginDependencyMissing
  | PluginDependencyCycle

/**
 * The core services on a given configuration, in acquisition order, as tags (the loader's Layer,
 * `Loader.layer`, is built over them).
 * @since 0.1.0
 * @category layers
 */
export const core = <E, R>(config: Layer.Layer<CityConfig.CityConfig, E, R>) =>
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

const build = <R, E, RC>(config: Layer.Layer<CityConfig.CityConfig, E, RC>, options: CityLayerOptions<R>) =>
  Effect.gen(function*() {
    const plugins = options.plugins ?? []
    yield* StartPlugins.check(plugins)
    const { city, context } = yield* fromCore(core(config))
    yield* StartPlugins.start(Context.get(context, PluginRegistry.PluginRegistry), plugins)
    return city
  })

/**
 * Builds on the options as written: the plugins' requirements named, and a required start
 * plugin's own typed failure unwrapped (services/city/internal/initializeFailure.ts): it is one of `P`'s.
 */
// A start plugin's SiblingNeeds are types only (nothing reads them from a context), each met by
// another start plugin (CheckedStartPlugins): the options' requirements are named without them.
const buildFor = <P extends ReadonlyArray<StartPlugin<unknown>>>(
  config: Layer.Layer<CityConfig.CityConfig>,
  options: CityLayerOptionsFor<P>
): Effect.Effect<CityShape, CityBuildError | RequiredStartFailure<P>, Scope.Scope | StartRequirements<P>> =>
  build(config, options as CityLayerOptions<StartRequirements<P>>).pipe(
    Effect.catchTag("PluginInitializeFailed", (error) => InitializeFailure.unwrap<RequiredStartFailure<P>>(error))
  )

/**
 * Builds a City in the current Scope; closing the Scope runs `city.close` and logs its failure,
 * unless a caller of `city.close` already received it. Fails as `City.layer` does.
 * @since 0.1.0
 * @category constructors
 */
export const make = <const P extends ReadonlyArray<StartPlugin<unknown>> = readonly []>(
  options: CityLayerOptionsFor<P> = {}
): Effect.Effect<CityShape, CityBuildError | RequiredStartFailure<P>, Scope.Scope | StartRequirements<P>> =>
  buildFor(CityConfig.layer(options), options)

/**
 * The City as a Layer, on the given options: the City and nothing else. It reads no file of the
 * state root: an application that embeds a City and never provisions needs no `host.json`. One
 * that provisions composes the capability services beside it on the same root:
 * `Layer.merge(City.layer({ root }), CapabilityServices.layer({ root }))`.
 *
 * It fails with {@link CityBuildError}, and with the own typed failure `E` of a start plugin
 * marked `required: true` whose initialize failed with it, unwrapped as a Layer's own error is
 * (docs/library.md): `Effect.catchTag` reaches it ({@link RequiredStartFailure} is the `E`s of
 * the required ones). A start plugin that needs a sibling service no start plugin provides does
 * not compile ({@link CheckedStartPlugins}).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { City, Plugin } from "effect-city"
 *
 * const hello = Plugin.make({
 *   name: "hello",
 *   initialize: Effect.succeed({ system: () => Effect.succeed("Say hello.") })
 * })
 *
 * const program = Effect.gen(function*() {
 *   const city = yield* City.City
 *   return yield* city.plugins.snapshots
 * })
 *
 * // The layer starts `hello` with the City. When the program ends, the layer's Scope closes the
 * // City: Sessions stop, plugins are disposed, Workspaces are released.
 * Effect.runPromise(program.pipe(Effect.provide(City.layer({ root: "/tmp/city", plugins: [hello] })))).then(
 *   (snapshots) => console.log(snapshots.map((s) => `${s.name}: ${s.status}`)) // [ 'hello: ready' ]
 * )
 * ```
 * @since 0.1.0
 * @category layers
 */
export const layer = <const P extends ReadonlyArray<StartPlugin<unknown>> = readonly []>(
  options: CityLayerOptionsFor<P> = {}
): Layer.Layer<City, CityBuildError | RequiredStartFailure<P>, StartRequirements<P>> => Layer.scoped(City, make(options))

/**
 * The City as a Layer, configured from the environment (`CITY_ROOT`, `CITY_INITIALIZE_TIMEOUT`,
 * `CITY_DISPOSE_TIMEOUT`, `CITY_DRAIN_TIMEOUT`, `CITY_DISPOSE_CONCURRENCY`; see CityConfig.config),
 * with `options` taking precedence where given.
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = <const P extends ReadonlyArray<StartPlugin<unknown>> = readonly []>(
  options: CityLayerOptionsFor<P> = {}
): Layer.Layer<City, CityBuildError | RequiredStartFailure<P> | ConfigError.ConfigError, StartRequirements<P>> =>
  Layer.unwrapEffect(
    Effect.map(CityConfig.config, (fromEnv) => {
      const config = CityConfig.resolve({ ...fromEnv, ...options })
      return Layer.scoped(City, buildFor(Layer.succeed(CityConfig.CityConfig, config), options))
    })
  )
