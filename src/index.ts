/**
 * effect-city: the whole lifecycle of plugins for agent hosts.
 *
 * ```ts
 * import { City, Plugin } from "effect-city"
 * ```
 * @since 0.1.0
 */
export * as Admission from "./services/city/Admission.ts"
export * as City from "./city.ts"
export * as CityConfig from "./services/city/CityConfig.ts"
export * as Contributions from "./services/Contributions.ts"
export * as Errors from "./schema/Errors.ts"
export * as ExecutionLeases from "./services/city/ExecutionLeases.ts"
export * as ExecutionView from "./services/city/ExecutionView.ts"
export * as KeyedResources from "./services/KeyedResources.ts"
export * as Plugin from "./services/Plugin.ts"
export * as PluginContext from "./services/PluginContext.ts"
export * as PluginLifecycleContext from "./services/PluginLifecycleContext.ts"
export * as PluginName from "./schema/PluginName.ts"
export * as PluginRegistry from "./services/city/PluginRegistry.ts"
export * as PluginSnapshot from "./schema/PluginSnapshot.ts"
export * as Sessions from "./services/city/Sessions.ts"
export * as Workspaces from "./services/city/Workspaces.ts"

// Capabilities: declarations, peers and endpoints, provisioning commands, the lifecycle log.
export * as CapabilitiesLive from "./layers/CapabilitiesLive.ts"
export * as CapabilityErrors from "./schema/CapabilityErrors.ts"
export * as Capabilities from "./services/capabilities/Capabilities.ts"
export * as CommandRunner from "./services/capabilities/CommandRunner.ts"
export * as Declaration from "./schema/Declaration.ts"
export * as Host from "./services/capabilities/Host.ts"
export * as HostConfig from "./schema/HostConfig.ts"
export * as LifecycleLog from "./services/capabilities/LifecycleLog.ts"
export * as Occasion from "./schema/Occasion.ts"
export * as Outcome from "./schema/Outcome.ts"
export * as Peer from "./schema/Peer.ts"
export * as Peers from "./services/capabilities/Peers.ts"
export * as Provisioner from "./services/capabilities/Provisioner.ts"
export * as StateRoot from "./services/capabilities/StateRoot.ts"
