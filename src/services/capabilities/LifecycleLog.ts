/**
 * `$CITY_ROOT/logs/lifecycle.log`: one logfmt line per provisioning call
 * (spec/capability-plugin-lifecycle.md: "Every call is logged to
 * `lifecycle.log` as `ev=capability-provision capability=<name>
 * identity=<runtime>-<peer> occasion=… state=…`").
 *
 * The file is created 0600. Before an append that would take it past `maxBytes`
 * it rotates: `lifecycle.log` → `.1` → `.2` … and the oldest beyond `keep` is
 * deleted. Appends and rotation happen under the root lock held by the joint, so
 * two processes never rotate at once. Writing the log never fails the
 * operation: a write error is reported once on stderr and otherwise ignored.
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import { dirname } from "node:path"
import { StateRoot } from "./StateRoot.ts"

export const logFile = "logs/lifecycle.log"

export interface LifecycleLogConfig {
  /** Rotate before the file grows past this many bytes (default 1 MiB). */
  readonly maxBytes?: number
  /** Old files kept: `lifecycle.log.1` … `.keep` (default 5). */
  readonly keep?: number
}

/** A field value: `undefined` fields are left out. */
export type LogValue = string | number | undefined

export class LifecycleLog extends Context.Tag("effect-city/LifecycleLog")<
  LifecycleLog,
  {
    /** Appends one line; never fails. Fields keep their order. */
    readonly append: (fields: ReadonlyArray<readonly [string, LogValue]>) => Effect.Effect<void>
    readonly file: string
  }
>() {}

const needsQuotes = /[\s"=\\]|^$/

/** A logfmt value: bare when safe, else double-quoted with `\\`, `"`, newlines and tabs escaped. */
export const quote = (value: string): string =>
  needsQuotes.test(value) || /[\u0000-\u001f\u007f]/.test(value)
    ? `"${
      value.replace(/[\\"\u0000-\u001f\u007f]/g, (c) =>
        c === "\\" ? "\\\\" : c === "\"" ? "\\\"" : c === "\n" ? "\\n" : c === "\t" ? "\\t" : c === "\r"
          ? "\\r"
          : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
    }"`
    : value

/** One logfmt line (without the newline). */
export const formatLine = (fields: ReadonlyArray<readonly [string, LogValue]>): string =>
  fields.flatMap(([key, value]) => value === undefined ? [] : [`${key}=${quote(String(value))}`]).join(" ")

export const make = (config: LifecycleLogConfig = {}): Effect.Effect<LifecycleLog["Type"], never, StateRoot> =>
  Effect.gen(function*() {
    const state = yield* StateRoot
    const file = state.resolve(logFile)
    const maxBytes = config.maxBytes ?? 1024 * 1024
    const keep = Math.max(1, config.keep ?? 5)
    let warned = false

    const rotate = () => {
      fs.rmSync(`${file}.${keep}`, { force: true })
      for (let i = keep - 1; i >= 1; i--) {
        if (fs.existsSync(`${file}.${i}`)) fs.renameSync(`${file}.${i}`, `${file}.${i + 1}`)
      }
      fs.renameSync(file, `${file}.1`)
    }

    // One line is a few hundred bytes: synchronous calls (stat, open, write, close) cost a
    // few microseconds, far less than a round trip through the thread pool per call of a
    // 500-endpoint sweep.
    const write = (line: string) => {
      const size = fs.statSync(file, { throwIfNoEntry: false })?.size
      if (size === undefined) fs.mkdirSync(dirname(file), { recursive: true })
      else if (size > 0 && size + Buffer.byteLength(line) > maxBytes) rotate()
      fs.appendFileSync(file, line, { mode: 0o600 })
    }

    const append = (fields: ReadonlyArray<readonly [string, LogValue]>) =>
      Effect.try({
        try: () => write(`${formatLine(fields)}\n`),
        catch: (error) => error instanceof Error ? error.message : String(error)
      }).pipe(
        Effect.catchAllCause((cause) =>
          Effect.sync(() => {
            if (!warned) {
              warned = true
              const reason = Cause.failureOption(cause).pipe(Option.getOrElse(() => Cause.pretty(cause)))
              process.stderr.write(`city: warning: cannot write ${file}: ${reason.split("\n")[0]}\n`)
            }
          })
        )
      )

    return LifecycleLog.of({ append, file })
  })

export const layer = (config: LifecycleLogConfig = {}) => Layer.effect(LifecycleLog, make(config))
