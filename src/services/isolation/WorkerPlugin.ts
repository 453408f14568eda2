/**
 * A plugin in a worker thread of its own, or in a child process of its own (docs/plugin-loader.md,
 * "Isolation"; docs/design.md, "Third-party plugins": "Isolation is a resource"): the worker is the
 * plugin's resource. A process runs the same main on the same protocol with the same contract;
 * only how it is spawned, capped and ended differs (internal/workerThread.ts).
 * Initialize starts the worker (`@effect/platform-node`'s NodeWorker under `@effect/platform`'s
 * serialized Worker) and runs the plugin's own initialize there; dispose runs its dispose there,
 * then ends the thread. The host holds proxies: each action, hook, system text and availability
 * check is a request to the worker, with the call's PluginContext as data.
 *
 * Containment (what the host's own thread cannot do for a plugin in it):
 * - **Liveness** (docs/plugin-loader.md, "Liveness"): the worker answers a heartbeat about every
 *   second whatever the plugin is doing. One silent for 3 s (a spin or a microtask loop, at
 *   initialize, in a call, in a timer or at dispose) is blamed by name and by the file and line of
 *   the code it runs (the V8 inspector pauses it), logged `plugin.unresponsive`, and its thread is
 *   ended: the calls it cut fail with `IsolationError` (reason `WorkerEnded`), never a hang.
 * - **A heap cap** (`resourceLimits.maxOldGenerationSizeMb` for a thread, `--max-old-space-size`
 *   for a process, {@link defaultLimits}; the host's Node options cannot raise it): a leak ends the
 *   worker with Node's out-of-memory error, never the host.
 * - **Memory outside the heap** (Buffers, ArrayBuffers: `external` in its heartbeat) is held to the
 *   same cap, and a process's resident size too: over it, the worker is ended
 *   (docs/plugin-loader.md, "What each mode caps").
 * - **`process.exit()` or an uncaught throw** in the plugin ends its worker thread only; in a
 *   process, so do `process.abort()`, a signal and a native crash, and what it spawned ends with it.
 * When the worker of a ready plugin ends on its own, the plugin tells the City through its
 * PluginLost service: it leaves the City with a snapshot saying why (`unresponsive` after a silence,
 * else `error`), and the registry starts it again with backoff (services/city/internal/pluginRecovery.ts).
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type { CallBase } from "../../schema/HostModel.ts"
import type * as Isolation from "../../schema/Isolation.ts"
import { make as makePlugin, type Plugin, type RequirementInput } from "../Plugin.ts"
import * as internal from "./internal/workerPlugin.ts"

/**
 * The limits of one isolated plugin.
 * @since 0.1.0
 * @category models
 */
export interface Limits {
  /** The worker's heap cap (V8's old generation), in MiB. */
  readonly heapMb: number
  /** How long the plugin's dispose may run in the worker before the thread is ended anyway. */
  readonly disposeTimeout: Duration.DurationInput
}

/**
 * The default limits: a 256 MiB heap (a worker at rest uses about 30 MiB, Effect and the platform
 * loaded in it: the rest is the plugin's) and a dispose of at most 10 seconds (the registry's
 * default). A call has no bound of its own: a call that waits while its worker answers its
 * heartbeat is not cut, as a call in the host's thread is not; a spin is ended by the heartbeat.
 * @since 0.1.0
 * @category constants
 */
export const defaultLimits: Limits = { heapMb: 256, disposeTimeout: "10 seconds" }

/**
 * What the worker-isolated plugin is made from.
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The plugin's name (the entry's Plugin, if it exports one, must carry it). */
  readonly name: string
  /** Its version. */
  readonly version: string
  /** The plugins it needs, as `Plugin.make` takes them. */
  readonly requires?: ReadonlyArray<RequirementInput> | undefined
  /** The entry's import URL. */
  readonly url: string
  /** The plugin folder (admitted for host-provided modules in the worker). */
  readonly folder: string
  /** Its heap cap and timeouts (see {@link defaultLimits}). */
  readonly limits: Limits
  /** A worker thread (the default) or a child process of its own. */
  readonly isolation?: "worker" | "process" | undefined
  /** A sibling's action, for the plugin's `invoke` (resolved at the time of the call). */
  readonly invoke: (base: CallBase, plugin: string, action: string, input: unknown) => Effect.Effect<unknown, unknown>
}

/**
 * A Plugin whose code runs in a worker thread (or a child process) of its own.
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Plugin<Isolation.IsolationError> => {
  const { name } = options
  return makePlugin({
    name,
    version: options.version,
    requires: options.requires,
    initialize: internal.initialize({
      name,
      version: options.version,
      url: options.url,
      folder: options.folder,
      kind: options.isolation ?? "worker",
      heapMb: options.limits.heapMb,
      disposeTimeout: Duration.decode(options.limits.disposeTimeout),
      invoke: options.invoke
    })
  })
}
