/**
 * The records of the commands `city` is running (docs/cli.md, "Commands and signals"), so that
 * nothing a killed `city` started outlives it unnoticed and no endpoint ever runs two commands at
 * once, whichever process started them.
 *
 * - **Recorded as soon as spawned, cleared when ended.** `state/processes/<slot>.json`
 *   (schema/ProcessRecord.ts) names the command's process (its pid, which is also its process
 *   group's, and its start), the `city` process that owns it, and the endpoint it acts on. The slot
 *   is the endpoint (a caller that names none gets one slot per pid). The record is written (a temp
 *   file renamed over the slot) right after the spawn and removed right after the command has
 *   ended; it is not synced to disk: it answers a crash of `city`, and a crash of the machine
 *   ends the commands too (the boot is part of a process's start). The record follows the spawn
 *   by the time of one small write: a `city` killed in that window (a millisecond or so) leaves
 *   that command unrecorded.
 * - **One command per endpoint, ever.** Before a command is spawned for an endpoint, `vacate`
 *   reads its slot: a record whose process is gone is removed; one whose owner is gone (a `city`
 *   killed with SIGKILL) has its process group ended (SIGTERM, SIGKILL after the grace), then
 *   removed; one whose owner is another live `city` process is waited for (at most the time the
 *   caller gives, then `EndpointBusy`).
 * - **Recovery.** `recover` ends every leftover of an owner that is gone; joints run it when they
 *   take the state-root lock (also after taking over a stale lock) and the daemon at its start.
 * - **A process is its pid and its start** (ProcessIdentity.ts): a pid reused by another process
 *   does not match. Where the platform gives no start (`start: null`), a record is never
 *   signalled: a leftover there is reported and its record removed, so a reused pid is never
 *   killed.
 *   A group is signalled when its leader matches the record, or when the leader is gone but the
 *   group still has members (a pid that still names a process group is not given to a new
 *   process).
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as path from "node:path"
import { EndpointBusy, StateError } from "../../schema/CapabilityErrors.ts"
import { ProcessRecord, type ProcessIdentity as ProcessIdentityT } from "../../schema/ProcessRecord.ts"
import * as TextFile from "../files/TextFile.ts"
import * as ProcessIdentity from "./ProcessIdentity.ts"
import { signalGroup } from "./ChildGroups.ts"
import { fileMode } from "./FileModes.ts"
import { StateRoot } from "./StateRoot.ts"

/**
 * The folder of the records, under the state root.
 * @since 0.1.0
 * @category constants
 */
export const folder = "state/processes"

/**
 * A command as recorded: what `ended` clears.
 * @since 0.1.0
 * @category models
 */
export interface Recorded {
  readonly slot: string
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
 * The records of running commands.
 * @since 0.1.0
 * @category tags
 */
export class ProcessRecords extends Context.Tag("effect-city/ProcessRecords")<ProcessRecords, {
  /** This process, as its records name it. */
  readonly self: ProcessIdentityT
  /**
   * Makes `endpoint`'s slot free for a new command: removes a record of a process that is gone,
   * ends what an owner that is gone left running there, and waits at most `within` for a live
   * owner's command to end.
   */
  readonly vacate: (endpoint: string | undefined, within: Duration.DurationInput) => Effect.Effect<void, EndpointBusy>
  /** Records a command just spawned (its pid leads its process group). */
  readonly spawned: (endpoint: string | undefined, pid: number, command: string) => Effect.Effect<Recorded, StateError>
  /** Clears the record of a command that has ended. Never fails (a record left behind is removed by the next `vacate`). */
  readonly ended: (recorded: Recorded) => Effect.Effect<void>
  /** Ends every leftover of an owner that is gone; what it found. */
  readonly recover: Effect.Effect<ReadonlyArray<Leftover>>
}>() {}

const slotFile = (slot: string) => `${encodeURIComponent(slot)}.json`

/** The slot of a record's file name; `undefined` for a name no slot gives. */
const slotOf = (name: string): string | undefined => {
  try {
    return decodeURIComponent(name.slice(0, -".json".length))
  } catch {
    return undefined
  }
}

const decodeRecord = Schema.decodeUnknownOption(Schema.parseJson(ProcessRecord))

/**
 * Makes the records on the state root.
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: { readonly killGrace?: Duration.DurationInput } = {}): Effect.Effect<
  ProcessRecords["Type"],
  never,
  StateRoot | FileSystem.FileSystem
> =>
  Effect.gen(function*() {
    const state = yield* StateRoot
    const fs = yield* FileSystem.FileSystem
    const killGrace = Duration.decode(options.killGrace ?? Duration.seconds(2))
    const dir = state.resolve(folder)

    const startOf = (pid: number) => Effect.provideService(ProcessIdentity.startOf(pid), FileSystem.FileSystem, fs)
    const running = (identity: ProcessIdentityT) =>
      Effect.provideService(ProcessIdentity.running(identity), FileSystem.FileSystem, fs)
    const self = yield* Effect.provideService(ProcessIdentity.identify(process.pid), FileSystem.FileSystem, fs)

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

    const remove = (slot: string) => fs.remove(path.join(dir, slotFile(slot)), { force: true }).pipe(Effect.ignore)

    const read = (slot: string) =>
      TextFile.read(path.join(dir, slotFile(slot)), TextFile.kinds.stateDocument).pipe(
        Effect.map(Option.flatMap(decodeRecord)),
        // A record that cannot be read or decoded names no process we could end: it is removed.
        Effect.orElseSucceed(() => Option.none<ProcessRecord>()),
        Effect.provideService(FileSystem.FileSystem, fs)
      )

    /** What is to be done with a slot's record: nothing left (`free`), wait for a live owner, or a leftover ended. */
    const settle = (slot: string, record: ProcessRecord) =>
      Effect.gen(function*() {
        const alive = yield* running(record.process)
        const owner = record.owner.pid === self.pid && record.owner.start === self.start ? true : yield* running(record.owner)
        if (alive === false && !signalGroup(record.process.pid, 0)) {
          yield* remove(slot)
          return { _tag: "free" } as const
        }
        if (owner !== false) return { _tag: "owned" } as const
        // The owner is gone: a leftover.
        if (alive === undefined) {
          yield* Effect.logWarning(
            `a command left running by pid ${record.owner.pid} cannot be told from a reused pid (${record.process.pid}): left alone: ${record.command}`
          ).pipe(Effect.annotateLogs({ code: "process.leftover_unverified", slot }))
          yield* remove(slot)
          return { _tag: "leftover", fate: "unverified" } as const
        }
        const gone = yield* endGroup(record.process.pid)
        yield* Effect.logWarning(
          `${gone ? "ended" : "could not end"} a command left running by pid ${record.owner.pid}, which is gone: ` +
            `pid ${record.process.pid}${record.endpoint === null ? "" : ` for ${record.endpoint}`}: ${record.command}`
        ).pipe(Effect.annotateLogs({ code: gone ? "process.leftover_ended" : "process.leftover_alive", slot }))
        if (gone) yield* remove(slot)
        return { _tag: "leftover", fate: gone ? "ended" : "still-running" } as const
      })

    const vacate = (endpoint: string | undefined, within: Duration.DurationInput) => {
      if (endpoint === undefined) return Effect.void
      const wait = Duration.decode(within)
      const once = Effect.flatMap(read(endpoint), (found) =>
        Option.isNone(found)
          ? Effect.void
          : Effect.flatMap(settle(endpoint, found.value), (result) =>
            result._tag === "owned" || (result._tag === "leftover" && result.fate === "still-running")
              ? Effect.fail(found.value)
              : Effect.void))
      return once.pipe(
        Effect.retry(Schedule.spaced(Duration.millis(100)).pipe(Schedule.upTo(wait))),
        Effect.mapError((record) =>
          new EndpointBusy({
            endpoint,
            pid: record.process.pid,
            owner: record.owner.pid,
            waitedMs: Duration.toMillis(wait)
          })
        )
      )
    }

    let counter = 0
    const spawned = (endpoint: string | undefined, pid: number, command: string) =>
      Effect.gen(function*() {
        const slot = endpoint ?? `pid-${pid}`
        const process_ = { pid, start: Option.getOrNull(yield* startOf(pid)) }
        const record: ProcessRecord = {
          schema: 1,
          process: process_,
          owner: self,
          endpoint: endpoint ?? null,
          command,
          since: new Date().toISOString()
        }
        const file = path.join(dir, slotFile(slot))
        const tmp = `${file}.${self.pid}.${++counter}.tmp`
        const write = Effect.zipRight(
          Effect.zipRight(fs.writeFileString(tmp, `${JSON.stringify(record)}\n`, { mode: fileMode }), fs.chmod(tmp, fileMode)),
          fs.rename(tmp, file)
        )
        // The folder is made (0700, with its parents: StateRoot) the first time a write finds it missing.
        yield* write.pipe(
          Effect.catchIf(
            (e) => e._tag === "SystemError" && e.reason === "NotFound",
            () => Effect.zipRight(state.makeDirectory(folder), write)
          )
        )
        return { slot, record }
      }).pipe(
        Effect.mapError((cause) =>
          cause._tag === "StateError"
            ? cause
            : new StateError({
              operation: "write",
              path: path.join(dir, slotFile(endpoint ?? `pid-${pid}`)),
              detail: cause.message,
              cause
            })
        )
      )

    // Only this process writes this slot while its command runs (others wait, or end it only once
    // this process is gone), so the record is removed without being read again.
    const ended = (recorded: Recorded) => remove(recorded.slot)

    const recover = Effect.gen(function*() {
      const names = yield* fs.readDirectory(dir).pipe(Effect.orElseSucceed(() => [] as Array<string>))
      const found: Array<Leftover> = []
      for (const name of names.filter((n) => n.endsWith(".json")).sort()) {
        const slot = slotOf(name)
        if (slot === undefined) continue
        const record = yield* read(slot)
        if (Option.isNone(record)) {
          yield* remove(slot)
          continue
        }
        const result = yield* settle(slot, record.value)
        if (result._tag === "leftover") found.push({ record: record.value, fate: result.fate })
      }
      return found
    })

    return ProcessRecords.of({ self, vacate, spawned, ended, recover })
  })

/**
 * The records as a Layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: { readonly killGrace?: Duration.DurationInput } = {}) =>
  Layer.effect(ProcessRecords, make(options))
