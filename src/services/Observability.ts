/**
 * What City shows to tracing and metrics. Spans are made where the work is (`Effect.withSpan` at the
 * call sites, names below); this module holds their names and the Metrics, so a dashboard reads one
 * list. Everything here loads only `effect`.
 *
 * Spans (each with the attributes that apply: `plugin`, `action`, `point`, `agent`, `session`,
 * `turn`, `step`, `capability`, `endpoint`, `occasion`, `outcome`):
 * `city.plugin.initialize`, `city.plugin.dispose`, `city.turn`, `city.step`, `city.invoke`,
 * `city.runHooks`, `city.system`, `city.availability`, `city.joint`, `city.provision`.
 *
 * Decisions:
 * - **A Step's span costs nothing unless someone traces.** `city.turn` and `city.step` are made only
 *   when the Turn's fiber has a tracer that is not Effect's default one (which exports nothing),
 *   decided once when the Turn begins: a Step is on the hot path (bench/leases.bench.ts), and a
 *   span per Step costs about as much as the Step itself. Without a tracer, the Step's body sees
 *   its caller's span. With a tracer, a Step's span is made without a captured stack trace (the
 *   Error it needs costs about a third of the traced Step). Plugin calls' spans are always made.
 * - **Lifecycle spans likewise**: `city.plugin.initialize` and `city.plugin.dispose` are made only
 *   under an installed tracer, without a captured stack trace (it would point
 *   into the registry, not at the plugin): adding and removing a plugin is on a measured path
 *   (bench/registry.bench.ts), and the two spans cost about a fifth of it under the default tracer.
 * - **Provisioning calls likewise**: a sweep makes a `city.provision` span per call only under an
 *   installed tracer (decided once per joint); the `city.joint` span is always made. A sweep runs
 *   hundreds of calls (bench/sweep.bench.ts), and their spans were a fifth of the `city` process's
 *   CPU. `city_provisionings` counts every call either way, with its labels made once per
 *   (state, occasion).
 * - **Gauges that go up and down are counters**: `city_plugins` (tagged `status`) and
 *   `city_leases_held` are non-incremental counters updated by +1/-1 where the state changes, so
 *   reading them costs nothing and updating them is O(1).
 * @since 0.1.0
 */
import * as Metric from "effect/Metric"

/**
 * The span names, one per kind of work.
 * @since 0.1.0
 * @category tracing
 */
export const spans = {
  initialize: "city.plugin.initialize",
  dispose: "city.plugin.dispose",
  turn: "city.turn",
  step: "city.step",
  invoke: "city.invoke",
  runHooks: "city.runHooks",
  system: "city.system",
  availability: "city.availability",
  joint: "city.joint",
  provision: "city.provision"
} as const

/**
 * Plugins by status (`initializing`, `ready`, `error`, `disposing`): a counter per `status` tag that
 * goes up and down with the registry's snapshots.
 * @since 0.1.0
 * @category metrics
 */
export const plugins = Metric.counter("city_plugins", { description: "plugins in the registry, by status" })

const durationBoundaries = [1, 5, 10, 50, 100, 500, 1_000, 5_000, 10_000, 30_000]

/**
 * How long a plugin's initialize took, in milliseconds (successful or not).
 * @since 0.1.0
 * @category metrics
 */
export const initializeDuration = Metric.timerWithBoundaries(
  "city_plugin_initialize_duration",
  durationBoundaries,
  "duration of a plugin's initialize"
)

/**
 * How long a plugin's dispose took, in milliseconds (successful or not).
 * @since 0.1.0
 * @category metrics
 */
export const disposeDuration = Metric.timerWithBoundaries(
  "city_plugin_dispose_duration",
  durationBoundaries,
  "duration of a plugin's dispose"
)

/**
 * Execution leases held now (Steps running or held by their Turn, `city.calls` calls, `acquire`).
 * @since 0.1.0
 * @category metrics
 */
export const heldLeases = Metric.counter("city_leases_held", { description: "execution leases held now" })

/**
 * Owed reloads now: endpoints whose requested reload number is above the applied one, as the last
 * listing of `state/reloads/` found them.
 * @since 0.1.0
 * @category metrics
 */
export const owedReloads = Metric.gauge("city_reloads_owed", { description: "endpoints with a reload owed" })

/**
 * Owed removals now (remove-runtime on a busy endpoint), as the last listing found them.
 * @since 0.1.0
 * @category metrics
 */
export const owedRemovals = Metric.gauge("city_removals_owed", { description: "endpoints with a removal owed" })

/**
 * Steps begun.
 * @since 0.1.0
 * @category metrics
 */
export const steps = Metric.counter("city_steps", { description: "Steps begun", incremental: true })

/**
 * Provisioning calls, by `state` (`ok`, `failed`, `timeout`, `not-executable`) and `occasion`.
 * @since 0.1.0
 * @category metrics
 */
export const provisionings = Metric.counter("city_provisionings", {
  description: "provisioning calls, by outcome state and occasion",
  incremental: true
})
