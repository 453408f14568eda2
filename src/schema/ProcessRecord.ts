/**
 * The record of one running command (docs/cli.md, "Commands and signals"): written under
 * `state/processes/` as soon as the command is spawned and removed when it has ended, so that a
 * `city` process killed with SIGKILL leaves behind what it was running, and the next one to take
 * the state root can end it before it runs anything for the same endpoint.
 *
 * A process is named by its pid (it leads its own process group, so the pid is also the group's)
 * and its start: the boot and the start time the kernel gives it (`/proc/<pid>/stat`), so a pid
 * reused by an unrelated process after a crash or a reboot is never mistaken for it. Where the
 * platform gives no start time, `start` is `null` and such a record is never signalled (see
 * ProcessRecords.ts).
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
 * endpoint it acts on (when the caller named one) and what it runs.
 * @since 0.1.0
 * @category schemas
 */
export const ProcessRecord = Schema.Struct({
  schema: Schema.Literal(1),
  process: ProcessIdentity,
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
