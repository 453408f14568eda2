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
 * What plugin code writes against, as `effect-city/plugin` exports it: Plugin, Contributions,
 * PluginContext, PluginLifecycleContext, KeyedResources and the host model.
 * @since 0.1.0
 */
export { Contributions, HostModel, KeyedResources, Plugin, PluginContext, PluginLifecycleContext } from "./plugin.ts"

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

/**
 * Tracing and metrics: the span names City uses and its Metrics (plugins by status, initialize and
 * dispose durations, live leases, Steps, provisioning outcomes).
 * @since 0.1.0
 */
export * as Observability from "./services/Observability.ts"

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
export * as DocumentStore from "./services/capabilities/DocumentStore.ts"
/** @since 0.1.0 */
export * as EndpointCalls from "./services/capabilities/EndpointCalls.ts"
/** @since 0.1.0 */
export * as EndpointRecords from "./services/capabilities/EndpointRecords.ts"
/** @since 0.1.0 */
export * as Host from "./services/capabilities/Host.ts"
/** @since 0.1.0 */
export * as HostConfig from "./schema/HostConfig.ts"
/** @since 0.1.0 */
export * as JointReport from "./services/capabilities/JointReport.ts"
/** @since 0.1.0 */
export * as LifecycleLog from "./services/capabilities/LifecycleLog.ts"
/** @since 0.1.0 */
export * as Occasion from "./schema/Occasion.ts"
/** @since 0.1.0 */
export * as Outcome from "./schema/Outcome.ts"
/** @since 0.1.0 */
export * as Overview from "./services/capabilities/Overview.ts"
/** @since 0.1.0 */
export * as Peer from "./schema/Peer.ts"
/** @since 0.1.0 */
export * as Peers from "./services/capabilities/Peers.ts"
/** @since 0.1.0 */
export * as Provisioner from "./services/capabilities/Provisioner.ts"
/** @since 0.1.0 */
export * as StateRoot from "./services/capabilities/StateRoot.ts"

// Plugin loader: plugin folders on disk, discovery, staging, generations (spec/plugin-loader-lifecycle.md).
/** @since 0.1.0 */
export * as Discovery from "./services/loader/Discovery.ts"
/** @since 0.1.0 */
export * as Generations from "./services/loader/Generations.ts"
/** @since 0.1.0 */
export * as Loader from "./layers/Loader.ts"
/** @since 0.1.0 */
export * as LoaderErrors from "./schema/LoaderErrors.ts"
/** @since 0.1.0 */
export * as LoadReport from "./schema/LoadReport.ts"
/** @since 0.1.0 */
export * as Manifest from "./schema/Manifest.ts"
/** @since 0.1.0 */
export * as PluginLoader from "./services/loader/PluginLoader.ts"
/** @since 0.1.0 */
export { Siblings } from "./plugin.ts"
/** @since 0.1.0 */
export * as Staging from "./services/loader/Staging.ts"

// Live application (issue 10): endpoint hosts, owed reloads and removals, fingerprints, the applier.
/** @since 0.1.0 */
export * as Applier from "./services/live/Applier.ts"
/** @since 0.1.0 */
export * as CitySessionsHost from "./services/live/CitySessionsHost.ts"
/** @since 0.1.0 */
export * as CommandsHost from "./services/live/CommandsHost.ts"
/** @since 0.1.0 */
export * as DaemonHostedHost from "./services/live/DaemonHostedHost.ts"
/** @since 0.1.0 */
export * as EndpointHost from "./services/live/EndpointHost.ts"
/** @since 0.1.0 */
export * as Fingerprints from "./services/live/Fingerprints.ts"
/** @since 0.1.0 */
export * as Live from "./schema/Live.ts"
/** @since 0.1.0 */
export * as LiveApplication from "./layers/LiveApplication.ts"
/** @since 0.1.0 */
export * as LiveJoints from "./services/live/LiveJoints.ts"
/** @since 0.1.0 */
export * as Reloads from "./services/live/Reloads.ts"
/** @since 0.1.0 */
export * as ScriptedHost from "./services/live/ScriptedHost.ts"
/** @since 0.1.0 */
export * as TurnInbox from "./services/live/TurnInbox.ts"
/** @since 0.1.0 */
export * as Watcher from "./services/live/Watcher.ts"
