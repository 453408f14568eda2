/**
 * The load alert (docs/plugin-loader-lifecycle.md: "A skipped plugin is logged ... and the load
 * alert is synced"): the current set of load failures, observable.
 *
 * It is owned by the loader, not kept in the registry's snapshots: most skips happen before any
 * plugin instance exists (a bad manifest, a licence refusal, an import that throws), often under
 * a name that is not even a valid plugin name, and the registry only knows instances it tried to
 * initialize. Each failure reads like a registry snapshot (`status: "error"`, `last_error`, and
 * `source` naming the root and folder, `instance:/path/to/plugins/notes`), one per failed copy,
 * sorted by name then source. A name's failures are cleared when a later load of that name
 * succeeds (in the same pass from the other root, or in a later generation).
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type { PluginSnapshot } from "../../schema/PluginSnapshot.ts"

/**
 * The current load failures, kept as an observable alert.
 * @since 0.1.0
 * @category models
 */
export interface LoadAlertsShape {
  /** The current load failures. */
  readonly current: Effect.Effect<ReadonlyArray<PluginSnapshot>>
  /** The current load failures, now and after every change. */
  readonly changes: Stream.Stream<ReadonlyArray<PluginSnapshot>>
  /** Records a failed copy (replacing an earlier failure of the same copy). */
  readonly fail: (entry: { readonly name: string; readonly source: string; readonly version?: string | undefined; readonly reason: string }) => Effect.Effect<void>
  /** Clears every failure of `name`: it loaded. */
  readonly clear: (name: string) => Effect.Effect<void>
}

const byNameThenSource = (a: PluginSnapshot, b: PluginSnapshot) =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : a.source < b.source ? -1 : a.source > b.source ? 1 : 0

/**
 * A fresh, empty alert.
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<LoadAlertsShape> = Effect.map(
  SubscriptionRef.make<ReadonlyArray<PluginSnapshot>>([]),
  (ref): LoadAlertsShape => ({
    current: SubscriptionRef.get(ref),
    changes: ref.changes,
    fail: ({ name, reason, source, version }) =>
      Effect.flatMap(Clock.currentTimeMillis, (ms) =>
        SubscriptionRef.update(ref, (alerts) => {
          const previous = alerts.find((a) => a.name === name && a.source === source)
          const alert: PluginSnapshot = {
            name,
            status: "error",
            last_error: reason,
            ...(version === undefined ? {} : { version }),
            source,
            attempts: (previous?.attempts ?? 0) + 1,
            updated_at: new Date(ms).toISOString()
          }
          return [...alerts.filter((a) => a !== previous), alert].sort(byNameThenSource)
        })),
    clear: (name) =>
      SubscriptionRef.update(ref, (alerts) => (alerts.some((a) => a.name === name) ? alerts.filter((a) => a.name !== name) : alerts))
  })
)
