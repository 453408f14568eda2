/**
 * The synchronous metric updates of the core's hot paths (the registry's snapshot updates, the
 * lease table, `turn.step`, a sweep's settled calls), apart from the public Observability module:
 * they are not API. Each says why the safe `Metric.update` cannot serve there.
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as MetricLabel from "effect/MetricLabel"
import { disposeDuration, initializeDuration, heldLeases, plugins, provisionings, steps } from "../Observability.ts"

const statusLabels = new Map<string, ReadonlyArray<MetricLabel.MetricLabel>>()
const labelsOf = (status: string) => {
  let labels = statusLabels.get(status)
  if (labels === undefined) statusLabels.set(status, labels = [MetricLabel.make("status", status)])
  return labels
}

/**
 * Moves one plugin from a status to another in {@link plugins} (`undefined`: not in the registry).
 * Synchronous, for the registry's snapshot updates.
 * @since 0.1.0
 * @category metrics
 */
export const unsafeStatusChanged = (previous: string | undefined, next: string | undefined): void => {
  if (previous === next) return
  // unsafe: called from the registry's synchronous snapshot updates, where no Effect runs.
  if (previous !== undefined) plugins.unsafeUpdate(-1, labelsOf(previous))
  if (next !== undefined) plugins.unsafeUpdate(1, labelsOf(next))
}

const noLabels: ReadonlyArray<MetricLabel.MetricLabel> = []

/**
 * One more (`1`) or one fewer (`-1`) live lease. Synchronous, for the lease table.
 * @since 0.1.0
 * @category metrics
 */
export const unsafeLeases = (delta: 1 | -1): void => heldLeases.unsafeUpdate(delta, noLabels)

/**
 * One more Step begun. Synchronous, for `turn.step`.
 * @since 0.1.0
 * @category metrics
 */
export const unsafeStep = (): void => steps.unsafeUpdate(1, noLabels)

const provisionedLabels = new Map<string, ReadonlyArray<MetricLabel.MetricLabel>>()

/**
 * Counts a provisioning call's outcome in {@link provisionings} (tagged `state` and `occasion`).
 * Synchronous, for the calls of a sweep: the labels of each pair are made once, and the same
 * array each time lets the metric find its entry without hashing the key again.
 * @since 0.1.0
 * @category metrics
 */
export const unsafeProvisioned = (state: string, occasion: string): void => {
  const key = `${state} ${occasion}`
  let labels = provisionedLabels.get(key)
  if (labels === undefined) {
    provisionedLabels.set(key, labels = [MetricLabel.make("state", state), MetricLabel.make("occasion", occasion)])
  }
  // unsafe: called from `settle`, a plain function (see EndpointCalls.ts).
  provisionings.unsafeUpdate(1, labels)
}

/**
 * Records how long a plugin's initialize or dispose took (`nanos`), successful or not.
 * Synchronous, for the registry's add and remove: `Metric.trackDuration` records only successes
 * and adds four Effect steps to each of them (with the log annotation, a fifth of a close).
 * @since 0.1.0
 * @category metrics
 */
export const unsafeLifecycleDuration = (which: "initialize" | "dispose", nanos: bigint): void => {
  // unsafe: recorded where an add's wait or a disposal ends, in no Effect step of its own.
  ;(which === "initialize" ? initializeDuration : disposeDuration).unsafeUpdate(Duration.nanos(nanos), noLabels)
}
