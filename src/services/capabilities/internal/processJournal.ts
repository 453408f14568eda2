/**
 * The journals of ProcessRecords.ts (docs/cli.md, "Commands and signals"): what a journal file
 * says, and this process's own journal, created at its first command, appended to one line a
 * call, emptied back to its header when idle and long, removed when its scope closes idle.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as path from "node:path"
import { StateRootError } from "../../../schema/CapabilityErrors.ts"
import {
  JournalEntry,
  JournalHeader,
  type ProcessIdentity as ProcessIdentityT,
  type ProcessRecord
} from "../../../schema/ProcessRecord.ts"
import { layout } from "../../root/CityRoot.ts"
import { fileMode } from "../../root/FileModes.ts"
import * as ProcessIdentity from "../ProcessIdentity.ts"
import { StateRoot } from "../../root/StateRoot.ts"

/**
 * How many lines a journal may hold before it is emptied back to its header, the next time
 * nothing of its process runs.
 * @since 0.1.0
 * @category constants
 */
export const compactAfter = 1000

/**
 * The journal file name of a process.
 * @since 0.1.0
 * @category utils
 */
export const journalName = (owner: ProcessIdentityT) => `${owner.pid}-${encodeURIComponent(owner.start ?? "none")}.jsonl`

const encoder = new TextEncoder()
const decodeHeader = Schema.decodeUnknownOption(Schema.parseJson(JournalHeader))
const decodeEntry = Schema.decodeUnknownOption(Schema.parseJson(JournalEntry))

/**
 * What a journal says: its owner and the commands it names running, in the order spawned.
 * @since 0.1.0
 * @category models
 */
export interface Journal {
  /** The process that writes the journal. */
  readonly owner: ProcessIdentityT
  /** The commands it names running, in the order spawned. */
  readonly running: ReadonlyArray<ProcessRecord>
}

/**
 * The journal in `text`; `None` when its header does not decode (it names no one).
 * @since 0.1.0
 * @category utils
 */
export const parseJournal = (text: string): Option.Option<Journal> => {
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
 * This process's journal, written as `self`. Scoped: the journal is removed when the scope closes
 * with nothing running.
 * @since 0.1.0
 * @category constructors
 */
export const makeOwnJournal = (self: ProcessIdentityT) =>
  Effect.gen(function*() {
    const state = yield* StateRoot
    const fs = yield* FileSystem.FileSystem
    const scope = yield* Effect.scope
    const ownFile = path.join(state.resolve(layout.processes), journalName(self))
    const startBound = ProcessIdentity.startBound(self)

    // Appended to under `lock`. The `ended` lines wait in `endedSince` and go with the next
    // `spawned` line (one write a call): until then the journal names a command that has ended as
    // running, which every reader checks against the process itself, so the line only saves them
    // the look.
    const lock = yield* Effect.makeSemaphore(1)
    const mine = new Map<number, ProcessRecord>()
    let endedSince: Array<number> = []
    let journal: FileSystem.File | undefined
    let lines = 0
    yield* Effect.addFinalizer(() =>
      journal !== undefined && mine.size === 0 ? fs.remove(ownFile, { force: true }).pipe(Effect.ignore) : Effect.void
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
          () => Effect.zipRight(state.makeDirectory(layout.processes), write)
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
          cause._tag === "StateRootError"
            ? cause
            : new StateRootError({ reason: "StateError", operation: "write", path: ownFile, detail: cause.message, cause })
        )
      )

    const ended = (recorded: { readonly record: ProcessRecord }) =>
      Effect.sync(() => {
        if (mine.delete(recorded.record.pid)) endedSince.push(recorded.record.pid)
      })

    /** The commands of this process not yet ended. */
    const running = () => [...mine.values()]

    return { spawned, ended, running }
  })
