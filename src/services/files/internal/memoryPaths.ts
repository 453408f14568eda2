/**
 * Path walking in the in-memory store (../MemoryFileSystem.ts has the decisions): absolute paths
 * only, each folder on the way searchable, and the placing and unlinking of entries.
 * @since 0.1.0
 */
import * as PlatformError from "@effect/platform/Error"
import * as Effect from "effect/Effect"
import { posix } from "node:path"
import { fail } from "./memoryErrors.ts"
import { can, W, X } from "./memoryModes.ts"
import { type DirNode, type Node, type Store, touch } from "./memoryTree.ts"

/**
 * Where a path lands: its folder (none for `/`), its last name and the node there, if any.
 * @since 0.1.0
 * @category models
 */
export interface Place {
  /** The absolute, normalized path. */
  readonly path: string
  /** The folder holding the last name (none for `/`). */
  readonly dir: DirNode | undefined
  /** The last name of the path (empty for `/`). */
  readonly name: string
  /** The node at the path, if any. */
  readonly node: Node | undefined
}

/**
 * Runs `f` on the absolute form of `path`; a relative path is refused (it would mean another
 * folder than on a disk).
 * @since 0.1.0
 * @category combinators
 */
export const absolute = <A>(
  method: string,
  path: string,
  f: (path: string) => Effect.Effect<A, PlatformError.PlatformError>
): Effect.Effect<A, PlatformError.PlatformError> =>
  Effect.suspend(() =>
    posix.isAbsolute(path)
      ? f(posix.resolve(path))
      : Effect.fail(
        new PlatformError.BadArgument({
          module: "FileSystem",
          method,
          description: `the in-memory file system takes absolute paths only, not '${path}'`
        })
      )
  )

const placeNow = (store: Store, method: string, syscall: string, path: string): Effect.Effect<Place, PlatformError.PlatformError> => {
  const parts = path.split("/").filter((p) => p !== "")
  if (parts.length === 0) return Effect.succeed({ path, dir: undefined, name: "", node: store.root })
  let dir = store.root
  for (const part of parts.slice(0, -1)) {
    if (!can(dir, X)) return fail(method, "EACCES", syscall, path)
    const next = dir.entries.get(part)
    if (next === undefined) return fail(method, "ENOENT", syscall, path)
    if (next.type !== "Directory") return fail(method, "ENOTDIR", syscall, path)
    dir = next
  }
  if (!can(dir, X)) return fail(method, "EACCES", syscall, path)
  const name = parts[parts.length - 1]!
  return Effect.succeed({ path, dir, name, node: dir.entries.get(name) })
}

/**
 * Finds where `path` (absolute, normalized) lands, each folder on the way searchable; when the
 * Effect runs, not when it is made (a step composed after another sees what that one did).
 * @since 0.1.0
 * @category internals
 */
export const place = (store: Store, method: string, syscall: string, path: string): Effect.Effect<Place, PlatformError.PlatformError> =>
  Effect.suspend(() => placeNow(store, method, syscall, path))

/**
 * Where `path` lands, failing with `ENOENT` when nothing is there.
 * @since 0.1.0
 * @category internals
 */
export const existing = (store: Store, method: string, syscall: string, path: string) =>
  Effect.flatMap(place(store, method, syscall, path), (at) =>
    at.node === undefined ? fail(method, "ENOENT", syscall, path) : Effect.succeed({ ...at, node: at.node }))

/**
 * Puts `node` at `at` (its folder must be writable).
 * @since 0.1.0
 * @category internals
 */
export const attach = (method: string, syscall: string, at: Place, node: Node) => {
  if (at.dir === undefined) return fail(method, "EEXIST", syscall, at.path)
  if (!can(at.dir, W)) return fail(method, "EACCES", syscall, at.path)
  at.dir.entries.set(at.name, node)
  touch(at.dir)
  return Effect.void
}

/**
 * Takes the entry `name` out of `dir` (its node loses a link).
 * @since 0.1.0
 * @category internals
 */
export const unlink = (dir: DirNode, name: string) => {
  const node = dir.entries.get(name)
  dir.entries.delete(name)
  if (node !== undefined) node.nlink--
  touch(dir)
}

/**
 * Whether `path` is strictly inside `folder`.
 * @since 0.1.0
 * @category guards
 */
export const inside = (path: string, folder: string) => path !== folder && path.startsWith(folder === "/" ? "/" : `${folder}/`)
