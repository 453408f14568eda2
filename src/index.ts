/**
 * effect-city: the whole lifecycle of plugins for agent hosts.
 *
 * ```ts
 * import { City } from "effect-city"
 * import { Plugin } from "effect-city/plugin"
 * ```
 *
 * What plugin code writes against (Plugin, Contributions, PluginContext, PluginLifecycleContext,
 * KeyedResources, Siblings, the host model) is exported by `effect-city/plugin` (src/plugin.ts)
 * only, once: a host imports it from there too.
 * @module
 * @since 0.1.0
 */

/**
 * The City: its tag, `City.layer`, `City.make`, the host model's types, the plugin name rule
 * (`PluginName`), what `city.plugins.snapshots` and `changes` show, and what a close did.
 * @since 0.1.0
 */
export * as City from "./City.ts"

/**
 * Running a program as a Node process: `NodeRuntime.runMain` plus a deadline on the finalizers a
 * SIGINT/SIGTERM starts (a stuck cleanup cannot keep the process alive).
 * @since 0.1.0
 */
export { runMain, type RunMainOptions } from "./layers/RunMain.ts"

/**
 * The City core's errors, each a `Schema.TaggedError`.
 * @since 0.1.0
 */
export * as Errors from "./schema/Errors.ts"


/**
 * Tracing and metrics: the span names City uses and its Metrics (plugins by status, initialize and
 * dispose durations, live leases, Steps, provisioning outcomes).
 * @since 0.1.0
 */
export * as Observability from "./services/Observability.ts"

// Capabilities: declarations, peers and endpoints, provisioning sweeps and their listings.
/**
 * The capability part as one Layer: state root, host configuration, stores, command runner, log,
 * calls, joints and views.
 * @since 0.1.0
 */
export * as CapabilityServices from "./layers/CapabilityServices.ts"
/**
 * Every failure of the capability part a caller can act on.
 * @since 0.1.0
 */
export * as CapabilityErrors from "./schema/CapabilityErrors.ts"
/**
 * What a user of capabilities writes against: the services `Provisioner`, `Capabilities`, `Peers`
 * and `Listings`, the documents `Declaration`, `Peer` and `HostConfig`, and what a joint reports.
 * @since 0.1.0
 */
export * as Capabilities from "./Capabilities.ts"

// Plugin loader: plugin folders on disk, discovery, staging, generations (docs/plugin-loader-lifecycle.md).
/**
 * The plugin loader as a Layer over the City core: `PluginLoader` and `Generations`.
 * @since 0.1.0
 */
export * as Loader from "./layers/Loader.ts"
/**
 * Why the loader skipped a plugin folder, and why a restart was not applied.
 * @since 0.1.0
 */
export * as LoaderErrors from "./schema/LoaderErrors.ts"
/**
 * A plugin in a worker thread (or a child process) of its own: its entry imported and its initialize
 * run there, its contributions reached through proxies; a spin, a leak or an exit in it ends only
 * its worker.
 * @since 0.1.0
 */
export * as WorkerPlugin from "./services/isolation/WorkerPlugin.ts"

// Live application (docs/live-application.md): endpoint hosts and the live Layer.
/**
 * Live application as data: endpoint status, per-endpoint reports, the owed-work record, fingerprints, the failures.
 * @since 0.1.0
 */
export * as Live from "./schema/Live.ts"
/**
 * Live application as one Layer: owed-work store, fingerprints, applier and live joints over an
 * EndpointHost; the endpoint host's Tag (`EndpointHost`) and the "City sessions" host
 * (`CitySessionsHost`, `citySessionsHost`), each endpoint hosted as a City Session in this process.
 * @since 0.1.0
 */
export * as LiveApplication from "./layers/LiveApplication.ts"
