/**
 * The cross-process root lock: `proper-lockfile` on the state root (a lock
 * directory, refreshed every 2 s while held, stale after 10 s so a crashed
 * holder never blocks the root forever), held as a scoped resource.
 *
 * Decisions:
 * - The lock's file operations are synchronous, behind the callback interface
 *   `proper-lockfile` expects (as its own `lockSync` does): taking the lock is
 *   a `mkdir` and an mtime probe of a few microseconds each, where the
 *   asynchronous calls cost a round trip through libuv's thread pool each
 *   (about 15 ms for the lock of a `city` sweep on a busy 2-core machine;
 *   the sweep bench measures the process end to end).
 * - A busy lock is retried on a Schedule (exponential from 5 ms, at least every
 *   100 ms, jittered) until `wait` has passed, then `Busy`.
 * - A compromised lock (taken over as stale while held) is a warning through
 *   the Effect logger of the fiber that took it, never a throw from a timer.
 * - A release that fails (the lock was already taken over) is ignored: the
 *   work done under it must not fail for it.
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Runtime from "effect/Runtime"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as nodeFs from "node:fs"
import * as lockfile from "proper-lockfile"

/**
 * Why the lock was not taken: another process held it for all of `wait`, or an error.
 * @since 0.1.0
 * @category models
 */
export type LockFailure =
  | { readonly _tag: "Busy" }
  | { readonly _tag: "Failed"; readonly error: unknown }

const syncCall = <A>(callback: (error: Error | null, result?: A) => void, run: () => A): void => {
  let result: A
  try {
    result = run()
  } catch (error) {
    return callback(error instanceof Error ? error : new Error(String(error)))
  }
  callback(null, result)
}

/** The file operations `proper-lockfile` uses, done synchronously behind its callbacks. */
const syncLockFs = {
  ...nodeFs,
  mkdir: (path: string, callback: (error: Error | null) => void) => syncCall(callback, () => nodeFs.mkdirSync(path)),
  realpath: (path: string, callback: (error: Error | null, resolved?: string) => void) =>
    syncCall(callback, () => nodeFs.realpathSync(path)),
  stat: (path: string, callback: (error: Error | null, stat?: nodeFs.Stats) => void) =>
    syncCall(callback, () => nodeFs.statSync(path)),
  rmdir: (path: string, callback: (error: Error | null) => void) => syncCall(callback, () => nodeFs.rmdirSync(path)),
  utimes: (path: string, atime: Date, mtime: Date, callback: (error: Error | null) => void) =>
    syncCall(callback, () => nodeFs.utimesSync(path, atime, mtime))
}

const isLocked = (cause: unknown): boolean =>
  typeof cause === "object" && cause !== null && "code" in cause && cause.code === "ELOCKED"

/**
 * Holds the lock of `target` (lock directory `lockDirectory`) for the caller's Scope, waiting up
 * to `wait` for another holder.
 * @since 0.1.0
 * @category constructors
 */
export const hold = (
  target: string,
  lockDirectory: string,
  wait: Duration.Duration
): Effect.Effect<void, LockFailure, Scope.Scope> =>
  Effect.flatMap(Effect.runtime<never>(), (runtime) => {
    const warn = Runtime.runFork(runtime)
    const attempt = Effect.tryPromise({
      try: () =>
        lockfile.lock(target, {
          fs: syncLockFs,
          realpath: false,
          lockfilePath: lockDirectory,
          stale: 10_000,
          update: 2_000,
          retries: 0,
          // The default handler throws from a timer and would crash the process.
          onCompromised: (err) => {
            warn(Effect.logWarning(`root lock compromised: ${err.message}`))
          }
        }),
      catch: (cause) => cause
    })
    const whileLocked = Schedule.exponential(Duration.millis(5), 1.5).pipe(
      Schedule.union(Schedule.spaced(Duration.millis(100))),
      Schedule.jittered,
      Schedule.upTo(wait)
    )
    return Effect.acquireRelease(
      attempt.pipe(
        Effect.retry({ schedule: whileLocked, while: isLocked }),
        Effect.mapError((cause): LockFailure => isLocked(cause) ? { _tag: "Busy" } : { _tag: "Failed", error: cause })
      ),
      (release) => Effect.tryPromise(() => release()).pipe(Effect.ignore)
    ).pipe(Effect.asVoid)
  })
