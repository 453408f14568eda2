/**
 * Folder operations of the in-memory store (../MemoryFileSystem.ts has the decisions): `mkdir`
 * (and `mkdir -p`), temporary folders and files, `rm`, `readdir` and `rename`, with Node's errors.
 * @since 0.1.0
 */
import type * as PlatformError from "@effect/platform/Error"
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import { posix } from "node:path"
import { fail, nodeError } from "./memoryErrors.ts"
import { writeFileAt } from "./memoryFiles.ts"
import { absolute, attach, existing, inside, place, unlink } from "./memoryPaths.ts"
import { can, R, W } from "./memoryModes.ts"
import { type DirNode, type Store, touch } from "./memoryTree.ts"

const randomName = (length: number) => {
  const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
  let out = ""
  for (let i = 0; i < length; i++) out += alphabet[Math.floor(Math.random() * alphabet.length)]
  return out
}

/**
 * `mkdir`, or `mkdir -p` when recursive (each missing folder on the way made with `mode`).
 * @since 0.1.0
 * @category internals
 */
export const makeDirectoryAt = (store: Store, method: string, path: string, recursive: boolean, mode: number): Effect.Effect<void, PlatformError.PlatformError> => {
  if (!recursive) {
    return Effect.flatMap(place(store, method, "mkdir", path), (at) =>
      at.node !== undefined ? fail(method, "EEXIST", "mkdir", path) : attach(method, "mkdir", at, store.newDir(mode)))
  }
  const parts = path.split("/").filter((p) => p !== "")
  return Effect.forEach(
    parts.map((_, i) => `/${parts.slice(0, i + 1).join("/")}`),
    (level, i) =>
      Effect.flatMap(place(store, method, "mkdir", level), (at) =>
        at.node === undefined
          ? attach(method, "mkdir", at, store.newDir(mode))
          : at.node.type === "Directory"
          ? Effect.void
          : fail(method, i === parts.length - 1 ? "EEXIST" : "ENOTDIR", "mkdir", path)),
    { discard: true }
  )
}

/**
 * A new folder with a random name (mode `0o700`) in the temp folder or the one given.
 * @since 0.1.0
 * @category internals
 */
export const makeTempDirectoryAt = (store: Store, method: string, options?: FileSystem.MakeTempDirectoryOptions) =>
  Effect.suspend(() => {
    const directory = options?.directory === undefined ? store.tmpdir : options.directory
    const base = options?.prefix ? posix.join(directory, options.prefix) : `${directory}/`
    return absolute(method, base, () => {
      const attempt: Effect.Effect<string, PlatformError.PlatformError> = Effect.suspend(() => {
        const path = posix.resolve(`${base}${randomName(6)}`)
        return makeDirectoryAt(store, method, path, false, 0o700).pipe(
          Effect.as(path),
          Effect.catchIf((e) => e._tag === "SystemError" && e.reason === "AlreadyExists", () => attempt)
        )
      })
      return attempt
    })
  })

/**
 * A new empty file with a random name in a new temporary folder.
 * @since 0.1.0
 * @category internals
 */
export const makeTempFileAt = (store: Store, method: string, options?: FileSystem.MakeTempFileOptions) =>
  Effect.flatMap(makeTempDirectoryAt(store, method, options), (dir) => {
    const path = posix.join(dir, `${randomName(12)}${options?.suffix ?? ""}`)
    return Effect.as(writeFileAt(store, method, path, new Uint8Array(0), { flag: "wx" }), path)
  })

/**
 * `rm`, with Node's errors: a folder without `recursive` is `ERR_FS_EISDIR`; `force` forgives only a missing path.
 * @since 0.1.0
 * @category internals
 */
export const removeAt = (store: Store, method: string, path: string, options?: FileSystem.RemoveOptions) =>
  Effect.flatMap(place(store, method, "lstat", path), (at): Effect.Effect<void, PlatformError.PlatformError> => {
    if (at.node === undefined) return options?.force === true ? Effect.void : fail(method, "ENOENT", "lstat", path)
    if (at.dir === undefined) return fail(method, "EPERM", "rm", path)
    if (at.node.type === "Directory" && options?.recursive !== true) {
      return Effect.fail(nodeError(method, "ERR_FS_EISDIR", "rm", path, `Path is a directory: rm returned EISDIR (is a directory) ${path}`))
    }
    if (!can(at.dir, W)) return fail(method, "EACCES", "rm", path)
    unlink(at.dir, at.name)
    return Effect.void
  }).pipe(
    Effect.catchIf(
      (e) => options?.force === true && e._tag === "SystemError" && e.reason === "NotFound",
      () => Effect.void
    )
  )

/**
 * `readdir`: the names in the folder, sorted; with `recursive`, the relative paths of everything below.
 * @since 0.1.0
 * @category internals
 */
export const readDirectoryAt = (store: Store, path: string, options?: FileSystem.ReadDirectoryOptions) =>
  Effect.flatMap(existing(store, "readDirectory", "scandir", path), ({ node }) => {
    if (node.type !== "Directory") return fail("readDirectory", "ENOTDIR", "scandir", path)
    if (!can(node, R)) return fail("readDirectory", "EACCES", "scandir", path)
    const names: Array<string> = []
    const walk = (dir: DirNode, prefix: string) => {
      for (const [name, child] of dir.entries) {
        names.push(`${prefix}${name}`)
        if (options?.recursive === true && child.type === "Directory") walk(child, `${prefix}${name}/`)
      }
    }
    walk(node, "")
    return Effect.succeed(names.sort())
  })

/**
 * `rename`: over a file or an empty folder, never a folder into itself.
 * @since 0.1.0
 * @category internals
 */
export const renameAt = (store: Store, from: string, to: string) =>
  Effect.flatMap(
    Effect.zip(existing(store, "rename", "rename", from), place(store, "rename", "rename", to)),
    ([source, target]): Effect.Effect<void, PlatformError.PlatformError> => {
      if (source.dir === undefined || target.dir === undefined) return fail("rename", "EBUSY", "rename", from, to)
      if (source.node === target.node) return Effect.void
      if (source.node.type === "Directory" && inside(to, from)) return fail("rename", "EINVAL", "rename", from, to)
      if (target.node !== undefined) {
        if (source.node.type === "File" && target.node.type === "Directory") return fail("rename", "EISDIR", "rename", from, to)
        if (source.node.type === "Directory" && target.node.type === "File") return fail("rename", "ENOTDIR", "rename", from, to)
        if (target.node.type === "Directory" && target.node.entries.size > 0) return fail("rename", "ENOTEMPTY", "rename", from, to)
      }
      if (!can(source.dir, W) || !can(target.dir, W)) return fail("rename", "EACCES", "rename", from, to)
      if (target.node !== undefined) unlink(target.dir, target.name)
      target.dir.entries.set(target.name, source.node)
      source.dir.entries.delete(source.name)
      touch(source.dir)
      touch(target.dir)
      source.node.ctime = new Date()
      return Effect.void
    }
  )
