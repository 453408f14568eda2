/**
 * How a ready plugin tells the City that it can no longer serve (docs/plugin-loader.md,
 * "Isolation": a worker that ended on its own). The registry gives each plugin's initialize one,
 * bound to its name, as it gives SiblingViews: `lost(reason)` takes the plugin out of the next
 * view, disposes it after the last lease on it, and leaves an `error` snapshot with the reason, so
 * a later add is a retry (PluginRegistry's `crashed`). Calling it before the plugin is ready, or
 * while the City closes, does nothing.
 *
 * A plugin reads it with `Effect.serviceOption`, so one run outside a registry (a test harness)
 * still initializes. Not for plugin authors: a plugin's own failure is its action's error.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"

/**
 * The plugin's way to say it is lost, bound to its name.
 * @since 0.1.0
 * @category tags
 */
export class PluginLiveness extends Context.Tag("effect-city/PluginLiveness")<PluginLiveness, {
  /**
   * Takes the plugin out of the City with a snapshot saying `reason`: `unresponsive` when it was
   * ended for not answering, else `error`; the registry then starts it again with backoff.
   */
  readonly lost: (reason: string, status?: "error" | "unresponsive") => Effect.Effect<void>
}>() {}
