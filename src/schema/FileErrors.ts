/**
 * A file refused: by the file reader (`FileRefused`, `services/files/TextFile.ts`), or for a rule
 * its content breaks (`InvalidFile`, one error whose `reason` says which file, as the platform's
 * `SystemError.reason` does); docs/design.md, "State and durability" and "Errors and output":
 * every failure names the file and the rule.
 *
 * `rule` is already one line (`oneLine`), so the message fits a log line whatever the file held:
 * `is a FIFO, not a regular file`, `is 52428800 bytes, over the 1048576-byte cap for a plugin
 * manifest`, `is not valid UTF-8 (at byte 17)`, `cannot be read: permission denied`. A file that
 * breaks several rules is an `InvalidFile` with every fault (schema/Faults.ts), its message a line
 * per fault, each a log line of its own.
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as Faults from "./Faults.ts"
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

const where = (file: string, field: string): string => field === "" ? file : `${file}: field "${field}"`

/**
 * Which file broke a rule: a capability declaration, a peer file, `host.json`, a capability's
 * endpoint records (`state/endpoints/<capability>.json`, rewritten by the next call) or the
 * loader's settings (`plugins.json`).
 * @since 0.1.0
 * @category models
 */
export const InvalidFileReason = Schema.Literal("Declaration", "PeerFile", "HostConfig", "EndpointRecords", "LoaderSettings")

/**
 * Which file broke a rule.
 * @since 0.1.0
 * @category models
 */
export type InvalidFileReason = typeof InvalidFileReason.Type

const wording: Record<InvalidFileReason, (file: string, field: string, rule: string) => string> = {
  Declaration: (file, field, rule) => `invalid capability declaration ${where(file, field)}: ${rule}`,
  PeerFile: (file, field, rule) => `invalid peer file ${where(file, field)}: ${rule}`,
  HostConfig: (file, field, rule) => `invalid host configuration ${where(file, field)}: ${rule}`,
  EndpointRecords: (file, field, rule) => `invalid endpoint records ${where(file, field)}: ${rule} (rewritten by the next call)`,
  LoaderSettings: (file, field, rule) => `${file}: ${field === "" ? "" : `${field}: `}${rule}`
}

/**
 * A file that breaks rules: the file, and each fault, a field (empty when the file as a whole is
 * unusable) and a rule, on a line of its own (docs/cli.md, "Declaration rules": every fault of the
 * file at once, at most 20 lines, then `… and N more faults`); refused input (docs/cli.md, "Exit
 * codes"). `field` and `rule` are the first fault's, so one fault reads as it always did. Its `name`
 * is `Invalid<reason>` (`InvalidDeclaration`, `InvalidPeerFile`, ...), the name `--json` prints as
 * the error's `_tag` and an invalid entry's `kind` (docs/cli.md, "`--json` fields").
 * @since 0.1.0
 * @category errors
 */
export class InvalidFile extends Schema.TaggedError<InvalidFile>()("InvalidFile", {
  reason: InvalidFileReason,
  file: Schema.String,
  /** The first fault's field. */
  field: Schema.String,
  /** The first fault's rule. */
  rule: Schema.String,
  /** Every fault, the first `Faults.faultsShown` of them (`Faults.collect`). */
  faults: Schema.Array(Faults.Fault),
  /** How many faults there were beyond `faults`. */
  moreFaults: Schema.optionalWith(Schema.Number, { default: () => 0 }),
  /** What the operator can do about it, when a verb refused because of this file. */
  hint: Schema.optional(Schema.String)
}) {
  /** `Invalid<reason>`, one name per kind of file. */
  override get name(): `Invalid${InvalidFileReason}` {
    return `Invalid${this.reason}`
  }
  /**
   * One line per fault, each naming the file, the field and the rule, then `… and N more faults`
   * when some were not kept; the hint ends the last line. The CLI prints each as a line of its own.
   */
  get lines(): ReadonlyArray<string> {
    const lines = Faults.lines(this, ({ field, rule }) => wording[this.reason](this.file, field, rule))
    return this.hint === undefined ? lines : [...lines.slice(0, -1), `${lines.at(-1) ?? ""}; ${this.hint}`]
  }
  override get message() {
    return this.lines.join("\n")
  }
}
