/**
 * The heartbeat of an isolated plugin (docs/plugin-loader.md, "Liveness"): about every second the
 * host asks its worker for a `Heartbeat`, which the worker answers at once whatever the plugin is
 * doing, as long as its event loop turns. So liveness does not depend on calls: a spin in a timer,
 * a microtask loop or a blocking initialize, call or dispose are all seen the same way.
 *
 * - A worker that has not answered for {@link silenceLimit} is *silent*: `onSilent` runs once (the
 *   plugin names the code it is running, then ends the thread).
 * - One heartbeat is in flight at a time: a stuck worker is not sent a queue of them.
 * - The host's own stalls do not count against the worker: when this fiber itself ran late (the
 *   host's thread was blocked, or the machine starved it), the silence starts again from now.
 * - Each answer carries what the worker uses (`Memory`), kept as the latest figures for the
 *   operator's views and given to `onBeat` (the plugin holds its memory caps with it,
 *   docs/plugin-loader.md, "What each mode caps").
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Isolation from "../../../schema/Isolation.ts"
import type { WorkerThread } from "./workerThread.ts"

/**
 * How often a heartbeat is asked for.
 * @since 0.1.0
 * @category constants
 */
export const beatEvery = Duration.seconds(1)

/**
 * How long a worker may go without answering before it is silent (VS Code calls its extension
 * host unresponsive after the same 3 s).
 * @since 0.1.0
 * @category constants
 */
export const silenceLimit = Duration.seconds(3)

/** How often the silence is looked at. */
const lookEvery = Duration.millis(250)

/**
 * Watches the worker's heartbeat in the caller's Scope, from its first answer on (`first`: the
 * worker is up). `latest` is what it last reported, `None` while it is silent; `onBeat` sees each
 * answer, the first included.
 * @since 0.1.0
 * @category internals
 */
export const watchHeartbeat = (
  worker: WorkerThread["worker"],
  onSilent: (silentMillis: number) => Effect.Effect<void>,
  onBeat: (memory: Isolation.Memory) => Effect.Effect<void> = () => Effect.void
) =>
  Effect.gen(function*() {
    const beat = worker.executeEffect(new Isolation.Heartbeat())
    const first = yield* beat
    yield* onBeat(first)
    let latest: Isolation.Memory = first
    let answeredAt = yield* Clock.currentTimeMillis
    let lookedAt = answeredAt
    let askedAt = answeredAt
    let asking = false
    let silent = false
    const limit = Duration.toMillis(silenceLimit)
    const stall = 4 * Duration.toMillis(lookEvery)

    const ask = beat.pipe(
      Effect.flatMap((memory) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          latest = memory
          answeredAt = now
          return onBeat(memory)
        })
      ),
      Effect.ignore,
      Effect.ensuring(Effect.sync(() => {
        asking = false
      }))
    )

    const look = Effect.gen(function*() {
      if (silent) return
      const now = yield* Clock.currentTimeMillis
      // This fiber ran late: the host was stalled, not (only) the worker. Start the count again.
      if (now - lookedAt > stall) answeredAt = Math.max(answeredAt, now)
      lookedAt = now
      if (now - answeredAt >= limit) {
        silent = true
        return yield* onSilent(now - answeredAt)
      }
      if (!asking && now - askedAt >= Duration.toMillis(beatEvery)) {
        asking = true
        askedAt = now
        yield* Effect.forkScoped(ask)
      }
    })

    yield* Effect.forkScoped(Effect.repeat(look, Schedule.spaced(lookEvery)))
    return {
      /** What the worker last reported; `None` once it is silent. */
      latest: Effect.sync(() => (silent ? Option.none() : Option.some(latest)))
    }
  })
