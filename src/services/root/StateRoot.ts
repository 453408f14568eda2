/**
 * The state root, `$CITY_ROOT` (default `~/.city`): plain files an operator can
 * read. JSON documents are written atomically (temp file in the same directory,
 * fsync, rename, fsync of the directory), and every mutation of shared state
 * holds the cross-process root lock (docs/design.md, "State and durability": "JSON
 * documents written atomically (temp file + fsync + rename) ... Mutations of
 * shared state take the root lock (cross-process)").
 *
 * Building the service creates nothing: a verb that only reads never creates the
 * root, so a mistyped root is not mistaken for an empty one. `ensure` creates it
 * (the verbs that create state call it); `lock` and `require` fail with
 * `RootNotFound` when it does not exist.
 *
 * The lock is `RootLock.hold` on the root directory (lock directory
 * `<root>/.lock`), a scoped resource. It is not re-entrant: a joint takes it
 * once.
 *
 * Private by default (docs/cli.md, "Files and permissions"): every file
 * written here is 0600 and every folder 0700 (`FileModes.ts`), whatever the
 * umask: each is created with its mode and then `chmod`ed to it, since a
 * umask such as 0277 would take the owner's write bit. A missing
 * folder is made one level at a time, the root and its missing parents
 * included, so no folder `city` makes is left to the umask; an existing folder
 * under the root that a write goes into (or through) is tightened to 0700. An
 * existing root is the operator's and is left as it is.
 *
 * Reads go through the one file reader (`files/TextFile.ts`; docs/design.md, "State
 * and durability"): a state document is capped at 16 MiB unless the caller names
 * another kind (`host.json` is a `hostConfig`), a FIFO or device under the root
 * is refused without being opened, and a refusal is a `StateError` whose detail
 * is the reader's one-line rule (`isRefused` tells it from the root's own
 * failures). Listings use the platform `readDirectory`.
 *
 * A write replaces whatever is at its path (docs/cli.md, "Stored records that cannot be read"):
 * the rename replaces a file, a FIFO, a socket or a device without opening it; a
 * directory in the way is renamed aside to `<file>.invalid-<epoch ms>` (never
 * deleted: it may hold someone's files), then the document takes its place.
 * @since 0.1.0
 */
import type * as PlatformError from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { StateRootError } from "../../schema/CapabilityErrors.ts"
import type { FileRefused } from "../../schema/FileErrors.ts"
import * as CityRoot from "./CityRoot.ts"
import * as TextFile from "../files/TextFile.ts"
import { fileMode, folderMode } from "./FileModes.ts"
import * as RootLock from "./RootLock.ts"

/**
 * Where the state root is, and whether a verb may create it.
 * @since 0.1.0
 * @category models
 */
export interface StateRootConfig {
  /** The root; a relative one is read from the working directory; none: the root rule (CityRoot.ts). */
  readonly root?: string | undefined
  /** How long to wait for another process's lock before failing with `RootLockBusy` (default 10 minutes). */
  readonly lockWait?: Duration.DurationInput
  /**
   * Told once, after one second of waiting for the root lock, who holds it
   * (`waiting for the state-root lock held by pid N (since …)`); the CLI prints it on a terminal.
   */
  readonly lockNotice?: (text: string) => Effect.Effect<void>
}

/**
 * The state root: atomic JSON writes, reads, and the cross-process lock.
 * @since 0.1.0
 * @category tags
 */
export class StateRoot extends Context.Tag("effect-city/StateRoot")<
  StateRoot,
  {
    readonly root: string
    /** Absolute path of a root-relative path. */
    readonly resolve: (relative: string) => string
    /** Creates the root (0700, and each missing parent) if it does not exist (the verbs that create state). */
    readonly ensure: Effect.Effect<void, StateRootError>
    /** Succeeds when the root is an existing directory; `RootNotFound` when it does not exist. */
    readonly require: Effect.Effect<void, StateRootError>
    /**
     * The text of a file, or `None` when it does not exist; read with the cap of `kind` (default:
     * a state document, 16 MiB). A file that is not a regular one, too large, or not UTF-8 fails.
     */
    readonly readText: (relative: string, kind?: TextFile.FileKind) => Effect.Effect<Option.Option<string>, StateRootError>
    /**
     * What `readText` would look at before opening the file: `None` when it does not exist, its
     * stat when it is a regular file within the cap of `kind`, else fails as `readText` would. A
     * caller that remembers what it read by size, mtime and inode reads only what changed, with
     * `readInspected`.
     */
    readonly inspect: (relative: string, kind?: TextFile.FileKind) => Effect.Effect<Option.Option<FileSystem.File.Info>, StateRootError>
    /** The text of a file `inspect` accepted (`info` is what it gave), as `readText` gives it. */
    readonly readInspected: (
      relative: string,
      info: FileSystem.File.Info,
      kind?: TextFile.FileKind
    ) => Effect.Effect<Option.Option<string>, StateRootError>
    /**
     * Writes `text` atomically, 0600: temp file, fsync, rename, fsync of the folder. Makes the
     * folders (0700) or tightens them, as `makeDirectory` does. Always synced: a write renamed
     * without its fsync was left empty by a power loss in the crash-point tests (test/crash).
     */
    readonly writeText: (relative: string, text: string) => Effect.Effect<void, StateRootError>
    /** Writes `value` as indented JSON atomically (documents with a Schema go through a `DocumentStore`). */
    readonly writeJson: (relative: string, value: unknown) => Effect.Effect<void, StateRootError>
    /**
     * Makes a folder under the root private: created 0700 with each missing parent (the root too),
     * or tightened to 0700 with every folder between it and the root when it exists.
     */
    readonly makeDirectory: (relative: string) => Effect.Effect<void, StateRootError>
    /** Removes a file or directory tree; a missing path is not an error. */
    readonly remove: (relative: string) => Effect.Effect<void, StateRootError>
    /** The entry names of a directory, sorted; a missing directory has none. */
    readonly list: (relative: string) => Effect.Effect<ReadonlyArray<string>, StateRootError>
    /** Holds the cross-process root lock for the caller's Scope. The root must exist. */
    readonly lock: Effect.Effect<void, StateRootError, Scope.Scope>
  }
>() {}

/** The reason in words: a platform error's description (`ENOTDIR: not a directory, …`), else its message. */
const describe = (cause: unknown): string =>
  typeof cause === "object" && cause !== null && "description" in cause && typeof cause.description === "string"
    ? cause.description
    : cause instanceof Error
    ? cause.message
    : typeof cause === "object" && cause !== null && "message" in cause
    ? String(cause.message)
    : String(cause)

const isNotFound = (e: { readonly _tag: string; readonly reason?: string }) =>
  e._tag === "SystemError" && e.reason === "NotFound"

const isAlreadyExists = (e: { readonly _tag: string; readonly reason?: string }) =>
  e._tag === "SystemError" && e.reason === "AlreadyExists"

const fail = (operation: string, file: string) => (cause: unknown) =>
  new StateRootError({ reason: "StateError", operation, path: file, detail: describe(cause), cause })

/** Makes and tightens the folders under `root`: 0700 whatever the umask (see the module doc). */
const privateFolders = (fs: FileSystem.FileSystem, path: Path.Path, root: string) => {
  /** Makes `dir` 0700 whatever the umask, each missing parent first; an existing `dir` is left alone. */
  const makeMissing = (dir: string): Effect.Effect<void, PlatformError.PlatformError> =>
    fs.makeDirectory(dir, { mode: folderMode }).pipe(
      Effect.zipRight(fs.chmod(dir, folderMode)),
      Effect.catchIf(isAlreadyExists, () => Effect.void),
      Effect.catchIf(
        (e) => isNotFound(e) && path.dirname(dir) !== dir,
        () => Effect.zipRight(makeMissing(path.dirname(dir)), makeMissing(dir))
      )
    )

  /**
   * The folders this process made or tightened: each is done once (a joint writes after every
   * call). A write that finds its folder gone forgets them and does them again.
   */
  const tightened = new Set<string>()

  /**
   * `dir` (absolute) and each folder between it and the root, tightened to 0700, or made when
   * missing; the root itself is only made when missing.
   */
  const privateFolder = (dir: string): Effect.Effect<void, PlatformError.PlatformError> => {
    const inside = path.relative(root, dir)
    if (inside === "" || inside.startsWith("..") || path.isAbsolute(inside)) return makeMissing(dir)
    const parts = inside.split(path.sep)
    return Effect.forEach(
      parts.map((_, i) => path.join(root, ...parts.slice(0, i + 1))).filter((level) => !tightened.has(level)),
      (level) =>
        fs.chmod(level, folderMode).pipe(
          Effect.catchIf(isNotFound, () => makeMissing(level)),
          Effect.tap(() => Effect.sync(() => void tightened.add(level)))
        ),
      { discard: true }
    )
  }

  return { makeMissing, privateFolder, forget: Effect.sync(() => tightened.clear()) }
}

/** Writes `text` to `target` atomically, 0600: temp file, fsync, rename, fsync of the folder. */
const atomicWriter = (fs: FileSystem.FileSystem, path: Path.Path, folders: ReturnType<typeof privateFolders>) => {
  let counter = 0
  return (target: string, text: string): Effect.Effect<void, StateRootError> => {
    const dir = path.dirname(target)
    const tmp = `${target}.${process.pid}.${++counter}.tmp`
    const bytes = new TextEncoder().encode(text)
    const opened = Effect.scoped(
      Effect.flatMap(fs.open(tmp, { flag: "w", mode: fileMode }), (file) => Effect.zipRight(file.writeAll(bytes), file.sync))
    )
    return Effect.gen(function*() {
      yield* folders.privateFolder(dir)
      yield* opened.pipe(
        Effect.catchIf(isNotFound, () => Effect.zipRight(folders.forget, Effect.zipRight(folders.privateFolder(dir), opened)))
      )
      // The umask may have taken bits of `fileMode` at the open; the rename keeps the mode.
      yield* fs.chmod(tmp, fileMode)
      yield* fs.rename(tmp, target).pipe(
        Effect.catchAll((error) =>
          // A directory where the document goes is not ours to delete: it is set aside, then
          // the document takes its place (a FIFO, socket or device is replaced by the rename).
          Effect.flatMap(Effect.option(fs.stat(target)), (info) =>
            Option.isSome(info) && info.value.type === "Directory"
              ? Effect.zipRight(fs.rename(target, setAsideName(target, Date.now())), fs.rename(tmp, target))
              : Effect.fail(error))
        )
      )
      // Make the rename itself durable; some file systems refuse to fsync a directory.
      yield* Effect.scoped(Effect.flatMap(fs.open(dir, { flag: "r" }), (d) => d.sync)).pipe(Effect.ignore)
    }).pipe(
      Effect.tapError(() => fs.remove(tmp).pipe(Effect.ignore)),
      Effect.mapError(fail("write", target))
    )
  }
}

/**
 * The name a write gives the directory it found where its document goes:
 * `<file>.invalid-<epoch milliseconds>`, beside it (see the module comment).
 * @since 0.1.0
 * @category utils
 */
export const setAsideName = (file: string, at: number): string => `${file}.invalid-${at}`

/**
 * Is this folder entry one a write set aside (`<file>.invalid-<epoch milliseconds>`)? Listings skip them.
 * @since 0.1.0
 * @category guards
 */
export const isSetAside = (entry: string): boolean => /\.invalid-\d+$/.test(entry)

/**
 * Is this error the one reader's refusal of a file (not UTF-8, over its cap, not a regular file,
 * unreadable)? Such a file is a bad document, to report and replace; other errors are the root's.
 * @since 0.1.0
 * @category guards
 */
export const isRefused = (error: StateRootError): boolean =>
  error.operation === "read" && typeof error.cause === "object" && error.cause !== null &&
  "_tag" in error.cause && error.cause._tag === "FileRefused"

/**
 * The rule of a file the one reader refused, as a store reports it: `cannot be read (<reason>)`.
 * @since 0.1.0
 * @category utils
 */
export const refusedRule = (error: StateRootError): string => `cannot be read (${error.detail})`

/** Succeeds when `root` is an existing directory; `RootNotFound` when it does not exist. */
const requireRoot = (fs: FileSystem.FileSystem, root: string) =>
  fs.stat(root).pipe(
    Effect.catchIf(isNotFound, () => Effect.fail(new StateRootError({ reason: "RootNotFound", root }))),
    Effect.mapError((e) => e._tag === "StateRootError" && e.reason === "RootNotFound" ? e : fail("read", root)(e)),
    Effect.flatMap((info) =>
      info.type === "Directory"
        ? Effect.void
        : Effect.fail(new StateRootError({ reason: "StateError", operation: "use", path: root, detail: "not a directory" }))
    )
  )

/** The cross-process root lock for the caller's Scope, on an existing root. */
const lockRoot = (fs: FileSystem.FileSystem, root: string, config: StateRootConfig) => {
  const lockWait = Duration.decode(config.lockWait ?? Duration.minutes(10))
  return Effect.zipRight(
    requireRoot(fs, root),
    RootLock.hold(root, CityRoot.lockFolder(root), lockWait, config.lockNotice).pipe(
      Effect.provideService(FileSystem.FileSystem, fs),
      Effect.mapError((cause) =>
        cause._tag === "Busy"
          ? new StateRootError({ reason: "RootLockBusy", root, waitedMs: Duration.toMillis(lockWait) })
          : fail("lock", root)(cause.error)
      )
    )
  )
}

/**
 * Makes the state root service on a directory.
 * @since 0.1.0
 * @category constructors
 */
export const make = (config: StateRootConfig): Effect.Effect<
  StateRoot["Type"],
  never,
  FileSystem.FileSystem | Path.Path
> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const root = CityRoot.resolve(config.root)
    const resolve = (relative: string) => path.join(root, relative)
    const folders = privateFolders(fs, path, root)
    const write = atomicWriter(fs, path, folders)
    const writeText = (relative: string, text: string) => write(resolve(relative), text)

    // Asynchronous, through the one reader: a synchronous read of a FIFO under the root would
    // freeze the whole process (docs/design.md, "State and durability").
    const reading = <A>(relative: string, read: (file: string) => Effect.Effect<A, FileRefused, FileSystem.FileSystem>) => {
      const file = resolve(relative)
      return read(file).pipe(
        Effect.mapError((e) => new StateRootError({ reason: "StateError", operation: "read", path: file, detail: e.rule, cause: e })),
        Effect.provideService(FileSystem.FileSystem, fs)
      )
    }

    return StateRoot.of({
      root,
      resolve,
      ensure: folders.makeMissing(root).pipe(Effect.mapError(fail("create", root))),
      require: requireRoot(fs, root),
      readText: (relative, kind = TextFile.kinds.stateDocument) => reading(relative, (file) => TextFile.read(file, kind)),
      inspect: (relative, kind = TextFile.kinds.stateDocument) => reading(relative, (file) => TextFile.inspect(file, kind)),
      readInspected: (relative, info, kind = TextFile.kinds.stateDocument) =>
        reading(relative, (file) => TextFile.readChecked(file, kind, info)),
      writeText,
      writeJson: (relative, value) => writeText(relative, `${JSON.stringify(value, null, 2)}\n`),
      makeDirectory: (relative) => {
        const dir = resolve(relative)
        return folders.privateFolder(dir).pipe(Effect.mapError(fail("create", dir)))
      },
      remove: (relative) => {
        const file = resolve(relative)
        return fs.remove(file, { recursive: true, force: true }).pipe(Effect.mapError(fail("remove", file)))
      },
      list: (relative) => {
        const dir = resolve(relative)
        return fs.readDirectory(dir).pipe(
          Effect.map((entries): ReadonlyArray<string> => entries.sort()),
          Effect.catchIf(isNotFound, () => Effect.succeed([])),
          Effect.mapError(fail("list", dir))
        )
      },
      lock: lockRoot(fs, root, config)
    })
  })

/**
 * The state root as a Layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = (config: StateRootConfig) => Layer.effect(StateRoot, make(config))

/**
 * The state root on `config.root` as the City takes it: the `StateRoot` the application gives
 * already when it is on that root (`city daemon`: the capability services'; one service per root,
 * each numbering its own temporary files), else a new one.
 * @since 0.1.0
 * @category layers
 */
export const layerShared = (config: StateRootConfig) =>
  Layer.effect(
    StateRoot,
    Effect.flatMap(Effect.serviceOption(StateRoot), (given) =>
      Option.isSome(given) && given.value.root === CityRoot.resolve(config.root) ? Effect.succeed(given.value) : make(config))
  )
