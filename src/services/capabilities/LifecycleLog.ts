/**
 * `$CITY_ROOT/logs/lifecycle.log`: one logfmt line per provisioning call
 * (docs/capability-plugin-lifecycle.md: "Every call is logged to
 * `lifecycle.log` as `ev=capability-provision capability=<name>
 * identity=<runtime>-<peer> occasion=… state=…`").
 *
 * The file is 0600 in a 0700 folder whatever the umask, like everything under
 * the root (`StateRoot`; docs/cli.md, "Files and permissions"): its mode is set
 * after every write (a file left by an older version is tightened too), the
 * rotations keep it, and the old files are tightened once per process. Every
 * value is stored by the rule of `schema/StoredText.ts` (control characters
 * other than newline and tab escaped, at most 4096 characters, the end kept),
 * then written as logfmt (`quote`).
 *
 * Before an append that would take it past `maxBytes` it rotates:
 * `lifecycle.log` → `.1` → `.2` … and the oldest beyond `keep` is deleted.
 * Appends and rotation happen under the root lock held by the joint, so two
 * processes never rotate at once. All of it goes through the platform
 * `FileSystem`.
 *
 * A sweep logs hundreds of calls: it `enqueue`s each line and `flush`es once at
 * the end (and whenever `batchLines` lines are waiting), so its log costs one
 * open, write and fsync per batch instead of a stat, an open, a write and a
 * close per call (bench/sweep.bench.ts). A flushed batch is durable
 * (fsynced) when `flush` returns; the lines, their order and the rotation rule
 * are the same as with `append` (a batch that would take the file past
 * `maxBytes` is split, and the file rotates between the parts). Writing the log never fails the operation: a write error is
 * reported once as a warning through the Effect logger and otherwise ignored.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { storedText } from "../../schema/StoredText.ts"
import { fileMode } from "../root/FileModes.ts"
import { StateRoot } from "../root/StateRoot.ts"
import { layout } from "../root/CityRoot.ts"

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
  /** `enqueue` writes the waiting lines once this many are waiting (default 256). */
  readonly batchLines?: number
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
    /** Queues one line, written by the next `flush` (or at once when `batchLines` are waiting); never fails. */
    readonly enqueue: (fields: ReadonlyArray<readonly [string, LogValue]>) => Effect.Effect<void>
    /** Writes the queued lines, in order, and fsyncs the file; never fails. */
    readonly flush: Effect.Effect<void>
    /**
     * Writes the queued lines, in order, without fsync (they survive a crash of this process, not of
     * the machine); the next `flush` fsyncs them. Never fails.
     */
    readonly write: Effect.Effect<void>
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
 * One logfmt line (without the newline); each value stored by `StoredText.storedText`, then quoted.
 * @since 0.1.0
 * @category utils
 */
export const formatLine = (fields: ReadonlyArray<readonly [string, LogValue]>): string =>
  fields.flatMap(([key, value]) => value === undefined ? [] : [`${key}=${quote(storedText(String(value)))}`]).join(" ")

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
    const file = state.resolve(layout.lifecycleLog)
    const dir = path.dirname(file)
    const maxBytes = config.maxBytes ?? 1024 * 1024
    const keep = Math.max(1, config.keep ?? 5)
    const batchLines = Math.max(1, config.batchLines ?? 256)
    const encoder = new TextEncoder()
    let folderReady = false
    let warned = false

    const missing = (e: { readonly _tag: string; readonly reason?: string }) =>
      e._tag === "SystemError" && e.reason === "NotFound"

    /** Lines written without fsync since the last one. */
    let unsynced = false
    const syncFile = Effect.scoped(Effect.flatMap(fs.open(file, { flag: "a", mode: fileMode }), (handle) => handle.sync))

    const rotate = Effect.gen(function*() {
      // Lines written without fsync go with the file: it is synced before it is rotated away.
      if (unsynced) yield* syncFile
      yield* fs.remove(`${file}.${keep}`, { force: true })
      for (let i = keep - 1; i >= 1; i--) {
        yield* fs.rename(`${file}.${i}`, `${file}.${i + 1}`).pipe(Effect.catchIf(missing, () => Effect.void))
      }
      yield* fs.rename(file, `${file}.1`)
    })

    const prepare = Effect.gen(function*() {
      if (!folderReady) {
        // Made 0700, or tightened (a folder made by an older version); then the old files.
        yield* state.makeDirectory(path.relative(state.root, dir))
        for (let i = 1; i <= keep; i++) {
          yield* fs.chmod(`${file}.${i}`, fileMode).pipe(Effect.catchIf(missing, () => Effect.void))
        }
        folderReady = true
      }
      return yield* fs.stat(file).pipe(
        Effect.map((info) => Number(info.size)),
        Effect.catchIf(missing, () => Effect.succeed(0))
      )
    })

    const write = (line: Uint8Array) =>
      Effect.gen(function*() {
        const size = yield* prepare
        if (size > 0 && size + line.length > maxBytes) yield* rotate
        yield* fs.writeFile(file, line, { flag: "a", mode: fileMode })
        yield* fs.chmod(file, fileMode)
      })

    /** Appends the lines in as few writes as the rotation allows, then fsyncs (unless `sync` is false). */
    const writeAll = (lines: ReadonlyArray<Uint8Array>, sync: boolean) =>
      Effect.gen(function*() {
        let size = yield* prepare
        let next = 0
        while (next < lines.length) {
          // The lines that fit before the file would pass `maxBytes` (at least one).
          let bytes = 0
          let end = next
          while (end < lines.length) {
            const length = lines[end]?.length ?? 0
            if ((end > next || size > 0) && size + bytes + length > maxBytes) break
            bytes += length
            end++
          }
          if (end === next) {
            yield* rotate
            size = 0
            continue
          }
          const chunk = new Uint8Array(bytes)
          let at = 0
          for (const line of lines.slice(next, end)) {
            chunk.set(line, at)
            at += line.length
          }
          yield* Effect.scoped(Effect.gen(function*() {
            const handle = yield* fs.open(file, { flag: "a", mode: fileMode })
            yield* handle.writeAll(chunk)
            if (sync) yield* handle.sync
          }))
          // The umask may have taken bits of `fileMode` when the open created the file.
          if (size === 0) yield* fs.chmod(file, fileMode)
          size += bytes
          next = end
        }
      })

    const reported = <E extends { readonly message: string }>(effect: Effect.Effect<void, E>) =>
      effect.pipe(
        Effect.catchAll((error) =>
          warned ? Effect.void : Effect.suspend(() => {
            warned = true
            return Effect.logWarning(`cannot write ${file}: ${error.message.split("\n")[0]}`)
          })
        )
      )

    // One writer at a time: a flush and an append never interleave their rotation.
    const writer = yield* Effect.makeSemaphore(1)
    const encode = (fields: ReadonlyArray<readonly [string, LogValue]>) => encoder.encode(`${formatLine(fields)}\n`)

    const append = (fields: ReadonlyArray<readonly [string, LogValue]>) =>
      writer.withPermits(1)(reported(write(encode(fields))))

    let queued: Array<Uint8Array> = []
    const flush = writer.withPermits(1)(Effect.suspend(() => {
      const lines = queued
      queued = []
      if (lines.length === 0 && !unsynced) return Effect.void
      const work = lines.length === 0 ? syncFile : writeAll(lines, true)
      return reported(Effect.zipRight(work, Effect.sync(() => {
        unsynced = false
      })))
    }))
    const writeQueued = writer.withPermits(1)(Effect.suspend(() => {
      if (queued.length === 0) return Effect.void
      const lines = queued
      queued = []
      unsynced = true
      return reported(writeAll(lines, false))
    }))

    const enqueue = (fields: ReadonlyArray<readonly [string, LogValue]>) =>
      Effect.suspend(() => {
        queued.push(encode(fields))
        return queued.length >= batchLines ? flush : Effect.void
      })

    return LifecycleLog.of({ append, enqueue, flush, write: writeQueued, file })
  })

/**
 * The lifecycle log as a Layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = (config: LifecycleLogConfig = {}) => Layer.effect(LifecycleLog, make(config))
