/**
 * Per-name serialization (docs/design.md "Uniqueness and ordering": "Operations on the same name are
 * serialized (a per-name queue); different names proceed concurrently").
 *
 * A queue per key, kept only while someone holds or waits for the key, so the table never outgrows
 * the names in use. The holder hands the key to the first waiter when it is done (FIFO). A waiter
 * can be cancelled: `withLock(key, effect, cancel)` races the wait (only when the key is held)
 * against `cancel`, which is how close fails queued adds and removes with CityClosed instead of
 * waiting behind them.
 *
 * Not an `RcMap` of semaphores, nor a Semaphore per key: an `RcMap.get` lease costs about 14 µs and
 * a Semaphore's `withPermits` about 4 µs, while the uncontended key here is two Map operations and
 * an `ensuring` (the add + remove path takes the lock twice per plugin).
 *
 * Its users are two subsystems (the City's registry, per plugin name; live application's Applier,
 * per endpoint), so it lives with the helpers several subsystems share (docs/design.md, "Layout").
 * @since 0.1.0
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"

/**
 * Serializes effects by key.
 * @since 0.1.0
 * @category models
 */
export interface KeyedMutex<K> {
  /**
   * Runs `body` holding the lock of `key`, uninterruptibly: `restore` makes a part of it
   * interruptible again (as in `Effect.uninterruptibleMask`, which callers would otherwise add
   * around their bookkeeping themselves). While the key is held by another, the wait is raced
   * against `cancel`: if `cancel` completes first, its failure is the result and `body` never runs.
   */
  readonly withLock: <A, E, R, E2>(
    key: K,
    body: (restore: <X, EX, RX>(effect: Effect.Effect<X, EX, RX>) => Effect.Effect<X, EX, RX>) => Effect.Effect<A, E, R>,
    cancel: Effect.Effect<never, E2>
  ) => Effect.Effect<A, E | E2, R>
  /** How many keys are held. */
  readonly size: () => number
}

/** The waiters of a held key, in arrival order. */
type Waiters = Array<Deferred.Deferred<void>>

/**
 * Makes an empty mutex table.
 * @since 0.1.0
 * @category constructors
 */
export const make = <K>(): KeyedMutex<K> => {
  const held = new Map<K, Waiters>()

  /** Hands the key to the next waiter, or frees it. */
  const release = (key: K, waiters: Waiters) =>
    Effect.sync(() => {
      const next = waiters.shift()
      if (next === undefined) held.delete(key)
      // unsafe: the hand-over happens in the synchronous release of the previous holder.
      else Deferred.unsafeDone(next, Exit.void)
    })

  return {
    withLock: (key, body, cancel) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.suspend(() => {
          const waiters = held.get(key)
          if (waiters === undefined) {
            const mine: Waiters = []
            held.set(key, mine)
            return Effect.ensuring(body(restore), release(key, mine))
          }
          // unsafe: queued in the same synchronous step that checks the queue, so no release can slip between.
          const turn = Deferred.unsafeMake<void>(FiberId.none)
          waiters.push(turn)
          // Both sides interruptible of their own: a race awaits its loser's interruption, and a
          // loser that inherited a caller's uninterruptible region (`cancel` = `Effect.never`, a
          // command that must run to its end) would never end, and the hand-over with it.
          return restore(Effect.raceFirst(Effect.interruptible(Deferred.await(turn)), Effect.interruptible(cancel))).pipe(
            Effect.onExit((exit) =>
              Effect.suspend(() => {
                if (Exit.isSuccess(exit)) return Effect.void
                // Cancelled or interrupted while waiting: leave the queue, or pass on a key
                // handed over meanwhile.
                const at = waiters.indexOf(turn)
                if (at >= 0) {
                  waiters.splice(at, 1)
                  return Effect.void
                }
                return release(key, waiters)
              })
            ),
            Effect.zipRight(Effect.suspend(() => Effect.ensuring(body(restore), release(key, waiters))))
          )
        })
      ),
    size: () => held.size
  }
}
