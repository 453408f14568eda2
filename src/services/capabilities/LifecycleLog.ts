/**
 * `$CITY_ROOT/logs/lifecycle.log`: one logfmt line per provisioning call
 * (spec/capability-plugin-lifecycle.md: "Every call is logged to
 * `lifecycle.log` as `ev=capability-provision capability=<name>
 * identity=<runtime>-<peer> occasion=… state=…`").
 *
 * The file is created 0600 in a 0700 folder (its lines carry stderr tails).
 * Before an append that would take it past `maxBytes` it rotates:
 * `lifecycle.log` → `.1` → `.2` … and the oldest beyond `keep` is deleted.
 * Appends and rotation happen under the root lock held by the joint, so two
 * processes never rotate at once. All of it goes through the platform
 * `FileSystem`. Writing the log never fails the operation: a write error is
 * reported once as a warning through the Effect logger and otherwise ignored.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { StateRoot } from "./StateRoot.ts"

/**
 * The lifecycle log, under the state root.
 * @since 0.1.0
 * @category constants
 */
export const logFile = "logs/lifecycle.log"

/**
 * When the log rotates and how many old files it keeps.
 * @since 0.1.0
 * @category models
 */
export interface LifecycleLogConfig {
  /** Rotate before the file grows past this many bytes (default 1 MiB). */
  readonly maxBytes?: number
  /** Old files kept: `lifecycle.log.1` … `.keep` (default 5). */
  readonly keep?: number
}

/**
 * A field value: `undefined` fields are left out.
 * @since 0.1.0
 * @category models
 */
export type LogValue = string | number | undefined

/**
 * Appends one logfmt line per provisioning call, rotating the file.
 * @since 0.1.0
 * @category tags
 */
export class LifecycleLog extends Context.Tag("effect-city/LifecycleLog")<
  LifecycleLog,
  {
    /** Appends one line; never fails. Fields keep their order. */
    readonly append: (fields: ReadonlyArray<readonly [string, LogValue]>) => Effect.Effect<void>
    readonly file: string
  }
>() {}

const needsQuotes = /[\s"=\\]|^$/

/**
 * A logfmt value: bare when safe, else double-quoted with `\\`, `"`, newlines and tabs escaped.
 * @since 0.1.0
 * @category utils
 */
export const quote = (value: string): string =>
  needsQuotes.test(value) || /[\u0000-\u001f\u007f]/.test(value)
    ? `"${
      value.replace(/[\\"\u0000-\u001f\u007f]/g, (c) =>
        c === "\\" ? "\\\\" : c === "\"" ? "\\\"" : c === "\n" ? "\\n" : c === "\t" ? "\\t" : c === "\r"
          ? "\\r"
          : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
    }"`
    : value

/**
 * One logfmt line (without the newline).
 * @since 0.1.0
 * @category utils
 */
export const formatLine = (fields: ReadonlyArray<readonly [string, LogValue]>): string =>
  fields.flatMap(([key, value]) => value === undefined ? [] : [`${key}=${quote(String(value))}`]).join(" ")

/**
 * Makes the lifecycle log on the state root.
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  config: LifecycleLogConfig = {}
): Effect.Effect<LifecycleLog["Type"], never, StateRoot | FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const state = yield* StateRoot
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const file = state.resolve(logFile)
    const dir = path.dirname(file)
    const maxBytes = config.maxBytes ?? 1024 * 1024
    const keep = Math.max(1, config.keep ?? 5)
    const encoder = new TextEncoder()
    let folderReady = false
    let warned = false

    const missing = (e: { readonly _tag: string; readonly reason?: string }) =>
      e._tag === "SystemError" && e.reason === "NotFound"

    const rotate = Effect.gen(function*() {
      yield* fs.remove(`${file}.${keep}`, { force: true })
      for (let i = keep - 1; i >= 1; i--) {
        yield* fs.rename(`${file}.${i}`, `${file}.${i + 1}`).pipe(Effect.catchIf(missing, () => Effect.void))
      }
      yield* fs.rename(file, `${file}.1`)
    })

    const write = (line: Uint8Array) =>
      Effect.gen(function*() {
        if (!folderReady) {
          yield* fs.makeDirectory(dir, { recursive: true, mode: 0o700 })
          // A folder made before (or by an older version) is tightened too.
          yield* fs.chmod(dir, 0o700)
          folderReady = true
        }
        const size = yield* fs.stat(file).pipe(
          Effect.map((info) => Number(info.size)),
          Effect.catchIf(missing, () => Effect.succeed(0))
        )
        if (size > 0 && size + line.length > maxBytes) yield* rotate
        yield* fs.writeFile(file, line, { flag: "a", mode: 0o600 })
      })

    const append = (fields: ReadonlyArray<readonly [string, LogValue]>) =>
      write(encoder.encode(`${formatLine(fields)}\n`)).pipe(
        Effect.catchAll((error) =>
          warned ? Effect.void : Effect.suspend(() => {
            warned = true
            return Effect.logWarning(`cannot write ${file}: ${error.message.split("\n")[0]}`)
          })
        )
      )

    return LifecycleLog.of({ append, file })
  })

/**
 * The lifecycle log as a Layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = (config: LifecycleLogConfig = {}) => Layer.effect(LifecycleLog, make(config))
