/**
 * The reaper of ProcessRecords.ts (docs/cli.md, "Commands and signals"): reads the other
 * processes' journals and, for an owner that is gone, ends what it left running (SIGTERM to the
 * group, SIGKILL after the grace) and removes its journal. A process is its pid and its start
 * (ProcessIdentity.ts): a record that cannot be told from a reused pid is reported, never signalled.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Arr from "effect/Array"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as path from "node:path"
import type { ProcessIdentity as ProcessIdentityT, ProcessRecord } from "../../../schema/ProcessRecord.ts"
import { layout } from "../../root/CityRoot.ts"
import * as TextFile from "../../files/TextFile.ts"
import { signalGroup } from "../ChildGroups.ts"
import * as ProcessIdentity from "../ProcessIdentity.ts"
import { StateRoot } from "../../root/StateRoot.ts"
import { type Journal, journalName, parseJournal } from "./processJournal.ts"

/**
 * Makes the reaper for this process (`self`, whose journal it leaves alone), with `killGrace`
 * between SIGTERM and SIGKILL.
 * @since 0.1.0
 * @category constructors
 */
export const makeReaper = (self: ProcessIdentityT, killGrace: Duration.Duration) =>
  Effect.gen(function*() {
    const state = yield* StateRoot
    const fs = yield* FileSystem.FileSystem
    const dir = state.resolve(layout.processes)
    const ownName = journalName(self)

    const running = (identity: ProcessIdentityT) =>
      Effect.provideService(ProcessIdentity.running(identity), FileSystem.FileSystem, fs)
    const statusOf = (record: ProcessRecord) =>
      Effect.provideService(ProcessIdentity.commandStatus(record.pid, record.startedBy), FileSystem.FileSystem, fs)
    /** Whether a recorded command still runs (`undefined`: cannot be told). */
    const commandRuns = (record: ProcessRecord) =>
      Effect.map(statusOf(record), (status) => status === "running" ? true : status === "unknown" ? undefined : false)
    const isSelf = (owner: ProcessIdentityT) => owner.pid === self.pid && owner.start === self.start

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
    const endLeftover = (record: ProcessRecord) =>
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

    return { commandRuns, visit, journals }
  })
