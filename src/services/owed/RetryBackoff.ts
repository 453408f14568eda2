/**
 * The backoff of failed owed work (docs/live-application.md, "Failed owed work: the backoff"): a
 * failed owed reload or owed removal is tried again after `base`, then after twice that, and so on
 * (`Schedule.exponential(base)`), each delay at most `cap` (`Schedule.spaced(cap)` in a
 * `Schedule.union`, which takes the shorter delay). From the first failure at t = 0 the attempts
 * are at 0, base, 3·base, 7·base, … until the delay reaches the cap, then every cap.
 *
 * The count of failed attempts is durable (the owed record's `attempts`, Reloads.ts), so the delay
 * of the next attempt is the schedule's delay at that step, recomputed from the count: a restarted
 * daemon goes on where the last one stopped.
 *
 * The settings are a `Context.Reference`: defaults 1 s and 5 min unless provided (`city daemon
 * --retry-base-ms --retry-cap-ms`). The owed-work store reads them when it is built.
 * @since 0.1.0
 */
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"

/**
 * The first delay and the longest one.
 * @since 0.1.0
 * @category models
 */
export interface RetryBackoffSettings {
  /** The delay after the first failed attempt; each further failure doubles it. */
  readonly base: Duration.Duration
  /** The longest delay between two attempts. */
  readonly cap: Duration.Duration
}

/**
 * The defaults: 1 s, doubling up to 5 min.
 * @since 0.1.0
 * @category constants
 */
export const defaults: RetryBackoffSettings = { base: Duration.seconds(1), cap: Duration.minutes(5) }

/**
 * The settings in use (the defaults unless provided).
 * @since 0.1.0
 * @category tags
 */
export class RetryBackoff extends Context.Reference<RetryBackoff>()("effect-city/RetryBackoff", {
  defaultValue: (): RetryBackoffSettings => defaults
}) {}

/**
 * The schedule of the delays: exponential from `base`, each at most `cap`.
 * @since 0.1.0
 * @category constructors
 */
export const schedule = (settings: RetryBackoffSettings): Schedule.Schedule<Duration.Duration> =>
  Schedule.delays(Schedule.exponential(settings.base, 2).pipe(Schedule.union(Schedule.spaced(settings.cap))))

/**
 * The delay before the next attempt after `failures` failed ones (at least one): the schedule's
 * `failures`-th delay, `base · 2^(failures-1)` at most `cap`.
 * @since 0.1.0
 * @category constructors
 */
export const delayAfter = (settings: RetryBackoffSettings, failures: number): Effect.Effect<Duration.Duration> =>
  Effect.map(
    // Past 64 doublings every delay is the cap: a long failing record does not make a long run.
    Schedule.run(schedule(settings), 0, Array.from({ length: Math.min(64, Math.max(1, failures)) }, () => undefined)),
    (delays) => Option.getOrElse(Chunk.last(delays), () => settings.base)
  )
