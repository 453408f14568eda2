/**
 * The loader over the City core, with every tag of the core in its output (the `city` binary and
 * the tests reach the registry, leases and Sessions through them); the public face, Loader.ts,
 * gives `withCore` and `city` with the public services only.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { City } from "../../services/city/CityService.ts"
import * as CityConfig from "../../services/city/CityConfig.ts"
import { core, fromCore } from "../../services/city/internal/city.ts"
import * as GenerationsService from "../../services/loader/Generations.ts"
import * as Workers from "../../services/isolation/Workers.ts"
import * as PluginLoaderService from "../../services/loader/PluginLoader.ts"

/**
 * Requires the core's PluginRegistry, ExecutionLeases, Sessions, Closing, CityConfig and StateRoot.
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: PluginLoaderService.LoaderOptions) =>
  GenerationsService.layer.pipe(Layer.provideMerge(PluginLoaderService.layer(options)), Layer.provideMerge(Workers.layer))

/**
 * The City core (City.core) with the loader on top: every core tag plus PluginLoader and
 * Generations. Closing its Scope closes in reverse order: the loader, Sessions, plugins, Workspaces.
 * @since 0.1.0
 * @category layers
 */
export const withCore = (city: CityConfig.CityOptions, options: PluginLoaderService.LoaderOptions) =>
  layer(options).pipe(Layer.provideMerge(core(CityConfig.layer(city))))

/**
 * `withCore`, plus the `City` service over the same core: `city.agents`, `city.workspaces`,
 * `city.calls` and Turns of its Sessions see the loader's current generation. Generation 1 loads
 * while the Layer builds.
 *
 * `city.close` closes it all once (the loader, Sessions, plugins, Workspaces) and returns its
 * `CloseReport`, or fails with CityCloseError carrying that report with every cleanup failure;
 * concurrent and later calls share that one result. Closing the Layer's Scope logs the failure
 * unless a caller of `city.close` received it.
 * @since 0.1.0
 * @category layers
 */
export const city = (cityOptions: CityConfig.CityOptions, options: PluginLoaderService.LoaderOptions) =>
  Layer.scopedContext(
    Effect.map(fromCore(withCore(cityOptions, options)), ({ city, context }) => Context.add(context, City, city))
  )
