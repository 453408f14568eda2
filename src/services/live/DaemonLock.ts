/**
 * The daemon lock and its pid file (the daemon "holds a pid/lock file so a second daemon on the
 * same root refuses to start with a clear message"; docs/cli.md, "Commands and signals").
 *
 * The authority is the daemon lock, `$CITY_ROOT/daemon.lock`: the same kind of lock as the root's
 * (RootLock.ts, a folder refreshed every 2 s, stale after 10 s), held by a running daemon for its
 * whole life. `$CITY_ROOT/daemon.pid` says which process that is: its pid and its start
 * (ProcessIdentity.ts), for the refusal's message and for the verbs that say whether a daemon runs.
 *
 * Both are taken under the root lock. A start is refused with `DaemonAlreadyRunning` only while
 * the daemon lock is held and the pid file names a process that may be its holder. A pid file
 * alone never keeps a daemon from starting:
 * - a file naming a dead process (a daemon killed with SIGKILL) is taken over at once, its lock
 *   too, so a restart never waits for the lock to go stale;
 * - a file naming a live process whose start is not the recorded one (a reused pid) is stale;
 * - a file without a start (written where the platform gives none, or by an older version)
 *   naming a live process counts only while the daemon lock is held: an unrelated process that
 *   got the pid holds no lock;
 * - a file that is not a daemon record (not JSON, no pid) is ignored, with one warning line.
 *
 * Released (the pid file deleted if still ours, then the lock) when the daemon's Scope closes.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import { lstatSync, readFileSync, unlinkSync } from "node:fs"
import * as path from "node:path"
import { StateRootError } from "../../schema/CapabilityErrors.ts"
import { DaemonError } from "../../schema/Live.ts"
import { oneLine } from "../../schema/OneLine.ts"
import * as RootLock from "../root/RootLock.ts"
import { StateRoot } from "../root/StateRoot.ts"
import * as ProcessIdentity from "../capabilities/ProcessIdentity.ts"
import { layout } from "../root/CityRoot.ts"

/**
 * The pid file, relative to the root.
 * @since 0.1.0
 * @category constants
 */
export const pidFile = layout.daemonPid

const PidRecord = Schema.Struct({
  pid: Schema.Int.pipe(Schema.positive()),
  started_at: Schema.String,
  /** The process's start (ProcessIdentity.ts); absent or `null` where the platform gives none. */
  start: Schema.optional(Schema.NullOr(Schema.String))
})
const decode = Schema.decodeUnknownEither(Schema.parseJson(PidRecord))

/**
 * The daemon lock's folder, relative to the root.
 * @since 0.1.0
 * @category constants
 */
export const lockFolder = layout.daemonLock

/** A lock folder not refreshed for this long is stale (RootLock.ts: refreshed every 2 s, stale after 10 s). */
const staleMs = 10_000

/** What `daemon.pid` holds: a daemon record, nothing, or a file that is not a record (and why). */
const readRecord = Effect.gen(function*() {
  const state = yield* StateRoot
  const text = yield* state.readText(pidFile)
  if (Option.isNone(text)) return { _tag: "Absent" } as const
  return Either.match(decode(text.value), {
    onLeft: (error) => ({ _tag: "Garbage", reason: ParseResult.TreeFormatter.formatErrorSync(error) }) as const,
    onRight: (record) => ({ _tag: "Record", record }) as const
  })
})

/** Whether a daemon holds the lock now: its folder exists and was refreshed within the stale time. */
const lockHeld = Effect.gen(function*() {
  const state = yield* StateRoot
  const fs = yield* FileSystem.FileSystem
  const info = yield* Effect.option(fs.stat(state.resolve(lockFolder)))
  if (Option.isNone(info)) return false
  const mtime = Option.getOrUndefined(info.value.mtime)
  return mtime === undefined || Date.now() - mtime.getTime() < staleMs
})

/** The daemon a pid record names, if it may be running: its start matches, or without a start, the lock is held. */
const runningOf = (record: typeof PidRecord.Type) =>
  Effect.gen(function*() {
    const alive = yield* ProcessIdentity.running({ pid: record.pid, start: record.start ?? null })
    if (alive === false) return Option.none()
    if (alive === true) return Option.some(record)
    return (yield* lockHeld) ? Option.some(record) : Option.none()
  })

/**
 * The running daemon of this root, if any.
 * @since 0.1.0
 * @category constructors
 */
export const running = Effect.flatMap(readRecord, (found) =>
  found._tag === "Record" ? runningOf(found.record) : Effect.succeed(Option.none()))

/**
 * Holds the daemon lock and the pid file for the caller's Scope.
 * @since 0.1.0
 * @category constructors
 */
export const acquire = Effect.gen(function*() {
  const state = yield* StateRoot
  const fs = yield* FileSystem.FileSystem
  const life = yield* Effect.scope
  const folder = state.resolve(lockFolder)
  const holdLock = RootLock.hold(state.resolve(pidFile), folder, Duration.zero)
  yield* Effect.acquireRelease(
    Effect.scoped(Effect.gen(function*() {
      yield* state.lock
      const found = yield* readRecord
      if (found._tag === "Garbage") {
        yield* Effect.logWarning(
          `${state.resolve(pidFile)} is not a daemon record (${oneLine(found.reason, 200)}); ignored and replaced`
        )
      }
      const current = found._tag === "Record" ? yield* runningOf(found.record) : Option.none()
      if (Option.isSome(current) && current.value.pid !== process.pid) {
        return yield* new DaemonError({ reason: "DaemonAlreadyRunning", root: state.root, pid: current.value.pid, file: state.resolve(pidFile) })
      }
      // No daemon runs: a lock still there is a dead daemon's (killed before it went stale), taken over at once.
      const taken = yield* Effect.either(Scope.extend(holdLock, life))
      if (Either.isLeft(taken)) {
        yield* fs.remove(folder, { recursive: true }).pipe(Effect.ignore)
        yield* Scope.extend(holdLock, life).pipe(
          Effect.mapError((failure) =>
            new StateRootError({ reason: "StateError",
              operation: "lock",
              path: folder,
              detail: failure._tag === "Busy" ? "taken by another process meanwhile" : String(failure.error),
              cause: failure
            })
          )
        )
      }
      const self = yield* ProcessIdentity.identify(process.pid)
      yield* state.writeJson(pidFile, { pid: process.pid, started_at: DateTime.formatIso(yield* DateTime.now), start: self.start })
    })),
    () =>
      Effect.scoped(Effect.gen(function*() {
        yield* state.lock
        const found = yield* readRecord
        if (found._tag === "Record" && found.record.pid === process.pid) yield* state.remove(pidFile)
      })).pipe(Effect.ignore)
  )
})

/**
 * Removes the pid file if it still names this process, synchronously: for the finalizer
 * deadline's exit (programs/main.ts), when the Scope that would release it can no longer run and
 * only synchronous code can. The file is checked to be a small regular file first (`lstat`), so a
 * FIFO or a device put in its place cannot hold the exit.
 * @since 0.1.0
 * @category constructors
 */
export const releaseAtExit = (root: string): void => {
  const file = path.join(root, pidFile)
  try {
    const info = lstatSync(file)
    if (!info.isFile() || info.size > 4096) return
    const record = Either.getOrUndefined(decode(readFileSync(file, "utf8")))
    if (record?.pid === process.pid) unlinkSync(file)
  } catch {
    // Absent or unreadable: nothing of ours to remove.
  }
}
