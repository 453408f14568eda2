/**
 * effect-city: the whole lifecycle of plugins for agent hosts.
 *
 * ```ts
 * import { City, Plugin } from "effect-city"
 * ```
 *
 * Plugin code imports from `effect-city/plugin` (src/plugin.ts), which holds the plugin-author part
 * of this surface without the City, Node or the capability code.
 * @since 0.1.0
 */

/**
 * The City: its tag, `City.layer`, `City.make`, and the host model's types.
 * @since 0.1.0
 */
export * as City from "./city.ts"

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
 * Plugin-owned resources keyed by their domain owner, all closed at dispose.
 * @since 0.1.0
 */
export * as KeyedResources from "./services/KeyedResources.ts"

/**
 * The host model as plain data, as a PluginContext carries it.
 * @since 0.1.0
 */
export * as HostModel from "./schema/HostModel.ts"

/**
 * `requestReload`'s changes: a skills reload or a restart.
 * @since 0.1.0
 */
export * as PluginChange from "./schema/PluginChange.ts"

/**
 * The City core's errors, each a `Schema.TaggedError`.
 * @since 0.1.0
 */
export * as Errors from "./schema/Errors.ts"

/**
 * The plugin name rule.
 * @since 0.1.0
 */
export * as PluginName from "./schema/PluginName.ts"

/**
 * What `city.plugins.snapshots` and `city.plugins.changes` show.
 * @since 0.1.0
 */
export * as PluginSnapshot from "./schema/PluginSnapshot.ts"

// Capabilities: declarations, peers and endpoints, provisioning commands, the lifecycle log.
/** @since 0.1.0 */
export * as CapabilitiesLive from "./layers/CapabilitiesLive.ts"
/** @since 0.1.0 */
export * as CapabilityErrors from "./schema/CapabilityErrors.ts"
/** @since 0.1.0 */
export * as Capabilities from "./services/capabilities/Capabilities.ts"
/** @since 0.1.0 */
export * as CommandRunner from "./services/capabilities/CommandRunner.ts"
/** @since 0.1.0 */
export * as Declaration from "./schema/Declaration.ts"
/** @since 0.1.0 */
export * as Host from "./services/capabilities/Host.ts"
/** @since 0.1.0 */
export * as HostConfig from "./schema/HostConfig.ts"
/** @since 0.1.0 */
export * as LifecycleLog from "./services/capabilities/LifecycleLog.ts"
/** @since 0.1.0 */
export * as Occasion from "./schema/Occasion.ts"
/** @since 0.1.0 */
export * as Outcome from "./schema/Outcome.ts"
/** @since 0.1.0 */
export * as Peer from "./schema/Peer.ts"
/** @since 0.1.0 */
export * as Peers from "./services/capabilities/Peers.ts"
/** @since 0.1.0 */
export * as Provisioner from "./services/capabilities/Provisioner.ts"
/** @since 0.1.0 */
export * as StateRoot from "./services/capabilities/StateRoot.ts"
