/**
 * The records of the commands `city` is running (docs/cli.md, "Commands and signals"), so that
 * nothing a killed `city` started outlives it unnoticed and no endpoint ever runs two commands at
 * once, whichever process started them.
 *
 * - **One journal per `city` process.** `state/processes/<pid>-<start>.jsonl` is created (its
 *   header renamed into place, so no one ever reads a journal that names no owner) at the first
 *   command a process starts. Its first line names the owner (schema/ProcessRecord.ts); then one
 *   line is appended right after each spawn: the command's pid (also its process group's) and a
 *   bound on its start (ProcessIdentity.ts, `startBound`), the endpoint, the command. That a
 *   command has ended is appended with the next spawn's line (`ended`); until then a reader finds
 *   it gone when it looks at the process, as it does for every command a journal names. So a
 *   call costs one write of a line to a file kept open and no read: a record file per command
 *   cost a write, a rename, a removal and a read of `/proc/<pid>/stat`, about a millisecond of
 *   CPU a call, a fifth of what a sweep spent on its own. Lines are not synced to disk: they answer
 *   a crash of `city`, and a crash of the machine ends the commands too (the boot is part of a
 *   start). The line follows the spawn by the time of one small write: a `city` killed in that
 *   window (a millisecond or so) leaves that command unrecorded. A line that does not decode (the
 *   torn end of a write) names nothing and is passed over.
 * - **Cleared as it goes.** When a process starts a command with none of its own running and its
 *   journal holds more than `compactAfter` lines (internal/processJournal.ts), the journal is emptied back to its header
 *   first (a daemon runs for months); when its Layer is closed with nothing running, the journal
 *   is removed.
 * - **One command per endpoint, ever.** Before a command is spawned for an endpoint outside the
 *   root lock, `vacate` looks at the journals: a command still running on that endpoint, of this
 *   process or of another live `city`, is waited for (at most the time the caller gives, then `EndpointBusy`); the
 *   journal of an owner that is gone (a `city` killed with SIGKILL) is recovered first (below).
 * - **Recovery.** `recover` reads every journal of an owner that is gone, ends each of its commands
 *   still running (SIGTERM to the group, SIGKILL after the grace) and removes the journal; joints
 *   run it when they take the state-root lock (also after taking over a stale lock) and the daemon
 *   at its start.
 * - **A process is its pid and its start** (ProcessIdentity.ts): a pid reused by another process
 *   does not match. Where the platform gives no start (`start: null`), a record is never
 *   signalled: a leftover there is reported and its journal removed, so a reused pid is never
 *   killed.
 *   A group is signalled when its leader matches the record, or when the leader is gone but the
 *   group still has members (a pid that still names a process group is not given to a new
 *   process).
 *
 * The pieces: this process's journal and the journal format are internal/processJournal.ts, the
 * reading of the others' journals and the ending of leftovers internal/processReaper.ts; `make`
 * composes them and waits for an endpoint to be free (`vacate`).
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import { StateRootError } from "../../schema/CapabilityErrors.ts"
import type { ProcessIdentity as ProcessIdentityT, ProcessRecord } from "../../schema/ProcessRecord.ts"
import { makeOwnJournal } from "./internal/processJournal.ts"
import { makeReaper } from "./internal/processReaper.ts"
import * as ProcessIdentity from "./ProcessIdentity.ts"
import type { StateRoot } from "../root/StateRoot.ts"

/**
 * A command as recorded: what `ended` clears.
 * @since 0.1.0
 * @category models
 */
export interface Recorded {
  readonly record: ProcessRecord
}

/**
 * A leftover of an owner that is gone, and what became of it.
 * @since 0.1.0
 * @category models
 */
export interface Leftover {
  readonly record: ProcessRecord
  /** `ended`: its group was signalled and is gone; `unverified`: it could not be told from a reused pid, so it was left alone. */
  readonly fate: "ended" | "unverified" | "still-running"
}

/**
 * The process records of the state root: vacate an endpoint, record a spawned command, clear it, recover.
 * @since 0.1.0
 * @category tags
 */
export class ProcessRecords extends Context.Tag("effect-city/ProcessRecords")<ProcessRecords, {
  /** This process, as its records name it. */
  readonly self: ProcessIdentityT
  /**
   * Waits until no command runs for `endpoint` (in this process or another live one), ending
   * first what an owner that is gone left running; `EndpointBusy` after `within`.
   */
  readonly vacate: (endpoint: string | undefined, within: Duration.DurationInput) => Effect.Effect<void, StateRootError>
  /** Records a command just spawned (its pid leads its process group). */
  readonly spawned: (endpoint: string | undefined, pid: number, command: string) => Effect.Effect<Recorded, StateRootError>
  /** Clears the record of a command that has ended. Never fails (a line not written is settled by the next recovery). */
  readonly ended: (recorded: Recorded) => Effect.Effect<void>
  /** Ends every leftover of an owner that is gone; what it found. */
  readonly recover: Effect.Effect<ReadonlyArray<Leftover>>
}>() {}

/**
 * The options of the records.
 * @since 0.1.0
 * @category models
 */
export interface ProcessRecordsOptions {
  /** The time between SIGTERM and SIGKILL of a leftover's group (default 2 s). */
  readonly killGrace?: Duration.DurationInput
  /**
   * The process the journal names as its owner (default: this one, by its pid and start). A
   * crash test stands for a `city` that is gone with an identity no running process has.
   */
  readonly self?: ProcessIdentityT
}

/**
 * Makes the records on the state root. Scoped: this process's journal is removed when the scope
 * closes with nothing running.
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: ProcessRecordsOptions = {}): Effect.Effect<
  ProcessRecords["Type"],
  never,
  StateRoot | FileSystem.FileSystem | Scope.Scope
> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const self = options.self ?? (yield* Effect.provideService(ProcessIdentity.identify(process.pid), FileSystem.FileSystem, fs))
    const own = yield* makeOwnJournal(self)
    const reaper = yield* makeReaper(self, Duration.decode(options.killGrace ?? Duration.seconds(2)))

    /** The first of `records` acting on `endpoint` whose command still runs. */
    const busyWith = (endpoint: string, records: Iterable<ProcessRecord>) =>
      Effect.gen(function*() {
        for (const record of records) {
          if (record.endpoint === endpoint && (yield* reaper.commandRuns(record)) !== false) return Option.some(record)
        }
        return Option.none<ProcessRecord>()
      })

    const vacate = (endpoint: string | undefined, within: Duration.DurationInput) => {
      if (endpoint === undefined) return Effect.void
      const wait = Duration.decode(within)
      const once = Effect.gen(function*() {
        const mine = yield* busyWith(endpoint, own.running())
        if (Option.isSome(mine)) return yield* Effect.fail(mine.value)
        for (const name of yield* reaper.journals) {
          const other = yield* busyWith(endpoint, (yield* reaper.visit(name)).running)
          if (Option.isSome(other)) return yield* Effect.fail(other.value)
        }
      })
      return once.pipe(
        Effect.retry(Schedule.spaced(Duration.millis(100)).pipe(Schedule.upTo(wait))),
        Effect.mapError((record) =>
          new StateRootError({ reason: "EndpointBusy",
            endpoint,
            pid: record.pid,
            owner: record.owner.pid,
            waitedMs: Duration.toMillis(wait)
          })
        )
      )
    }

    const recover = Effect.gen(function*() {
      const found: Array<Leftover> = []
      for (const name of yield* reaper.journals) found.push(...(yield* reaper.visit(name)).leftovers)
      return found
    })

    return ProcessRecords.of({ self, vacate, spawned: own.spawned, ended: own.ended, recover })
  })

/**
 * The records as a Layer (scoped: see {@link make}).
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: ProcessRecordsOptions = {}) =>
  Layer.scoped(ProcessRecords, make(options))
