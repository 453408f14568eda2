/**
 * The owed-work gauges set from a listing of the owed records (docs/capability-plugin-lifecycle.md:
 * owed reloads and removals), apart from the public Observability module, which declares them.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import { owedReloads, owedRemovals } from "../../Observability.ts"

/**
 * Sets the owed-work gauges from a listing of the owed records.
 * @since 0.1.0
 * @category internals
 */
export const recordOwed = (
  records: ReadonlyArray<{ readonly requested: number; readonly applied: number; readonly removal?: unknown }>
): Effect.Effect<void> =>
  Effect.zipRight(
    Metric.set(owedReloads, records.filter((r) => r.requested > r.applied).length),
    Metric.set(owedRemovals, records.filter((r) => r.removal !== undefined).length)
  )
