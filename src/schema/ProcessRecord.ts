/**
 * The record of one running command (docs/cli.md, "Commands and signals"), and the journal lines
 * it is kept in: each `city` process appends to its own journal under `state/processes/` a line
 * as soon as a command is spawned and another when it has ended, so that a `city` process killed
 * with SIGKILL leaves behind what it was running, and the next one to take the state root can end
 * it before it runs anything for the same endpoint.
 *
 * A `city` process is named by its pid and its start: the boot and the start time the kernel gives
 * it (`/proc/<pid>/stat`); a command by its pid (it leads its own process group, so the pid is also
 * the group's) and a bound on its start (ProcessIdentity.ts): either way a pid reused by an
 * unrelated process after a crash or a reboot is never mistaken for it. Where the platform gives no
 * start time, the start is `null` and such a record is never signalled (see ProcessRecords.ts).
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * A process as `city` names it: its pid and its start (`null` where the platform gives none).
 * @since 0.1.0
 * @category schemas
 */
export const ProcessIdentity = Schema.Struct({
  pid: Schema.Int.pipe(Schema.positive()),
  start: Schema.NullOr(Schema.String)
})
/**
 * A process as `city` names it.
 * @since 0.1.0
 * @category models
 */
export type ProcessIdentity = typeof ProcessIdentity.Type

/**
 * One running command: the process (and group) it is, the `city` process that started it, the
 * endpoint it acts on (when the caller named one) and what it runs; a journal's header and one of
 * its `spawned` lines make one.
 * @since 0.1.0
 * @category schemas
 */
export const ProcessRecord = Schema.Struct({
  /** The command's pid, also its process group's. */
  pid: Schema.Int.pipe(Schema.positive()),
  /**
   * A bound on its start (`boot:ticks`, see ProcessIdentity.ts `startBound`): a process of that
   * pid that started later is another one. `null` where the platform gives no start.
   */
  startedBy: Schema.NullOr(Schema.String),
  owner: ProcessIdentity,
  /** The endpoint the command acts on (`<capability> <runtime>-<personality>`, or a host operation); one at a time. */
  endpoint: Schema.NullOr(Schema.String),
  command: Schema.String,
  /** When it was spawned (ISO 8601). */
  since: Schema.String
})
/**
 * One running command, as decoded.
 * @since 0.1.0
 * @category models
 */
export type ProcessRecord = typeof ProcessRecord.Type

/**
 * The first line of a journal: the `city` process whose commands it records.
 * @since 0.1.0
 * @category schemas
 */
export const JournalHeader = Schema.Struct({
  schema: Schema.Literal(1),
  owner: ProcessIdentity
})

/**
 * A journal line: a command was spawned (its record without the owner, which the header names).
 * @since 0.1.0
 * @category schemas
 */
export const JournalSpawned = Schema.Struct({
  op: Schema.Literal("spawned"),
  pid: Schema.Int.pipe(Schema.positive()),
  startedBy: Schema.NullOr(Schema.String),
  endpoint: Schema.NullOr(Schema.String),
  command: Schema.String,
  since: Schema.String
})

/**
 * A journal line: the command of this pid has ended.
 * @since 0.1.0
 * @category schemas
 */
export const JournalEnded = Schema.Struct({
  op: Schema.Literal("ended"),
  pid: Schema.Int.pipe(Schema.positive())
})

/**
 * Any line of a journal after the header.
 * @since 0.1.0
 * @category schemas
 */
export const JournalEntry = Schema.Union(JournalSpawned, JournalEnded)
/**
 * Any line of a journal after the header.
 * @since 0.1.0
 * @category models
 */
export type JournalEntry = typeof JournalEntry.Type
