/**
 * A plugin lost on its own is started again, with backoff (docs/plugin-loader.md, "Liveness"): an
 * isolated plugin whose worker ended (it stopped answering its heartbeat, ran out of memory,
 * exited, threw in a timer) leaves the City with a snapshot saying why, and after 1 s, 2 s, 4 s …
 * (doubling per crash, at most a minute) the registry adds it again, as it was added. A restart
 * whose initialize fails counts as a crash too.
 *
 * After {@link crashLimit} crashes within {@link crashWindow} it is not started again: it stays
 * `error`, its reason saying so, until someone adds it again (`city plugins reload` builds a new
 * generation; so does a change to its folder or to `plugins.json` in a daemon). An explicit add or
 * remove of the name forgets its crashes and any restart still waiting.
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import type * as Scope from "effect/Scope"

/**
 * How many crashes within {@link crashWindow} stop the restarts.
 * @since 0.1.0
 * @category constants
 */
export const crashLimit = 5

/**
 * The window over which crashes are counted.
 * @since 0.1.0
 * @category constants
 */
export const crashWindow = Duration.minutes(10)

/**
 * The wait before the restart that follows the `n`-th crash in the window (1-based): 1 s, 2 s, 4 s …,
 * at most a minute.
 * @since 0.1.0
 * @category constructors
 */
export const backoff = (n: number): Duration.Duration => Duration.seconds(Math.min(60, 2 ** Math.max(0, n - 1)))

/**
 * The reason of a plugin that is not started again: its last reason, and why no restart follows.
 * @since 0.1.0
 * @category constructors
 */
export const gaveUp = (reason: string, crashes: number): string =>
  `${reason} (${crashes} crashes within ${Duration.format(crashWindow)}: not started again until it is added again)`

/**
 * What a crash leads to: a restart after `wait`, or none (`given up`: the limit was reached).
 * @since 0.1.0
 * @category models
 */
export type Decision =
  | { readonly _tag: "Restart"; readonly wait: Duration.Duration; readonly crashes: number }
  | { readonly _tag: "GiveUp"; readonly crashes: number }

/**
 * The crashes of each name and the restarts waiting, for the registry's Scope.
 * @since 0.1.0
 * @category models
 */
export interface PluginRecovery {
  /** Records a crash of `name` now and decides what follows. */
  readonly crashed: (name: string) => Effect.Effect<Decision>
  /** Runs `restart` after `wait`, unless `name` is forgotten or scheduled again meanwhile. */
  readonly schedule: (name: string, wait: Duration.Duration, restart: Effect.Effect<void>) => Effect.Effect<void>
  /** Forgets the crashes of `name` and cancels its waiting restart (an explicit add or remove). */
  readonly forget: (name: string) => Effect.Effect<void>
}

/**
 * Makes the recovery; closing the Scope cancels every waiting restart.
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<PluginRecovery, never, Scope.Scope> = Effect.gen(function*() {
  const fibers = yield* FiberSet.make()
  // The restart each name waits for: a token per schedule, so that a restart that schedules the
  // next one (its initialize failed) never cancels itself.
  const waiting = new Map<string, object>()
  const crashes = new Map<string, Array<number>>()
  const window = Duration.toMillis(crashWindow)
  return {
    crashed: (name) =>
      Effect.map(Clock.currentTimeMillis, (now): Decision => {
        const recent = (crashes.get(name) ?? []).filter((at) => now - at < window)
        recent.push(now)
        crashes.set(name, recent)
        return recent.length >= crashLimit
          ? { _tag: "GiveUp", crashes: recent.length }
          : { _tag: "Restart", wait: backoff(recent.length), crashes: recent.length }
      }),
    schedule: (name, wait, restart) =>
      Effect.suspend(() => {
        const token = {}
        waiting.set(name, token)
        const due = Effect.suspend(() => {
          if (waiting.get(name) !== token) return Effect.void
          waiting.delete(name)
          return restart
        })
        return Effect.asVoid(FiberSet.run(fibers, Effect.zipRight(Effect.sleep(wait), due)))
      }),
    forget: (name) =>
      Effect.sync(() => {
        crashes.delete(name)
        waiting.delete(name)
      })
  }
})
