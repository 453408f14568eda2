/**
 * The cross-process root lock: `proper-lockfile` on the state root (a lock
 * directory, refreshed every 2 s while held, stale after 10 s so a crashed
 * holder never blocks the root forever), held as a scoped resource.
 *
 * Decisions:
 * - The lock's file operations go through the platform `FileSystem` (asynchronous, and a test
 *   layer can replace it), behind the callback interface `proper-lockfile` expects: `mkdir` (the
 *   lock itself), `stat` and `utimes` (the staleness probe and the 2 s refresh), `rmdir` (the
 *   release). No call blocks the event loop of the daemon that takes the lock. The lock
 *   directory is made 0700, whatever the umask (docs/cli.md, "Files and permissions").
 * - A busy lock is retried on a Schedule (exponential from 5 ms, at least every 100 ms, jittered)
 *   until `wait` has passed, then `Busy`. The wait is interruptible (Ctrl-C while waiting ends the
 *   wait at once); only each attempt, and the release it registers, is not.
 * - The holder writes `<lock directory>-holder.json` (its pid and since when) beside the lock
 *   directory, not in it (a new entry would change the directory's modification time, which
 *   `proper-lockfile` reads as the lock being taken over at its next refresh), and removes it
 *   before it lets the lock go. A waiter
 *   given a `notice` calls it once, after one second of waiting, with
 *   `waiting for the state-root lock held by pid N (since <ISO time>)` (the CLI prints it on a
 *   terminal: docs/cli.md, "State root").
 * - A compromised lock (taken over as stale while held) is a warning through the Effect logger of
 *   the fiber that took it, never a throw from a timer.
 * - A release that fails (the lock was already taken over) is ignored: the work done under it
 *   must not fail for it.
 * - `proper-lockfile` also removes held locks synchronously at process exit (`rmdirSync`), which
 *   the platform `FileSystem` cannot do; the Scope releases the lock on every exit the Effect
 *   runtime sees (success, failure, interruption by SIGINT/SIGTERM), and a lock left by a harder
 *   exit (kill -9) turns stale after 10 s, as before.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import type * as PlatformError from "@effect/platform/Error"
import * as Duration from "effect/Duration"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as lockfile from "proper-lockfile"
import { fileMode, folderMode } from "./FileModes.ts"

/**
 * Why the lock was not taken: another process held it for all of `wait`, or an error.
 * @since 0.1.0
 * @category models
 */
export type LockFailure =
  | { readonly _tag: "Busy" }
  | { readonly _tag: "Failed"; readonly error: unknown }

type Callback<A> = (error: Error | null, result?: A) => void

/** The Node error codes `proper-lockfile` tells apart, from the platform's reasons. */
const codes: Partial<Record<PlatformError.SystemErrorReason, string>> = { AlreadyExists: "EEXIST", NotFound: "ENOENT" }

const asNodeError = (error: PlatformError.PlatformError): Error => {
  const code = error._tag === "SystemError" ? codes[error.reason] : undefined
  return Object.assign(new Error(error.message, { cause: error }), code === undefined ? {} : { code })
}

/**
 * The file operations `proper-lockfile` uses, on one platform `FileSystem`. One object per
 * `FileSystem`, kept, because `proper-lockfile` caches the file system's mtime precision on it
 * (a `utimes` and a `stat` spared at every later lock).
 */
const lockFs = (fs: FileSystem.FileSystem) => {
  // `proper-lockfile` throws from its refresh when a refresh's `stat` fails after the lock was
  // released meanwhile (it looks the released lock up: `locks[file]` is gone, a TypeError); thrown
  // from a timer, that would end the process. Nothing holds the lock then, so nothing is lost:
  // the throw is dropped here (found by the crash-point tests, test/crash, whose dead file system
  // fails every call).
  const answer = (respond: () => void) => {
    try {
      respond()
    } catch {
      // see above
    }
  }
  const run = <A>(effect: Effect.Effect<A, PlatformError.PlatformError>, callback: Callback<A>) =>
    Effect.runCallback(effect, {
      onExit: Exit.match({
        onSuccess: (a) => answer(() => callback(null, a)),
        onFailure: (cause) => {
          const failure = Option.getOrUndefined(Cause.failureOption(cause))
          answer(() => callback(failure === undefined ? new Error(Cause.pretty(cause)) : asNodeError(failure)))
        }
      })
    })
  return {
    // 0700 whatever the umask, like every folder under the root (StateRoot.ts).
    mkdir: (path: string, callback: Callback<void>) =>
      run(Effect.zipRight(fs.makeDirectory(path, { mode: folderMode }), fs.chmod(path, folderMode)), callback),
    // The lock directory is empty; the platform's `remove` takes a directory only when recursive.
    rmdir: (path: string, callback: Callback<void>) => run(fs.remove(path, { recursive: true }), callback),
    utimes: (path: string, atime: Date, mtime: Date, callback: Callback<void>) => run(fs.utimes(path, atime, mtime), callback),
    // What `proper-lockfile` reads of a stat: the modification time, as a Date (an invalid Date when
    // the file system gives none: never stale, and a held lock then reads as compromised).
    stat: (path: string, callback: Callback<{ readonly mtime: Date }>) =>
      run(Effect.map(fs.stat(path), (info) => ({ mtime: Option.getOrElse(info.mtime, () => new Date(Number.NaN)) })), callback)
  }
}

const lockFsOf = new WeakMap<FileSystem.FileSystem, ReturnType<typeof lockFs>>()

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
  wait: Duration.Duration,
  notice?: (text: string) => Effect.Effect<void>
): Effect.Effect<void, LockFailure, Scope.Scope | FileSystem.FileSystem> =>
  Effect.flatMap(Effect.zip(Effect.runtime<never>(), FileSystem.FileSystem), ([runtime, fileSystem]) => {
    const warn = Runtime.runFork(runtime)
    let fs = lockFsOf.get(fileSystem)
    if (fs === undefined) lockFsOf.set(fileSystem, fs = lockFs(fileSystem))
    const attempt = Effect.tryPromise({
      try: () =>
        lockfile.lock(target, {
          fs,
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
    const holderFile = `${lockDirectory}-holder.json`
    // Best effort: the note only serves a waiter's message.
    const note = fileSystem.writeFileString(
      holderFile,
      JSON.stringify({ pid: process.pid, since: new Date().toISOString() }),
      { mode: fileMode }
    ).pipe(Effect.zipRight(fileSystem.chmod(holderFile, fileMode)), Effect.ignore)
    const holder = fileSystem.readFileString(holderFile).pipe(
      Effect.map((text) => Schema.decodeUnknownOption(Schema.parseJson(Holder))(text)),
      Effect.orElseSucceed(() => Option.none<typeof Holder.Type>())
    )
    const taken = Effect.acquireRelease(
      Effect.tap(attempt, () => note),
      (release) =>
        Effect.zipRight(
          fileSystem.remove(holderFile, { force: true }).pipe(Effect.ignore),
          Effect.tryPromise(() => release()).pipe(Effect.ignore)
        )
    ).pipe(
      Effect.retry({ schedule: whileLocked, while: isLocked }),
      Effect.mapError((cause): LockFailure => isLocked(cause) ? { _tag: "Busy" } : { _tag: "Failed", error: cause }),
      Effect.asVoid
    )
    if (notice === undefined) return taken
    const announce = Effect.sleep(Duration.seconds(1)).pipe(
      Effect.zipRight(holder),
      Effect.flatMap((h) =>
        notice(
          Option.match(h, {
            onNone: () => "waiting for the state-root lock held by another city process",
            onSome: ({ pid, since }) => `waiting for the state-root lock held by pid ${pid} (since ${since})`
          })
        )
      ),
      Effect.zipRight(Effect.never)
    )
    return Effect.raceFirst(taken, announce)
  })

const Holder = Schema.Struct({ pid: Schema.Int, since: Schema.String })
