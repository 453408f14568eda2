/**
 * The plugin loader as a Layer over the City core: `PluginLoader` (one load pass, discovery, the
 * load alert) and `Generations` (generation 1 at start, skills reload, restart by generation), and
 * what a load did, `LoadReport` (its Schema: it encodes to plain JSON and prints on one line), and
 * the plugin manifest's Schema, `Manifest` (`city-plugin.json`).
 * Built after the core, so it is released first: a restart in flight ends before Sessions stop.
 *
 * `city(cityOptions, loaderOptions)` is the same, plus the `City` façade over that very core, so
 * what a host runs through `City` (the daemon's City Sessions) sees the loader's generations
 * (docs/plugin-loader-lifecycle.md: "Every daemon start builds the registry generation from
 * disk").
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { City } from "../services/city/CityService.ts"
import * as CityConfig from "../services/city/CityConfig.ts"
import { core, fromCore } from "../services/city/internal/city.ts"
import * as GenerationsService from "../services/loader/Generations.ts"
import * as Workers from "../services/isolation/Workers.ts"
import * as PluginLoaderService from "../services/loader/PluginLoader.ts"

export { Generations, type GenerationsShape } from "../services/loader/Generations.ts"
export { LoadReport } from "../schema/LoadReport.ts"
export { Manifest } from "../schema/Manifest.ts"

/**
 * The loader's service: its roots, `discover` (every plugin folder of the roots, from their
 * manifests alone: no plugin code runs), one load pass, the load alert.
 * @since 0.1.0
 * @category tags
 */
export const PluginLoader = PluginLoaderService.PluginLoader

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
