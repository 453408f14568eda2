/**
 * The one reader of every file the project reads (docs/design.md, "State and durability": "Every file
 * is read through one reader ..."): on the platform `FileSystem` (a test layer can replace it), never
 * synchronous, bounded in time and memory whatever the path turns out to be.
 *
 * `read(file, kind)` gives the text of a regular file, `Option.none()` when it does not exist, or
 * `FileRefused` with a one-line rule (`oneLine`) behind the path. `readBytes` is the same without
 * the UTF-8 decoding (for content hashes).
 *
 * Decisions:
 * - **Regular files only, checked before opening.** `fs.stat` follows symlinks, so a link to
 *   `/dev/zero` is a `CharacterDevice`, a FIFO a `FIFO`, a folder a `Directory`: each is refused
 *   without being opened. Opening a FIFO blocks until a writer comes, and reading `/dev/zero` never
 *   ends; stat does neither.
 * - **Caps per kind** (`kinds`), refused with the size and the cap in the rule:
 *   - 64 KiB for a plugin's prompt file: its text is put into the system content of every call.
 *   - 1 MiB for what a person writes by hand: a plugin manifest, the loader's
 *     settings (`plugins.json`), the host configuration (`host.json`), a capability declaration.
 *     The largest real ones are a few KiB; 1 MiB is hundreds of times that and still small enough
 *     to parse at once and to read for each of a thousand plugins.
 *   - 16 MiB for state documents the core writes (peer files, endpoint records, owed-work records,
 *     fingerprint records, turn requests and results). They hold command stderr tails, tool outputs
 *     and per-file fingerprints, so they are larger and less predictable than hand-written files;
 *     16 MiB bounds a sweep that reads hundreds of them one after another, while leaving three
 *     orders of magnitude over the largest one a test writes.
 *   - 16 MiB for a runtime's launch-read surface files (fingerprinted and searched for tools):
 *     they belong to the agent runtime, not to us, so the cap only keeps a hash or a parse bounded.
 * - **Never more than cap + 1 bytes.** The file is opened and read in a Scope (closed on every
 *   exit), into buffers that add up to at most cap + 1 bytes, until EOF; so a file that grew, or was
 *   swapped for a larger one, after the stat is still refused as too large without being read whole
 *   (`fs.readFile` would read it whole). The open file is not checked again with `fstat`: a device
 *   swapped in after the stat can give at most cap + 1 bytes, which then fail as too large or as
 *   bad text, and a FIFO swapped in blocks in `open`, before any check could run (see the race
 *   below). A read that returns fewer bytes than asked ends the loop: on a regular file that is
 *   end of file.
 * - **UTF-8, strictly.** A byte-order mark is accepted and stripped (`TextDecoder`'s default);
 *   invalid UTF-8 is refused with the byte offset of the first ill-formed sequence (counted from the
 *   start of the file, mark included), never replaced with U+FFFD silently.
 * - **Absent.** `NotFound`, and `ENOTDIR` (a path under a plain file), give `Option.none()`, so
 *   callers keep their "absent" meaning; a file removed between stat and open is absent too.
 * - **The residual race, honestly.** Between `stat` and `open` the path can be swapped for a FIFO;
 *   `open` then waits for a writer. That wait holds one thread of libuv's pool (the platform's
 *   `open` is asynchronous), not the event loop: the process still answers signals and timers. The
 *   reading fiber itself waits (the platform acquires an open file uninterruptibly, so that the
 *   descriptor cannot leak) until a writer opens the FIFO. Opening with `O_NONBLOCK` would close
 *   the race, but the platform's `open` takes no such flag; the window is one stat-to-open, and only
 *   someone who can write the folder can use it.
 * @since 0.1.0
 */
import type * as PlatformError from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { FileRefused } from "../../schema/FileErrors.ts"
import { oneLine } from "../../schema/OneLine.ts"

/**
 * A kind of file: its name in words (used in refusals) and its size cap in bytes.
 * @since 0.1.0
 * @category models
 */
export interface FileKind {
  readonly name: string
  readonly maxBytes: number
}

const MiB = 1024 * 1024

/**
 * The kinds of file the project reads, with their caps (see the module comment for the choice).
 * @since 0.1.0
 * @category constants
 */
export const kinds = {
  /** `city-plugin.json`: 1 MiB. */
  manifest: { name: "plugin manifest", maxBytes: MiB },
  /** A plugin's `prompt/*.md` file: 64 KiB (it becomes system text of every call). */
  prompt: { name: "prompt file", maxBytes: 64 * 1024 },
  /** The loader's `plugins.json`: 1 MiB. */
  settings: { name: "plugin settings file", maxBytes: MiB },
  /** `$CITY_ROOT/host.json`: 1 MiB. */
  hostConfig: { name: "host configuration", maxBytes: MiB },
  /** A capability declaration (the input of `register`, and the stored ones): 1 MiB. */
  declaration: { name: "capability declaration", maxBytes: MiB },
  /** A JSON document of the state root (peers, endpoint records, owed work, fingerprints, turns): 16 MiB. */
  stateDocument: { name: "state document", maxBytes: 16 * MiB },
  /** The status page's bearer token (`--http-token-file`): 4 KiB. */
  token: { name: "token file", maxBytes: 4096 },
  /** A file of the status page (its stylesheet, its script), shipped with the package: 1 MiB. */
  pageAsset: { name: "status page asset", maxBytes: MiB },
  /** A runtime's launch-read surface file (fingerprinted, searched for tools): 16 MiB. */
  launchFile: { name: "launch-read surface file", maxBytes: 16 * MiB }
} as const satisfies Record<string, FileKind>

/** The longest rule this reader gives (the path comes in front of it, in the message). */
const ruleMax = 200

/** How much a read asks for after the first one (the first asks for the stat's size + 1). */
const chunkBytes = 64 * 1024

const refuse = (file: string, problem: FileRefused["problem"], rule: string) =>
  new FileRefused({ file, problem, rule: oneLine(rule, ruleMax) })

const typeNames: Record<FileSystem.File.Type, string> = {
  File: "a regular file",
  Directory: "a directory",
  SymbolicLink: "a symbolic link",
  BlockDevice: "a block device",
  CharacterDevice: "a character device",
  FIFO: "a FIFO",
  Socket: "a socket",
  Unknown: "of an unknown type"
}

const codeOf = (cause: unknown): unknown =>
  typeof cause === "object" && cause !== null && "code" in cause ? cause.code : undefined

/** A platform error that means "there is no such file" (`NotFound`, or `ENOTDIR`: a path under a plain file). */
const isAbsent = (error: PlatformError.PlatformError): boolean =>
  error._tag === "SystemError" &&
  (error.reason === "NotFound" ||
    codeOf(error.cause) === "ENOTDIR" ||
    (error.description?.startsWith("ENOTDIR") ?? false))

const unreadable = (file: string, error: PlatformError.PlatformError): FileRefused =>
  refuse(
    file,
    "unreadable",
    error._tag === "SystemError" && error.reason === "PermissionDenied"
      ? "cannot be read: permission denied"
      : error._tag === "SystemError" && codeOf(error.cause) === "ELOOP"
      ? "cannot be read: too many levels of symbolic links"
      : `cannot be read: ${error._tag === "SystemError" ? `${error.reason} (${error.description ?? error.method})` : error.message}`
  )

const tooLarge = (file: string, kind: FileKind, size: string) =>
  refuse(file, "too-large", `is ${size} bytes, over the ${kind.maxBytes}-byte cap for a ${kind.name}`)

/** The platform error as a refusal, or `None` (absent). */
const absentOr = (file: string) => (error: PlatformError.PlatformError) =>
  isAbsent(error) ? Effect.succeed(Option.none()) : Effect.fail(unreadable(file, error))

/** Refuses anything but a regular file of at most the cap. */
const check = (file: string, kind: FileKind, info: FileSystem.File.Info): Effect.Effect<number, FileRefused> =>
  info.type !== "File"
    ? Effect.fail(refuse(file, "not-a-regular-file", `is ${typeNames[info.type]}, not a regular file`))
    : info.size > BigInt(kind.maxBytes)
    ? Effect.fail(tooLarge(file, kind, info.size.toString()))
    : Effect.succeed(Number(info.size))

/** Reads an open regular file to its end, in buffers adding up to at most cap + 1 bytes. */
const readBounded = (file: string, kind: FileKind, handle: FileSystem.File, expected: number) =>
  Effect.gen(function*() {
    const limit = kind.maxBytes + 1
    const chunks: Array<Uint8Array> = []
    let total = 0
    let ask = Math.min(expected + 1, limit)
    while (ask > 0) {
      const chunk = yield* handle.readAlloc(ask)
      if (Option.isNone(chunk)) break
      chunks.push(chunk.value)
      total += chunk.value.length
      if (chunk.value.length < ask) break // a short read of a regular file: end of file
      ask = Math.min(chunkBytes, limit - total)
    }
    if (total > kind.maxBytes) return yield* Effect.fail(tooLarge(file, kind, `more than ${kind.maxBytes}`))
    if (chunks.length === 1) return chunks[0] ?? new Uint8Array(0)
    const bytes = new Uint8Array(total)
    let at = 0
    for (const chunk of chunks) {
      bytes.set(chunk, at)
      at += chunk.length
    }
    return bytes
  }).pipe(Effect.mapError((e) => e._tag === "FileRefused" ? e : unreadable(file, e)))

/**
 * The kind of `file` as the reader sees it before opening it: `None` when it does not exist, its
 * `stat` when it is a regular file within the cap of its kind, else refused. A caller that keeps
 * what it read by size and modification time (discovery) looks here first and reads only what
 * changed, with {@link readChecked}.
 * @since 0.1.0
 * @category utils
 */
export const inspect = (
  file: string,
  kind: FileKind
): Effect.Effect<Option.Option<FileSystem.File.Info>, FileRefused, FileSystem.FileSystem> =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    fs.stat(file).pipe(
      Effect.map(Option.some),
      Effect.catchAll(absentOr(file)),
      Effect.tap((info) => (Option.isSome(info) ? check(file, kind, info.value) : Effect.void))
    ))

/**
 * The bytes of a file {@link inspect} accepted (`info` is what it gave), or `None` when it went
 * away since. Never reads more than cap + 1 bytes: a file that grew, or was swapped for a larger
 * file or a device since the stat, is refused as too large without being read whole.
 * @since 0.1.0
 * @category utils
 */
export const readCheckedBytes = (
  file: string,
  kind: FileKind,
  info: FileSystem.File.Info
): Effect.Effect<Option.Option<Uint8Array>, FileRefused, FileSystem.FileSystem> =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    Effect.scoped(
      Effect.gen(function*() {
        const opened = yield* fs.open(file, { flag: "r" }).pipe(Effect.map(Option.some), Effect.catchAll(absentOr(file)))
        if (Option.isNone(opened)) return Option.none()
        return Option.some(yield* readBounded(file, kind, opened.value, Number(info.size)))
      })
    ))

/**
 * The bytes of a regular file, or `None` when it does not exist; refused when it is not a regular
 * file, is larger than the cap of its kind, or cannot be read. Never reads more than cap + 1 bytes.
 * @since 0.1.0
 * @category utils
 */
export const readBytes = (
  file: string,
  kind: FileKind
): Effect.Effect<Option.Option<Uint8Array>, FileRefused, FileSystem.FileSystem> =>
  Effect.flatMap(inspect(file, kind), (info) =>
    Option.isNone(info) ? Effect.succeed(Option.none()) : readCheckedBytes(file, kind, info.value))

const utf8 = new TextDecoder("utf-8", { fatal: true })

/**
 * The offset of the first ill-formed UTF-8 sequence in `bytes` (per the WHATWG decoder: overlong
 * forms, surrogates, code points over U+10FFFF and truncated sequences are ill-formed), or -1.
 */
const firstInvalidUtf8 = (bytes: Uint8Array): number => {
  let i = 0
  while (i < bytes.length) {
    const b = bytes[i] ?? 0
    if (b < 0x80) {
      i++
      continue
    }
    let need: number
    let lower = 0x80
    let upper = 0xbf
    if (b >= 0xc2 && b <= 0xdf) need = 1
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2
      if (b === 0xe0) lower = 0xa0
      if (b === 0xed) upper = 0x9f
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3
      if (b === 0xf0) lower = 0x90
      if (b === 0xf4) upper = 0x8f
    } else return i
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k]
      if (c === undefined || c < (k === 1 ? lower : 0x80) || c > (k === 1 ? upper : 0xbf)) return i
    }
    i += need + 1
  }
  return -1
}

/** The text of `bytes`, a leading byte-order mark stripped; `None` when they are not UTF-8. */
const decodeUtf8 = (bytes: Uint8Array): Option.Option<string> => {
  try {
    return Option.some(utf8.decode(bytes))
  } catch {
    return Option.none()
  }
}

/** The text of `bytes` read from `file`, or the refusal naming the first bad byte. */
const decoded = (file: string, bytes: Option.Option<Uint8Array>): Effect.Effect<Option.Option<string>, FileRefused> => {
  if (Option.isNone(bytes)) return Effect.succeed(Option.none())
  const text = decodeUtf8(bytes.value)
  return Option.isSome(text)
    ? Effect.succeed(text)
    : Effect.fail(refuse(file, "invalid-utf8", `is not valid UTF-8 (at byte ${Math.max(0, firstInvalidUtf8(bytes.value))})`))
}

/**
 * The text of a file {@link inspect} accepted, as {@link read} gives it.
 * @since 0.1.0
 * @category utils
 */
export const readChecked = (
  file: string,
  kind: FileKind,
  info: FileSystem.File.Info
): Effect.Effect<Option.Option<string>, FileRefused, FileSystem.FileSystem> =>
  Effect.flatMap(readCheckedBytes(file, kind, info), (bytes) => decoded(file, bytes))

/**
 * The text of a regular UTF-8 file (a byte-order mark stripped), or `None` when it does not
 * exist; refused when it is not a regular file, is larger than the cap of its kind, is not valid
 * UTF-8 (the rule gives the byte offset), or cannot be read.
 * @since 0.1.0
 * @category utils
 */
export const read = (
  file: string,
  kind: FileKind
): Effect.Effect<Option.Option<string>, FileRefused, FileSystem.FileSystem> =>
  Effect.flatMap(readBytes(file, kind), (bytes) => decoded(file, bytes))
