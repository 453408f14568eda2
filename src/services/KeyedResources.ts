/**
 * Plugin-owned keyed resources (spec: "Long-lived connections, timers, schedulers, and workers
 * must follow their actual domain ownership. A browser Provider may be created lazily for an
 * Agent, a chat channel may be keyed by account ... dispose must ultimately close every resource").
 *
 * `KeyedResources.make(acquire)` inside a plugin's initialize gives a map whose entry for a key
 * is acquired on first `get(key)` and kept (reference-counted, never evicted while idle) until
 * `invalidate(key)` or, at the latest, the plugin's dispose, which closes every entry; a failure
 * closing one never skips the others. Built on `RcMap` with an infinite idle time.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as RcMap from "effect/RcMap"
import type * as Scope from "effect/Scope"

// `acquire` runs in the entry's own Scope: what it acquires with `Effect.acquireRelease` is
// released when that entry closes.

export interface KeyedResources<K, A, E> {
  /** The resource for `key`, acquired on first use; concurrent first uses share one acquisition. */
  readonly get: (key: K) => Effect.Effect<A, E>
  /** The keys with a live resource. */
  readonly keys: Effect.Effect<ReadonlyArray<K>>
  /** Closes the resource for `key` now (it is acquired again on next use). */
  readonly invalidate: (key: K) => Effect.Effect<void>
}

export const make = <K, A, E, R>(
  acquire: (key: K) => Effect.Effect<A, E, R>
): Effect.Effect<KeyedResources<K, A, E>, never, Scope.Scope | R> =>
  Effect.map(
    RcMap.make({ lookup: acquire, idleTimeToLive: Infinity }),
    (map): KeyedResources<K, A, E> => ({
      get: (key) => Effect.scoped(RcMap.get(map, key)),
      keys: Effect.map(RcMap.keys(map), (keys) => Array.from(keys)),
      invalidate: (key) => RcMap.invalidate(map, key)
    })
  )
