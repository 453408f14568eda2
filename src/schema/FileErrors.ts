/**
 * The one refusal of the file reader (`services/files/TextFile.ts`; docs/design.md, "State and
 * durability" and "Errors and output": every failure names the file and the rule).
 *
 * `rule` is already one line (`oneLine`), so the message fits a log line whatever the file held:
 * `is a FIFO, not a regular file`, `is 52428800 bytes, over the 1048576-byte cap for a plugin
 * manifest`, `is not valid UTF-8 (at byte 17)`, `cannot be read: permission denied`.
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { oneLine } from "./OneLine.ts"

/**
 * Why a file was refused: not a regular file (FIFO, device, directory, socket), larger than the
 * cap of its kind, not UTF-8, or unreadable (permissions, I/O error).
 * @since 0.1.0
 * @category models
 */
export const FileProblem = Schema.Literal("not-a-regular-file", "too-large", "invalid-utf8", "unreadable")

/**
 * Why a file was refused.
 * @since 0.1.0
 * @category models
 */
export type FileProblem = typeof FileProblem.Type

/**
 * A file the reader refused, with the rule it broke in one line.
 * @since 0.1.0
 * @category errors
 */
export class FileRefused extends Schema.TaggedError<FileRefused>()("FileRefused", {
  file: Schema.String,
  rule: Schema.String,
  problem: FileProblem
}) {
  /** `<file>: <rule>`; the path is escaped too, so a newline in a file name cannot break the line. */
  override get message() {
    return `${oneLine(this.file, 300)}: ${this.rule}`
  }
}

/**
 * The fields every "this file breaks this rule" error carries: the file, the field (empty when the
 * file as a whole is unusable) and the rule, in one line. The declaration, peer file, host
 * configuration, endpoint records and loader settings errors are this shape, each with its own
 * tag and wording; a manifest's issues are `{ field, rule }` pairs of one file.
 * @since 0.1.0
 * @category errors
 */
export const FileRule = {
  file: Schema.String,
  field: Schema.String,
  rule: Schema.String
} as const
