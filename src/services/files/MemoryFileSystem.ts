/**
 * A platform `FileSystem` held in memory, for tests (docs/library.md, "Testing"):
 * `@effect/platform` 0.97 ships only `FileSystem.layerNoop`, a stub that stores nothing, so this
 * is a small store of its own. Everything in the project that reads or writes files goes through
 * `FileSystem.FileSystem` (the one reader `files/TextFile.ts`, `StateRoot` with its atomic writes
 * and its `proper-lockfile` lock), and runs on it unchanged: `StateRoot.layer({ root })` over
 * `MemoryFileSystem.layer` is a state root that never touches a disk. A plugin written against
 * `FileSystem.FileSystem` runs on it too.
 *
 * What it is not: the City's own state. A plugin's `ctx.storage.path` is a real folder (created
 * with Node's `fs` the first time the plugin reads it, for plugin code that may use any file API),
 * so no in-memory store can stand behind it; a test City (`CityTest`) puts its root in a fresh
 * temporary folder instead.
 *
 * Decisions:
 * - **Absolute paths only.** A relative path fails with `BadArgument`: on a disk it would mean the
 *   process's working folder, which a store in memory does not have.
 * - **Node's semantics and errors.** `makeDirectory` (recursive or not), `open` with every flag
 *   (`r`, `r+`, `w`, `wx`, `w+`, `a`, …; a folder opens for reading, so `sync` on it works), reads
 *   and writes at the handle's position, `readFile`/`writeFile`, `stat` (type `File` or
 *   `Directory`, size, times, mode), `rename` (over a file or an empty folder, never into itself),
 *   `remove` (`recursive`, `force`), `readDirectory` (sorted; `recursive` gives relative paths),
 *   `copy`, `copyFile`, `link` (a hard link shares the file), `chmod`, `chown`, `utimes`,
 *   `truncate`, `access`, `realPath`, and the temporary files and folders (under `/tmp` unless told
 *   otherwise, scoped ones removed when their Scope closes). A failure is the platform's
 *   `SystemError` with Node's code (`ENOENT: no such file or directory, open '/a'`), with the
 *   reason `@effect/platform-node` gives that code.
 * - **Modes are enforced for the owner.** New files and folders take `mode & ~umask` (umask
 *   `0o022` unless told otherwise), and the owner's bits are checked as a non-root user's are: a
 *   file without `r` cannot be read, a folder without `w` takes no new entry, one without `x`
 *   cannot be passed through. Root, who ignores them on a disk, is not modelled.
 * - **Nothing to flush.** A write is in the store when it returns; `sync` checks only that the
 *   handle is open. Times are the wall clock's, as a disk's are (a `TestClock` does not move them).
 * - **Not modelled, and said so.** Symbolic links (`symlink`) and change events (`watch`) fail
 *   with a `SystemError` (`ENOSYS`) naming the operation; no operation succeeds without doing what
 *   it says.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as internal from "./internal/memoryFileSystem.ts"

/**
 * The options of an in-memory file system: its umask (default `0o022`) and its temp folder
 * (default `/tmp`, which exists from the start).
 * @since 0.1.0
 * @category models
 */
export type MemoryOptions = internal.MemoryOptions

/**
 * A new, empty in-memory file system (`/` and the temp folder only). Each call makes its own store.
 *
 * @example
 * ```ts
 * import { FileSystem } from "@effect/platform"
 * import { Effect } from "effect"
 * import { MemoryFileSystem } from "effect-city/testing"
 *
 * const program = Effect.gen(function*() {
 *   const fs = yield* FileSystem.FileSystem
 *   yield* fs.makeDirectory("/state/data", { recursive: true })
 *   yield* fs.writeFileString("/state/data/notes.json", "[]")
 *   return yield* fs.readDirectory("/state", { recursive: true }) // [ 'data', 'data/notes.json' ]
 * })
 *
 * Effect.runPromise(program.pipe(Effect.provide(MemoryFileSystem.layer)))
 * ```
 * @since 0.1.0
 * @category constructors
 */
export const make = (options?: MemoryOptions): Effect.Effect<FileSystem.FileSystem> => Effect.sync(() => internal.make(options))

/**
 * An in-memory file system as the platform's `FileSystem` service, with the given options; each
 * build of the Layer is a new, empty store.
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (options: MemoryOptions): Layer.Layer<FileSystem.FileSystem> =>
  Layer.effect(FileSystem.FileSystem, make(options))

/**
 * An in-memory file system as the platform's `FileSystem` service (umask `0o022`, temp folder
 * `/tmp`); each build of the Layer is a new, empty store.
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<FileSystem.FileSystem> = layerWith({})
