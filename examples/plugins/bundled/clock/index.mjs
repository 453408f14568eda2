// An Effect-style plugin: the default export is a Plugin made with Plugin.make. It imports only
// `effect` and the plugin-author entry point `effect-city/plugin` (docs/plugin-loader.md).
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { Contributions, Plugin, PluginContext, PluginLifecycleContext } from "effect-city/plugin"

export default Plugin.make({
  name: "clock",
  initialize: Effect.gen(function*() {
    const lifecycle = yield* PluginLifecycleContext.PluginLifecycleContext
    // Acquired here, released at dispose: closing the plugin's Scope *is* dispose.
    yield* Effect.acquireRelease(lifecycle.log.info("clock wound up"), () => lifecycle.log.info("clock stopped"))
    return {
      actions: {
        now: Contributions.action({
          input: Schema.Void,
          handler: () => Effect.map(PluginContext.PluginContext, (ctx) => `12:00 for ${ctx.agent.id}`)
        })
      }
    }
  })
})
