/**
 * The plugin-author entry point, `effect-city/plugin`: exactly what plugin code writes against.
 * It loads Effect and nothing else (no `@effect/platform-node`, no file locks, no capability
 * code), so a plugin folder's entry imports only from here.
 *
 * ```ts
 * import { Contributions, Plugin, PluginContext } from "effect-city/plugin"
 * ```
 * @module
 * @since 0.1.0
 */

/**
 * Plugins as Scope-managed resources: `Plugin.make`, `Plugin.fromPromise`.
 * @since 0.1.0
 */
export * as Plugin from "./services/Plugin.ts"

/**
 * What a plugin gives the host: actions, hooks, system text, availability, skills.
 * @since 0.1.0
 */
export * as Contributions from "./services/Contributions.ts"

/**
 * The per-call context, projected fresh for every Action, Hook, System and Availability call.
 * @since 0.1.0
 */
export * as PluginContext from "./services/PluginContext.ts"

/**
 * The stable per-instance context given to initialize and dispose.
 * @since 0.1.0
 */
export * as PluginLifecycleContext from "./services/PluginLifecycleContext.ts"

/**
 * Plugin-owned resources keyed by their domain owner (an Agent, an account), all closed at dispose.
 * @since 0.1.0
 */
export * as KeyedResources from "./services/KeyedResources.ts"

/**
 * Sibling access at the time of use, for plugins the loader loads.
 * @since 0.1.0
 */
export * as Siblings from "./services/Siblings.ts"

/**
 * The host model as plain data: agent, workspace, session and turn as a PluginContext carries them.
 * @since 0.1.0
 */
export * as HostModel from "./schema/HostModel.ts"

/**
 * The errors a plugin raises or meets when it calls a sibling through its context.
 * @since 0.1.0
 */
export {
  HookFailed,
  PluginCallbackFailed,
  ActionRejected
} from "./schema/Errors.ts"

/**
 * What a `register(ctx)` entry (a plugin folder written without Effect) receives and exports: the
 * registration context, the per-call context of its handlers, and the function's type.
 * @since 0.1.0
 */
export type { RegisterCallContext, RegisterContext, RegisterFunction } from "./services/RegisterContext.ts"
