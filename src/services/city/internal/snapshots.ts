/**
 * The registry's observable state (spec: "City retains an observable status: "error" snapshot with
 * last_error in city.plugins.snapshots()"): one snapshot per live or failed plugin, kept in a
 * persistent map sorted by name (code-unit order), and a stream of changes.
 *
 * A change costs O(1) here (a HAMT update) and is published as itself (`Updated` / `Removed`), never as the
 * whole list, so a watcher of `changes` costs the registry O(1) per change whatever the number of
 * plugins. A subscriber first receives the current snapshots, then every change.
 *
 * Beside it, the snapshots' names by their lower-case form (caseKey.ts), so that `holder` finds in O(1) the
 * registered name another one equals ignoring case (the plugin-name rule, schema/PluginName.ts).
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { ActionRejected } from "../../../schema/Errors.ts"
import type { PluginSnapshot, PluginStatus, SnapshotChange } from "../../../schema/PluginSnapshot.ts"
import { unsafeStatusChanged } from "../../internal/counters.ts"
import { caseKey } from "./caseKey.ts"

/**
 * The registry's snapshots by name and the stream of their changes.
 * @since 0.1.0
 * @category models
 */
export interface Snapshots {
  readonly statusOf: (name: string) => PluginStatus | undefined
  readonly current: (name: string) => PluginSnapshot | undefined
  /** The name of the snapshot whose name has this case key (caseKey.ts), if any. */
  readonly holder: (key: string) => string | undefined
  /** Why a plugin is not in a view: not ready (with its last error), or unknown. */
  readonly explain: (name: string) => ActionRejected
  readonly get: (name: string) => Effect.Effect<Option.Option<PluginSnapshot>>
  readonly list: Effect.Effect<ReadonlyArray<PluginSnapshot>>
  readonly changes: Stream.Stream<SnapshotChange>
  /** A new attempt: `initializing`, attempts + 1 (a retry keeps the count of the error snapshot). */
  readonly initializing: (name: string, version: string | undefined, source: string) => Effect.Effect<void>
  readonly ready: (name: string) => Effect.Effect<PluginSnapshot>
  /** `error` with `lastError`, or `unresponsive` for an isolated plugin ended for not answering. */
  readonly failed: (name: string, lastError: string, status?: "error" | "unresponsive") => Effect.Effect<void>
  readonly disposing: (name: string) => Effect.Effect<void>
  /** Marks several `disposing` at once (one change each, one publication). */
  readonly disposingAll: (names: ReadonlyArray<string>) => Effect.Effect<void>
  readonly remove: (name: string) => Effect.Effect<void>
  readonly clear: Effect.Effect<void>
}

/**
 * Makes empty snapshots; the changes' PubSub is shut down with the Scope.
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Snapshots, never, Scope.Scope> = Effect.gen(function*() {
  // The Clock of the fiber that makes the registry (a TestClock in a test), read synchronously: a
  // change is on the add/remove path, where each Effect step counts.
  const clock = yield* Effect.clock
  // unsafe: the snapshot updates below are synchronous bookkeeping; the Clock is the fiber's own.
  const now = () => new Date(clock.unsafeCurrentTimeMillis()).toISOString()
  // A native Map: every add and remove reads and writes it four times, and hashing a string key
  // for a HashMap costs more than the whole lookup of a Map; readers copy what they return.
  const map = new Map<string, PluginSnapshot>()
  /** The names of `map` by case key: a name is added with its first snapshot, removed with its last. */
  const names = new Map<string, string>()
  const pubsub = yield* Effect.acquireRelease(PubSub.unbounded<SnapshotChange>(), PubSub.shutdown)

  const put = (snapshot: PluginSnapshot) => {
    // unsafe: see services/internal/counters.ts, unsafeStatusChanged.
    unsafeStatusChanged(current(snapshot.name)?.status, snapshot.status)
    map.set(snapshot.name, snapshot)
    return Effect.as(PubSub.publish(pubsub, { _tag: "Updated", snapshot }), snapshot)
  }
  /** The snapshots in code-unit name order: sorted when asked for, so a change stays O(1)-ish. */
  const sorted = (): Array<PluginSnapshot> =>
    Array.from(map.values()).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  const current = (name: string) => map.get(name)

  const change = (name: string, status: PluginStatus, lastError?: string) =>
    Effect.suspend(() => {
      const updated_at = now()
      const previous = current(name)
      if (previous === undefined) return Effect.dieMessage(`no snapshot for ${name}`)
      const { last_error: _, ...rest } = previous
      return put({ ...rest, status, updated_at, ...(lastError === undefined ? {} : { last_error: lastError }) })
    })

  const remove = (name: string) =>
    Effect.suspend(() => {
      if (!map.has(name)) return Effect.void
      // unsafe: as above.
      unsafeStatusChanged(current(name)?.status, undefined)
      map.delete(name)
      names.delete(caseKey(name))
      return PubSub.publish(pubsub, { _tag: "Removed", name })
    })

  return {
    statusOf: (name) => current(name)?.status,
    current,
    holder: (key) => names.get(key),
    explain: (name) => {
      const snapshot = current(name)
      return snapshot === undefined || snapshot.status === "ready"
        ? new ActionRejected({ reason: "PluginNotFound", plugin: name })
        : new ActionRejected({ reason: "PluginNotReady",
          plugin: name,
          status: snapshot.status,
          ...(snapshot.last_error === undefined ? {} : { last_error: snapshot.last_error })
        })
    },
    get: (name) => Effect.sync(() => Option.fromNullable(map.get(name))),
    list: Effect.sync(sorted),
    changes: Stream.unwrapScoped(
      Effect.map(PubSub.subscribe(pubsub), (queue) => {
        const now: ReadonlyArray<SnapshotChange> = sorted().map((snapshot) => ({ _tag: "Updated", snapshot }))
        return Stream.concat(Stream.fromIterable(now), Stream.fromQueue(queue))
      })
    ),
    initializing: (name, version, source) =>
      Effect.suspend(() => {
        const updated_at = now()
        const previous = current(name)
        if (previous === undefined) names.set(caseKey(name), name)
        return put({
          name,
          status: "initializing",
          ...(version === undefined ? {} : { version }),
          source,
          attempts: (previous?.attempts ?? 0) + 1,
          updated_at
        })
      }),
    ready: (name) => change(name, "ready"),
    failed: (name, lastError, status = "error") => Effect.asVoid(change(name, status, lastError)),
    disposing: (name) => Effect.asVoid(change(name, "disposing")),
    remove,
    disposingAll: (names) =>
      Effect.suspend(() => {
        const updated_at = now()
        const changes: Array<SnapshotChange> = []
        for (const name of names) {
          const previous = current(name)
          if (previous === undefined || previous.status === "disposing") continue
          const { last_error: _, ...rest } = previous
          const snapshot: PluginSnapshot = { ...rest, status: "disposing", updated_at }
          // unsafe: as above.
          unsafeStatusChanged(previous.status, "disposing")
          map.set(name, snapshot)
          changes.push({ _tag: "Updated", snapshot })
        }
        return PubSub.publishAll(pubsub, changes)
      }),
    clear: Effect.suspend(() => {
      const changes: Array<SnapshotChange> = Array.from(map.keys(), (name): SnapshotChange => ({ _tag: "Removed", name }))
      // unsafe: as above.
      for (const snapshot of map.values()) unsafeStatusChanged(snapshot.status, undefined)
      map.clear()
      names.clear()
      return PubSub.publishAll(pubsub, changes)
    })
  }
})
