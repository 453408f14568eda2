/**
 * What every run of `city` may print before a verb's own module is loaded: the escape of text
 * from outside, one JSON document, a failure's envelope, the CLI's logger, the end of the
 * progress line. The dispatcher (`cli.ts`) and the binary use only these, so `city --help` and a
 * usage error load none of the verbs' services (`verbs.ts`, "Loaded when run"); `output.ts`
 * renders the verbs' results with them.
 * @since 0.1.0
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as HashSet from "effect/HashSet"
import * as Logger from "effect/Logger"
import * as Ref from "effect/Ref"
import { printedTag } from "../schema/ErrorFamily.ts"
import { InvalidFile } from "../schema/FileErrors.ts"
import { PluginLoadError } from "../schema/LoaderErrors.ts"
import { controlCharacter } from "../schema/Printable.ts"
import { Invocation, stderrColor } from "./invocation.ts"

const everyControl = new RegExp(controlCharacter.source, "g")

/**
 * Text from outside (a stored declaration or peer file, a record, a plugin's stderr, a file name,
 * a rule quoting a value, an argument) made safe for a terminal: every character the Printable
 * rule refuses (src/schema/Printable.ts: C0 with newline and ESC, DEL, C1, the bidirectional
 * controls, the line separators) is written as `\uXXXX`, as the lifecycle log writes them. It is
 * the one escape of the CLI (docs/cli.md, "Printing"): data written before the rule, and records
 * no rule refuses, still cannot forge a line or drive the terminal. Idempotent: the escaped form
 * has no such character left.
 */
export const escapeControl = (text: string): string => text.replace(everyControl, escapeOne)

const escapeOne = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`

/**
 * A line of output whose interpolated values are escaped (`escapeControl`); the literal parts are
 * the CLI's own: `` safe`registered ${name} ${version}` ``.
 */
export const safe = (parts: TemplateStringsArray, ...values: ReadonlyArray<unknown>): string =>
  parts.reduce((acc, part, i) => acc + part + (i < values.length ? escapeControl(String(values[i])) : ""), "")

/** One line of at most `max` characters (the end is kept: the reason is usually last), control characters escaped. */
export const oneLine = (text: string, max = 160): string => {
  const flat = escapeControl(text.replace(/\s+/g, " ").trim())
  return flat.length > max ? `…${flat.slice(flat.length - max)}` : flat
}

/**
 * The CLI's only logger: a warning logged by a service (the log cannot be written, the root lock was
 * compromised) is one `city: warning: …` line on stderr; errors likewise; nothing else is printed.
 * It replaces every other logger (the runtime's pretty one would print a second, timestamped line).
 */
export const logger = Logger.make(({ logLevel, message }) => {
  if (logLevel._tag !== "Warning" && logLevel._tag !== "Error" && logLevel._tag !== "Fatal") return
  const text = (Array.isArray(message) ? message : [message]).map(String).join(" ")
  globalThis.console.error(`city: ${logLevel._tag === "Warning" ? "warning" : "error"}: ${oneLine(text, 1000)}`)
})

/** Runs `self` with the CLI's logger as the only one. */
export const withLogger = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.locally(self, FiberRef.currentLoggers, HashSet.make(logger))

/** Ends the progress line if one is on screen: erased, or (`interrupted`) kept and ended. */
export const endProgress = (interrupted = false) =>
  Effect.gen(function*() {
    const invocation = yield* Invocation
    if (!(yield* Ref.getAndSet(invocation.progressShown, false))) return
    if (interrupted) return yield* invocation.writeStderr("\n")
    yield* invocation.writeStderr(stderrColor(invocation) ? "\r\u001b[K" : `\r${" ".repeat(60)}\r`)
  })

/**
 * One JSON document on stdout. `JSON.stringify` escapes C0 inside strings (`\n`, `\u001b`) but
 * writes DEL, C1, the bidirectional controls and the line separators as they are; those are
 * written as `\uXXXX` here (outside strings the text is ASCII, its C0 only the layout's newlines,
 * so only string contents change and a parser reads back the same values): a document shown on a
 * terminal cannot drive it either.
 */
export const printJson = (value: unknown, layout: "document" | "line" = "document") =>
  Console.log(
    JSON.stringify(value, null, layout === "line" ? undefined : 2).replace(everyControl, (c) => c < " " ? c : escapeOne(c))
  )

/**
 * The lines of an error's message: one per fault of a refused file (an `InvalidFile`, a
 * `ManifestInvalid`: docs/cli.md, "Declaration rules"), each to be printed as a line of its own;
 * any other error's message is one line. The lines are the error's own, never its message split at
 * newlines, so a file name holding a newline still cannot forge a line (`oneLine` escapes it).
 */
export const errorLines = (error: { readonly message: string }): ReadonlyArray<string> =>
  error instanceof InvalidFile || error instanceof PluginLoadError ? error.lines : [error.message]

/** Field names of errors that the glossary words differently. */
const errorFieldNames: Record<string, string> = {
  personality: "peer",
  identity: "endpoint",
  waitedMs: "waited_ms",
  moreFaults: "more_faults"
}

/**
 * Fields a family renamed when its tags became its reasons, printed under their old names so that
 * `--json` reads as before (docs/cli.md, "Error tags and the library's error families"), by the
 * error's name.
 */
const renamedFields: Record<string, Record<string, string>> = {
  PluginRootUnreadable: { detail: "reason" },
  ResultNotJson: { detail: "reason" },
  ControlChannelUnreachable: { detail: "reason" }
}

/**
 * An error's own fields in the glossary's words; `cause` (not data) is left out. An error is
 * tagged by its name: an InvalidFile's is one per kind of file (`InvalidDeclaration`, ...), a
 * family's is its reason, the tag it had before (docs/cli.md, "Error tags and the library's error
 * families"), and the family's `reason` is then not repeated.
 */
export const errorJson = (error: { readonly _tag: string; readonly message: string }): { readonly _tag: string; readonly message: string; readonly [field: string]: unknown } => {
  const tag = error instanceof InvalidFile ? error.name : printedTag(error) ?? error._tag
  const named = tag !== error._tag
  const renamed = renamedFields[tag] ?? {}
  const fields: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(error)) {
    if (key === "cause" || key === "_tag" || key === "message" || (named && key === "reason")) continue
    fields[renamed[key] ?? errorFieldNames[key] ?? key] = value
  }
  return { ...fields, _tag: tag, message: error.message }
}

/** A failure's document, `{ ok: false, verb, error }`, the error's fields in the glossary's words. */
export const printFailure = (verb: string, error: { readonly _tag: string; readonly message: string }, layout?: "line") =>
  printJson({ ok: false, verb, error: errorJson(error) }, layout)
