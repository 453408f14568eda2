/**
 * Plugin-owned keyed resources (spec: "Long-lived connections, timers, schedulers, and workers
 * must follow their actual domain ownership. A browser Provider may be created lazily for an
 * Agent, a chat channel may be keyed by account ... dispose must ultimately close every resource").
 *
 * `KeyedResources.make(acquire)`, called in a plugin's initialize, gives a map whose entry for a
 * key is acquired on first use (concurrent first uses share one acquisition; a failed acquisition
 * is not kept, the next use tries again) and lives until `invalidate(key)` or, at the latest, the
 * plugin's dispose. Entries are reference-counted while in use: `invalidate` closes an entry once
 * its current users are done. Dispose closes every entry, each on its own: a failure closing one
 * never skips the others (all failures are reported together in the dispose's cause).
 *
 * Not `RcMap`: on 3.22 its close stops at the first entry whose release fails.
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"

/**
 * A plugin-owned map of resources by key, each acquired on first use and closed by `invalidate`
 * or, at the latest, by the plugin's dispose.
 * @since 0.1.0
 * @category models
 */
export interface KeyedResources<K, A, E> {
  /** The resource for `key`, acquired on first use. It stays open after the call. */
  readonly get: (key: K) => Effect.Effect<A, E>
  /** Runs `f` with the resource for `key`, holding it so that `invalidate` waits for `f`. */
  readonly use: <B, E2, R2>(key: K, f: (resource: A) => Effect.Effect<B, E2, R2>) => Effect.Effect<B, E | E2, R2>
  /** The keys with a live resource. */
  readonly keys: Effect.Effect<ReadonlyArray<K>>
  /** Closes the resource for `key` once its current users are done; the next use acquires anew. */
  readonly invalidate: (key: K) => Effect.Effect<void>
}

interface Entry<A, E> {
  readonly scope: Scope.CloseableScope
  readonly ready: Deferred.Deferred<A, E>
  users: number
  invalidated: boolean
}

/** Closes one entry's Scope, never failing: a defect in a release comes back as the Exit. */
const closeEntry = <A, E>(entry: Entry<A, E>) => Effect.exit(Scope.close(entry.scope, Exit.void))

/**
 * Makes the keyed resources of a plugin in its initialize: `acquire(key)` runs in a Scope of the
 * key's own, closed when the entry is invalidated (after its current users) or when the plugin
 * is disposed.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Contributions, KeyedResources, Plugin, PluginContext } from "effect-city/plugin"
 *
 * // A browser driver (puppeteer, playwright, ...): one headless browser per profile.
 * interface Browser {
 *   readonly open: (url: string) => Promise<string>
 *   readonly close: () => Promise<void>
 * }
 * declare const launchBrowser: (profile: string) => Promise<Browser>
 *
 * export const browser = Plugin.make({
 *   name: "browser",
 *   initialize: Effect.gen(function*() {
 *     // One browser per Agent id, launched on the Agent's first call; every one closed at dispose.
 *     const browsers = yield* KeyedResources.make((agentId: string) =>
 *       Effect.acquireRelease(
 *         Effect.promise(() => launchBrowser(agentId)),
 *         (browser) => Effect.promise(() => browser.close())
 *       )
 *     )
 *     return {
 *       actions: {
 *         open: Contributions.action({
 *           input: Schema.Struct({ url: Schema.String }),
 *           handler: ({ url }) =>
 *             Effect.flatMap(PluginContext.PluginContext, (ctx) =>
 *               browsers.use(ctx.agent.id, (browser) => Effect.promise(() => browser.open(url))))
 *         }),
 *         // Closes the calling Agent's browser once its pending pages are done; the next open relaunches.
 *         close: Contributions.action({
 *           input: Schema.Struct({}),
 *           handler: () => Effect.flatMap(PluginContext.PluginContext, (ctx) => browsers.invalidate(ctx.agent.id))
 *         })
 *       }
 *     }
 *   })
 * })
 * ```
 * @since 0.1.0
 * @category constructors
 */
export const make = <K, A, E, R>(
  acquire: (key: K) => Effect.Effect<A, E, R | Scope.Scope>
): Effect.Effect<KeyedResources<K, A, E>, never, Scope.Scope | Exclude<R, Scope.Scope>> =>
  Effect.gen(function*() {
    const context = yield* Effect.context<Exclude<R, Scope.Scope>>()
    const entries = new Map<K, Entry<A, E>>()
    let closed = false

    // Dispose: close every entry, collecting every failure.
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        closed = true
        const all = Array.from(entries.values())
        entries.clear()
        return Effect.flatMap(Effect.forEach(all, closeEntry), (exits) => {
          const failures = exits.flatMap((exit) => (Exit.isFailure(exit) ? [exit.cause] : []))
          return failures.length === 0 ? Effect.void : Effect.failCause(failures.reduce(Cause.sequential))
        })
      })
    )

    const acquireEntry = (key: K): Effect.Effect<Entry<A, E>> =>
      Effect.uninterruptible(Effect.gen(function*() {
        const existing = entries.get(key)
        if (existing !== undefined && !existing.invalidated) {
          existing.users++
          return existing
        }
        if (closed) return yield* Effect.dieMessage("KeyedResources used after its plugin was disposed")
        const scope = yield* Scope.make()
        const ready = yield* Deferred.make<A, E>()
        const entry: Entry<A, E> = { scope, ready, users: 1, invalidated: false }
        entries.set(key, entry)
        // The first user acquires; concurrent first users wait on `ready`.
        const exit = yield* Effect.exit(
          Effect.interruptible(acquire(key).pipe(Scope.extend(scope), Effect.provide(context)))
        )
        yield* Deferred.done(ready, exit)
        if (Exit.isFailure(exit)) {
          if (entries.get(key) === entry) entries.delete(key)
          yield* closeEntry(entry)
        }
        return entry
      }))

    const leave = (key: K, entry: Entry<A, E>) =>
      Effect.suspend(() => {
        entry.users--
        if (entry.invalidated && entry.users === 0) {
          if (entries.get(key) === entry) entries.delete(key)
          return Effect.flatMap(closeEntry(entry), (exit) =>
            Exit.isFailure(exit) ? Effect.logWarning(`closing a keyed resource failed: ${Cause.pretty(exit.cause)}`) : Effect.void)
        }
        return Effect.void
      })

    const use: KeyedResources<K, A, E>["use"] = (key, f) =>
      Effect.acquireUseRelease(
        acquireEntry(key),
        (entry) => Effect.flatMap(Deferred.await(entry.ready), f),
        (entry) => leave(key, entry)
      )

    return {
      get: (key) => use(key, Effect.succeed),
      use,
      keys: Effect.sync(() => Array.from(entries.keys())),
      invalidate: (key) =>
        Effect.suspend(() => {
          const entry = entries.get(key)
          if (entry === undefined) return Effect.void
          entry.invalidated = true
          entries.delete(key)
          entry.users++
          return leave(key, entry)
        })
    }
  })
