/**
 * The `City` namespace of the public API: the service tag, its layers and its types in one place,
 * so that `City.City` is the tag and `City.layer(options)` builds it. This module declares: the
 * options, the build failures and the signatures of `make`, `layer` and `layerConfig` are here, the
 * other public types in the modules of services/city/ it re-exports, and the City's assembly in
 * services/city/internal/city.ts.
 * @since 0.1.0
 */
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type {
  RegistryError
} from "./schema/Errors.ts"
import * as CityConfig from "./services/city/CityConfig.ts"
import { City, type CityShape } from "./services/city/CityService.ts"
import * as internal from "./services/city/internal/city.ts"
import type { CheckedStartPlugins, RequiredStartFailure, StartPlugin, StartRequirements } from "./services/city/StartPlugins.ts"

export { City, type CityCalls, type CityShape } from "./services/city/CityService.ts"
export type { CityOptions } from "./services/city/CityConfig.ts"
export { CloseFailure, ClosedPlugin, CloseReport } from "./schema/CloseReport.ts"
export { PluginName } from "./schema/PluginName.ts"
export { PluginSnapshot, PluginStatus, type SnapshotChange } from "./schema/PluginSnapshot.ts"
export type {
  CheckedStartPlugins,
  NoStartPluginProvides,
  RequiredStartFailure,
  StartPlugin,
  StartRequirements
} from "./services/city/StartPlugins.ts"
export type { AddOptions } from "./services/city/PluginAdd.ts"
export type { Removal } from "./services/city/LeasedDisposal.ts"
export type { SystemBlock, Calls, Invoke } from "./services/city/Calls.ts"
export type { Agent, AgentsShape } from "./services/city/Sessions.ts"
export type { Session, SessionStatus, StepView, Turn, TurnSkills } from "./services/city/Session.ts"
export type { Workspace, WorkspacesShape } from "./services/city/Workspaces.ts"
export type { ExecutionView, PluginView } from "./services/city/ExecutionView.ts"

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
export type CityBuildError = RegistryError

/**
 * Builds a City in the current Scope; closing the Scope runs `city.close` and logs its failure,
 * unless a caller of `city.close` already received it. Fails as `City.layer` does.
 * @since 0.1.0
 * @category constructors
 */
export const make = <const P extends ReadonlyArray<StartPlugin<unknown>> = readonly []>(
  options: CityLayerOptionsFor<P> = {}
): Effect.Effect<CityShape, CityBuildError | RequiredStartFailure<P>, Scope.Scope | StartRequirements<P>> =>
  internal.build<P>(options, options.plugins)

/**
 * The City as a Layer, on the given options: the City and nothing else. It reads no file of the
 * state root: an application that embeds a City and never provisions needs no `host.json`. One
 * that provisions composes the capability services beside it on the same root:
 * `Layer.merge(City.layer({ root }), CapabilityServices.layer({ root }))`.
 *
 * Its core is composed in acquisition order Workspaces → PluginRegistry → ExecutionLeases →
 * Sessions, so closing releases it in reverse: Sessions stop admitting, running Steps drain (then
 * are interrupted), plugins are disposed, Workspaces are released (docs/city-plugin-lifecycle.md:
 * "city.close() stops Sessions before releasing Plugins and Workspaces").
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
 * import { City } from "effect-city"
 * import { Plugin } from "effect-city/plugin"
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
    Effect.map(CityConfig.config, (fromEnv) => Layer.scoped(City, internal.build<P>({ ...fromEnv, ...options }, options.plugins)))
  )
