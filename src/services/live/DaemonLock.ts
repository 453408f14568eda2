/**
 * The daemon's pid file, `$CITY_ROOT/daemon.pid` (the daemon "holds a pid/lock file so
 * a second daemon on the same root refuses to start with a clear message").
 *
 * Taken under the root lock: a file naming a live process refuses the start with
 * `DaemonAlreadyRunning`; a file naming a dead process (a daemon killed with SIGKILL) is taken
 * over at once, so a restart never waits for a stale lock to expire. Released (deleted if still
 * ours) when the daemon's Scope closes. Verbs read it to say whether a daemon is running to carry
 * out pending work. The file names the daemon by its pid and its start (ProcessIdentity.ts), so a
 * pid reused by an unrelated process after a crash or a reboot is a stale file, never a running
 * daemon. A file without a start (written where the platform gives none, or by an older
 * version) falls back to the pid alone.
 * @since 0.1.0
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { lstatSync, readFileSync, unlinkSync } from "node:fs"
import * as path from "node:path"
import { DaemonAlreadyRunning } from "../../schema/Live.ts"
import { StateRoot } from "../capabilities/StateRoot.ts"
import * as ProcessIdentity from "../capabilities/ProcessIdentity.ts"
import { layout } from "../city/CityRoot.ts"

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
 * The running daemon of this root, if any.
 * @since 0.1.0
 * @category constructors
 */
export const running = Effect.gen(function*() {
  const state = yield* StateRoot
  const text = yield* state.readText(pidFile)
  const record = Option.flatMap(text, (t) => Either.getRight(decode(t)))
  if (Option.isNone(record)) return Option.none()
  const alive = yield* ProcessIdentity.running({ pid: record.value.pid, start: record.value.start ?? null })
  return alive === false ? Option.none() : record
})

/**
 * Holds the pid file for the caller's Scope.
 * @since 0.1.0
 * @category constructors
 */
export const acquire = Effect.gen(function*() {
  const state = yield* StateRoot
  yield* Effect.acquireRelease(
    Effect.scoped(Effect.gen(function*() {
      yield* state.lock
      const current = yield* running
      if (Option.isSome(current) && current.value.pid !== process.pid) {
        return yield* new DaemonAlreadyRunning({ root: state.root, pid: current.value.pid, file: state.resolve(pidFile) })
      }
      const self = yield* ProcessIdentity.identify(process.pid)
      yield* state.writeJson(pidFile, { pid: process.pid, started_at: DateTime.formatIso(yield* DateTime.now), start: self.start })
    })),
    () =>
      Effect.scoped(Effect.gen(function*() {
        yield* state.lock
        const current = yield* running
        if (Option.isSome(current) && current.value.pid === process.pid) yield* state.remove(pidFile)
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
