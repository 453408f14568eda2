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
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Layer from "effect/Layer"
import type { CityClosed } from "../schema/Errors.ts"
import type { PluginLoadError } from "../schema/LoaderErrors.ts"
import type { City } from "../services/city/CityService.ts"
import type * as CityConfig from "../services/city/CityConfig.ts"
import type { Generations } from "../services/loader/Generations.ts"
import * as PluginLoaderService from "../services/loader/PluginLoader.ts"
import * as LoaderCore from "./internal/loaderCore.ts"

export { Generations, type GenerationsShape } from "../services/loader/Generations.ts"
export type { LoaderOptions } from "../services/loader/PluginLoader.ts"
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
 * The City core with the loader on top: `PluginLoader` and `Generations`. It needs a
 * `FileSystem` (on Node, `NodeContext.layer` or `NodeFileSystem.layer` from
 * `@effect/platform-node`): the loader reads manifests, `plugins.json` and plugin folders through
 * it. Closing its Scope closes in reverse order: the loader, Sessions, plugins, Workspaces.
 * @since 0.1.0
 * @category layers
 */
export const withCore: (
  city: CityConfig.CityOptions,
  options: PluginLoaderService.LoaderOptions
) => Layer.Layer<PluginLoaderService.PluginLoader | Generations, CityClosed | PluginLoadError, FileSystem.FileSystem> =
  LoaderCore.withCore

/**
 * `withCore`, plus the `City` service over the same core: `city.agents`, `city.workspaces`,
 * `city.calls` and Turns of its Sessions see the loader's current generation. Generation 1 loads
 * while the Layer builds. It needs a `FileSystem`, as `withCore` does.
 *
 * `city.close` closes it all once (the loader, Sessions, plugins, Workspaces) and returns its
 * `CloseReport`, or fails with CityCloseError carrying that report with every cleanup failure;
 * concurrent and later calls share that one result. Closing the Layer's Scope logs the failure
 * unless a caller of `city.close` received it.
 * @since 0.1.0
 * @category layers
 */
export const city: (
  cityOptions: CityConfig.CityOptions,
  options: PluginLoaderService.LoaderOptions
) => Layer.Layer<City | PluginLoaderService.PluginLoader | Generations, CityClosed | PluginLoadError, FileSystem.FileSystem> =
  LoaderCore.city
