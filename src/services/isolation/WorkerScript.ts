/**
 * Where the main module of an isolated plugin's worker thread is (docs/plugin-loader.md,
 * "Isolation"): `dist/city-worker.mjs`, which scripts/bundle.mjs builds beside the binary's
 * bundle, in a checkout too. Apart from WorkerPlugin.ts so that the binary can name it without
 * loading the worker machinery at every start.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as path from "node:path"

/** This module's extension: `.ts` when it runs from the sources, `.js` once compiled. */
const ownExtension = path.extname(new URL(import.meta.url).pathname)

/**
 * The URL of the worker's main module. The default finds it from this module's place (the sources
 * or the compiled package); the `city` binary provides its own.
 * @since 0.1.0
 * @category tags
 */
export class WorkerScript extends Context.Reference<WorkerScript>()("effect-city/WorkerScript", {
  defaultValue: () => ({
    url: new URL(ownExtension === ".ts" ? "../../../dist/city-worker.mjs" : "../../city-worker.mjs", import.meta.url).href
  })
}) {}
