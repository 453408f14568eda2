/**
 * The README's loader snippet (the region below; the tests check that the README shows
 * exactly this, and the type-check of the tests compiles it). Not run by the tests: the loader's own
 * acceptance tests load the example plugin folders.
 */
// #region readme
import { Effect } from "effect"
import { Loader } from "effect-city"

// The loader over the City core; generation 1 loads while the Layer builds.
export const services = (root: string, bundledRoot: string) =>
  Loader.withCore({ root }, { bundledRoot, enabled: ["clock", "greeter"], licensed: ["greeter"] })

// The LoadReport of the current generation.
// PluginLoader: roots, discover, load, alerts, alertChanges · Generations: current, restart(reason)
// and the core's tags: PluginRegistry, Sessions, Workspaces, ExecutionLeases, ...
export const program = Effect.flatMap(Loader.Generations, (generations) => generations.current)

// Every plugin folder of both roots, from their manifests alone: no plugin code runs.
export const folders = Effect.flatMap(Loader.PluginLoader, (loader) => loader.discover)
// #endregion readme
