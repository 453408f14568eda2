/**
 * The plugin loader as a Layer over the City core: `PluginLoader` (one load pass, discovery, the
 * load alert) and `Generations` (generation 1 at start, skills reload, restart by generation).
 * Built after the core, so it is released first: a restart in flight ends before Sessions stop.
 * @since 0.1.0
 */
import * as Layer from "effect/Layer"
import * as CityConfig from "../services/city/CityConfig.ts"
import { core } from "./City.ts"
import * as Generations from "../services/loader/Generations.ts"
import * as PluginLoader from "../services/loader/PluginLoader.ts"

/**
 * Requires the core's PluginRegistry, ExecutionLeases, Sessions, CityState and CityConfig.
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: PluginLoader.LoaderOptions) =>
  Generations.layer.pipe(Layer.provideMerge(PluginLoader.layer(options)))

/**
 * The City core (City.core) with the loader on top: every core tag plus PluginLoader and
 * Generations. Closing its Scope closes in reverse order: the loader, Sessions, plugins, Workspaces.
 * @since 0.1.0
 * @category layers
 */
export const withCore = (city: CityConfig.CityOptions, options: PluginLoader.LoaderOptions) =>
  layer(options).pipe(Layer.provideMerge(core(CityConfig.layer(city))))
