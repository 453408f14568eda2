/**
 * The loader snippet of docs/plugin-loader.md (the region below; the tests check that the guide
 * shows exactly this, and the type-check of the tests compiles it). Run by the loader's
 * acceptance tests, on the example plugin folders.
 */
// #region readme
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { Loader } from "effect-city"

// The loader over the City core; generation 1 loads while the Layer builds. It reads manifests,
// plugins.json and plugin folders through a FileSystem: on Node, NodeContext.layer gives it.
export const services = (root: string, bundledRoot: string) =>
  Loader.withCore({ root }, { bundledRoot, enabled: ["clock", "greeter"], licensed: ["greeter"] }).pipe(
    Layer.provide(NodeContext.layer)
  )

// The LoadReport of the current generation.
// PluginLoader: roots, discover, load, alerts, alertChanges · Generations: current, restart(reason)
export const program = Effect.flatMap(Loader.Generations, (generations) => generations.current)

// Every plugin folder of both roots, from their manifests alone: no plugin code runs.
export const folders = Effect.flatMap(Loader.PluginLoader, (loader) => loader.discover)

// Run on Node: generation 1's LoadReport; the Layer's Scope closes (the loader, then the core).
export const main = (root: string, bundledRoot: string) =>
  Effect.runPromise(Effect.scoped(Effect.provide(program, services(root, bundledRoot))))
// #endregion readme
