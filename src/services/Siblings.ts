/**
 * Sibling access at the time of use (docs/plugin-loader-lifecycle.md: "Do not cache a control,
 * configuration object, or other live registry value; resolve sibling controls at the time of
 * use").
 *
 * A loaded plugin may take `Siblings` in its initialize and keep it: the object is stable, and
 * each `invoke` resolves the sibling from the execution view current at that call (under a lease
 * of its own), with the calling handler's agent, workspace, session and turn. So after a restart
 * it reaches the new generation, never a disposed instance. `invoke` needs the caller's
 * PluginContext: it is for handlers (actions, hooks, system, availability).
 *
 * The loader provides it to every plugin it loads (both entry styles; `register(ctx)` handlers get
 * it as `call.invoke`).
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { PluginContext } from "./PluginContext.ts"

/**
 * What `Siblings` offers a plugin.
 * @since 0.1.0
 * @category models
 */
export interface SiblingsShape {
  /** Calls `action` of the sibling `plugin` as it is in the current view. */
  readonly invoke: (plugin: string, action: string, input?: unknown) => Effect.Effect<unknown, unknown, PluginContext>
}

/**
 * The Siblings service, provided by the loader to the plugins it loads.
 * @since 0.1.0
 * @category tags
 */
export class Siblings extends Context.Tag("effect-city/Siblings")<Siblings, SiblingsShape>() {}
