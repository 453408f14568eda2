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
 *   journal holds more than {@link compactAfter} lines, the journal is emptied back to its header
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
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as path from "node:path"
import { EndpointBusy, StateError } from "../../schema/CapabilityErrors.ts"
import {
  JournalEntry,
  JournalHeader,
  type ProcessIdentity as ProcessIdentityT,
  type ProcessRecord
} from "../../schema/ProcessRecord.ts"
import * as TextFile from "../files/TextFile.ts"
import * as ProcessIdentity from "./ProcessIdentity.ts"
import { signalGroup } from "./ChildGroups.ts"
import { fileMode } from "./FileModes.ts"
import { StateRoot } from "./StateRoot.ts"

/**
 * The folder of the journals, under the state root.
 * @since 0.1.0
 * @category constants
 */
export const folder = "state/processes"

/**
 * How many lines a journal may hold before it is emptied back to its header, the next time
 * nothing of its process runs.
 * @since 0.1.0
 * @category constants
 */
export const compactAfter = 1000

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
  readonly vacate: (endpoint: string | undefined, within: Duration.DurationInput) => Effect.Effect<void, EndpointBusy>
  /** Records a command just spawned (its pid leads its process group). */
  readonly spawned: (endpoint: string | undefined, pid: number, command: string) => Effect.Effect<Recorded, StateError>
  /** Clears the record of a command that has ended. Never fails (a line not written is settled by the next recovery). */
  readonly ended: (recorded: Recorded) => Effect.Effect<void>
  /** Ends every leftover of an owner that is gone; what it found. */
  readonly recover: Effect.Effect<ReadonlyArray<Leftover>>
}>() {}

/** The journal file of a process. */
const journalName = (owner: ProcessIdentityT) => `${owner.pid}-${encodeURIComponent(owner.start ?? "none")}.jsonl`

const encoder = new TextEncoder()
const decodeHeader = Schema.decodeUnknownOption(Schema.parseJson(JournalHeader))
const decodeEntry = Schema.decodeUnknownOption(Schema.parseJson(JournalEntry))

/** What a journal says: its owner and the commands it names running, in the order spawned. */
interface Journal {
  readonly owner: ProcessIdentityT
  readonly running: ReadonlyArray<ProcessRecord>
}

/** The journal in `text`; `None` when its header does not decode (it names no one). */
const parseJournal = (text: string): Option.Option<Journal> => {
  const lines = text.split("\n")
  return Option.map(decodeHeader(lines[0] ?? ""), ({ owner }) => {
    const running = new Map<number, ProcessRecord>()
    for (const line of lines.slice(1)) {
      if (line === "") continue
      const entry = decodeEntry(line)
      if (Option.isNone(entry)) continue // the torn end of a write: names nothing
      const e = entry.value
      if (e.op === "ended") running.delete(e.pid)
      else running.set(e.pid, { pid: e.pid, startedBy: e.startedBy, owner, endpoint: e.endpoint, command: e.command, since: e.since })
    }
    return { owner, running: [...running.values()] }
  })
}

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
    const state = yield* StateRoot
    const fs = yield* FileSystem.FileSystem
    const scope = yield* Effect.scope
    const killGrace = Duration.decode(options.killGrace ?? Duration.seconds(2))
    const dir = state.resolve(folder)

    const running = (identity: ProcessIdentityT) =>
      Effect.provideService(ProcessIdentity.running(identity), FileSystem.FileSystem, fs)
    const statusOf = (record: ProcessRecord) =>
      Effect.provideService(ProcessIdentity.commandStatus(record.pid, record.startedBy), FileSystem.FileSystem, fs)
    /** Whether a recorded command still runs (`undefined`: cannot be told). */
    const commandRuns = (record: ProcessRecord) =>
      Effect.map(statusOf(record), (status) => status === "running" ? true : status === "unknown" ? undefined : false)
    const self = options.self ?? (yield* Effect.provideService(ProcessIdentity.identify(process.pid), FileSystem.FileSystem, fs))
    const isSelf = (owner: ProcessIdentityT) => owner.pid === self.pid && owner.start === self.start
    const ownName = journalName(self)
    const startBound = ProcessIdentity.startBound(self)
    const ownFile = path.join(dir, ownName)

    const groupGone = (pgid: number, within: Duration.Duration) =>
      Effect.suspend(() => (signalGroup(pgid, 0) ? Effect.fail("alive" as const) : Effect.void)).pipe(
        Effect.retry(Schedule.spaced(Duration.millis(25)).pipe(Schedule.upTo(within))),
        Effect.isSuccess
      )

    /** SIGTERM to the group, SIGKILL after the grace; whether it is gone. */
    const endGroup = (pgid: number) =>
      Effect.gen(function*() {
        if (!signalGroup(pgid, "SIGTERM")) return true
        if (yield* groupGone(pgid, killGrace)) return true
        signalGroup(pgid, "SIGKILL")
        return yield* groupGone(pgid, Duration.seconds(5))
      })

    const removeFile = (name: string) => fs.remove(path.join(dir, name), { force: true }).pipe(Effect.ignore)

    /** The journal of `name`: `None` when it is gone, `Some(None)` when it names no one. */
    const readJournal = (name: string) =>
      TextFile.read(path.join(dir, name), TextFile.kinds.stateDocument).pipe(
        Effect.map(Option.map(parseJournal)),
        // A journal that cannot be read names no process we could end, as one whose header does not decode.
        Effect.orElseSucceed(() => Option.some(Option.none<Journal>())),
        Effect.provideService(FileSystem.FileSystem, fs)
      )

    /** Ends one command of an owner that is gone; `None` when nothing of it is left. */
    const endLeftover = (record: ProcessRecord): Effect.Effect<Option.Option<Leftover>> =>
      Effect.gen(function*() {
        const status = yield* statusOf(record)
        // Its pid is another process's (whose group, if it leads one, is not ours), or nothing of
        // its group is left (a pid that still names a process group is never handed out again).
        if (status === "other" || (status === "gone" && !signalGroup(record.pid, 0))) return Option.none()
        if (status === "unknown") {
          yield* Effect.logWarning(
            `a command left running by pid ${record.owner.pid} cannot be told from a reused pid (${record.pid}): left alone: ${record.command}`
          ).pipe(Effect.annotateLogs({ code: "process.leftover_unverified", endpoint: record.endpoint ?? "" }))
          return Option.some({ record, fate: "unverified" as const })
        }
        const gone = yield* endGroup(record.pid)
        yield* Effect.logWarning(
          `${gone ? "ended" : "could not end"} a command left running by pid ${record.owner.pid}, which is gone: ` +
            `pid ${record.pid}${record.endpoint === null ? "" : ` for ${record.endpoint}`}: ${record.command}`
        ).pipe(Effect.annotateLogs({
          code: gone ? "process.leftover_ended" : "process.leftover_alive",
          endpoint: record.endpoint ?? ""
        }))
        return Option.some({ record, fate: gone ? "ended" as const : "still-running" as const })
      })

    /** Whether the owner of a journal is gone (this process, and one that cannot be told apart, are not). */
    const ownerGone = (owner: ProcessIdentityT) =>
      isSelf(owner) ? Effect.succeed(false) : Effect.map(running(owner), (alive) => alive === false)

    /**
     * The journal `name` of another process: recovered when its owner is gone (its leftovers
     * ended, the journal removed unless one could not be ended); what is still running of it.
     */
    const visit = (name: string) =>
      Effect.gen(function*() {
        const found = yield* readJournal(name)
        if (Option.isNone(found)) return { leftovers: [], running: [] }
        if (Option.isNone(found.value)) {
          yield* removeFile(name)
          return { leftovers: [], running: [] }
        }
        const journal = found.value.value
        if (!(yield* ownerGone(journal.owner))) return { leftovers: [], running: journal.running }
        const leftovers = Arr.getSomes(yield* Effect.forEach(journal.running, endLeftover))
        const alive = leftovers.filter((l) => l.fate === "still-running").map((l) => l.record)
        if (alive.length === 0) yield* removeFile(name)
        return { leftovers, running: alive }
      })

    /** The other processes' journals (a temp file whose writer is gone goes). */
    const journals = Effect.gen(function*() {
      const names = yield* fs.readDirectory(dir).pipe(Effect.orElseSucceed(() => [] as Array<string>))
      for (const name of names.filter((n) => n.endsWith(".tmp"))) {
        const writer = Number(name.slice(0, name.indexOf("-")))
        if (!Number.isInteger(writer) || writer <= 0 || writer === self.pid) continue
        if ((yield* running({ pid: writer, start: null })) === false) yield* removeFile(name)
      }
      return names.filter((n) => n.endsWith(".jsonl") && n !== ownName).sort()
    })

    // This process's journal, created at its first command and appended to under `lock`. The
    // `ended` lines wait in `endedSince` and go with the next `spawned` line (one write a call):
    // until then the journal names a command that has ended as running, which every reader checks
    // against the process itself (`commandRuns`), so the line only saves them the look.
    const lock = yield* Effect.makeSemaphore(1)
    const mine = new Map<number, ProcessRecord>()
    let endedSince: Array<number> = []
    let journal: FileSystem.File | undefined
    let lines = 0
    yield* Effect.addFinalizer(() =>
      journal !== undefined && mine.size === 0 ? removeFile(ownName) : Effect.void
    )

    const headerLine = () => JSON.stringify({ schema: 1, owner: self })

    const create = Effect.gen(function*() {
      const tmp = `${ownFile}.tmp`
      const write = Effect.zipRight(
        Effect.zipRight(fs.writeFileString(tmp, `${headerLine()}\n`, { mode: fileMode }), fs.chmod(tmp, fileMode)),
        fs.rename(tmp, ownFile)
      )
      // The folder is made (0700, with its parents: StateRoot) the first time a write finds it missing.
      yield* write.pipe(
        Effect.catchIf(
          (e) => e._tag === "SystemError" && e.reason === "NotFound",
          () => Effect.zipRight(state.makeDirectory(folder), write)
        )
      )
      const file = yield* Scope.extend(fs.open(ownFile, { flag: "a", mode: fileMode }), scope)
      journal = file
      lines = 1
      return file
    })

    /** Appends the waiting `ended` lines and `line` in one write; emptied first when idle and long. */
    const append = (line: unknown) =>
      Effect.gen(function*() {
        const file = journal ?? (yield* create)
        const texts = endedSince.map((pid) => JSON.stringify({ op: "ended", pid }))
        if (mine.size === 0 && lines + texts.length > compactAfter) {
          // Nothing of this process runs: back to the header, and the `ended` lines are not needed.
          yield* file.truncate(0)
          texts.length = 0
          texts.push(headerLine())
          lines = 0
        }
        texts.push(JSON.stringify(line))
        yield* file.writeAll(encoder.encode(`${texts.join("\n")}\n`))
        endedSince = []
        lines += texts.length
      })

    const spawned = (endpoint: string | undefined, pid: number, command: string) =>
      Effect.gen(function*() {
        const since = new Date().toISOString()
        const record: ProcessRecord = {
          pid,
          startedBy: startBound(),
          owner: self,
          endpoint: endpoint ?? null,
          command,
          since
        }
        yield* lock.withPermits(1)(Effect.zipRight(
          append({ op: "spawned", pid, startedBy: record.startedBy, endpoint: record.endpoint, command, since }),
          Effect.sync(() => mine.set(pid, record))
        ))
        return { record }
      }).pipe(
        Effect.mapError((cause) =>
          cause._tag === "StateError"
            ? cause
            : new StateError({ operation: "write", path: ownFile, detail: cause.message, cause })
        )
      )

    const ended = (recorded: Recorded) =>
      Effect.sync(() => {
        if (mine.delete(recorded.record.pid)) endedSince.push(recorded.record.pid)
      })

    /** The first of `records` acting on `endpoint` whose command still runs. */
    const busyWith = (endpoint: string, records: Iterable<ProcessRecord>) =>
      Effect.gen(function*() {
        for (const record of records) {
          if (record.endpoint === endpoint && (yield* commandRuns(record)) !== false) return Option.some(record)
        }
        return Option.none<ProcessRecord>()
      })

    const vacate = (endpoint: string | undefined, within: Duration.DurationInput) => {
      if (endpoint === undefined) return Effect.void
      const wait = Duration.decode(within)
      const once = Effect.gen(function*() {
        const own = yield* busyWith(endpoint, [...mine.values()])
        if (Option.isSome(own)) return yield* Effect.fail(own.value)
        for (const name of yield* journals) {
          const other = yield* busyWith(endpoint, (yield* visit(name)).running)
          if (Option.isSome(other)) return yield* Effect.fail(other.value)
        }
      })
      return once.pipe(
        Effect.retry(Schedule.spaced(Duration.millis(100)).pipe(Schedule.upTo(wait))),
        Effect.mapError((record) =>
          new EndpointBusy({
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
      for (const name of yield* journals) found.push(...(yield* visit(name)).leftovers)
      return found
    })

    return ProcessRecords.of({ self, vacate, spawned, ended, recover })
  })

/**
 * The records as a Layer (scoped: see {@link make}).
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: ProcessRecordsOptions = {}) =>
  Layer.scoped(ProcessRecords, make(options))
