/**
 * Reading and writing files in the in-memory store (../MemoryFileSystem.ts has the decisions):
 * `open(2)`'s flags, writes at an offset, resizing, and the whole-file calls. Every operation is
 * synchronous inside its Effect, so each one is atomic, as a single system call is.
 * @since 0.1.0
 */
import type * as PlatformError from "@effect/platform/Error"
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import { fail } from "./memoryErrors.ts"
import { attach, existing, place } from "./memoryPaths.ts"
import { can, R, W } from "./memoryModes.ts"
import { type FileNode, type Node, type Store, touch } from "./memoryTree.ts"

/**
 * What an `open` flag (`r`, `r+`, `w`, `wx`, `a+`, …) allows and does.
 * @since 0.1.0
 * @category models
 */
export interface OpenFlags {
  /** The handle reads. */
  readonly read: boolean
  /** The handle writes. */
  readonly write: boolean
  /** A missing file is created. */
  readonly create: boolean
  /** An existing file is an error (`x`). */
  readonly exclusive: boolean
  /** An existing file is emptied (`w`). */
  readonly truncate: boolean
  /** Every write goes to the end (`a`). */
  readonly append: boolean
}

/**
 * The meaning of an `open` flag.
 * @since 0.1.0
 * @category getters
 */
export const flagsOf = (flag: FileSystem.OpenFlag): OpenFlags => ({
  read: flag.startsWith("r") || flag.endsWith("+"),
  write: flag !== "r",
  create: !flag.startsWith("r"),
  exclusive: flag.includes("x"),
  truncate: flag.startsWith("w"),
  append: flag.startsWith("a")
})

/**
 * Writes `bytes` into `file` at `offset`, growing it (with zeros) as needed.
 * @since 0.1.0
 * @category internals
 */
export const writeAt = (file: FileNode, offset: number, bytes: Uint8Array) => {
  const end = offset + bytes.length
  if (end > file.data.length) {
    const grown = new Uint8Array(end)
    grown.set(file.data)
    file.data = grown
  }
  file.data.set(bytes, offset)
  touch(file)
}

/**
 * Cuts or grows (with zeros) `file` to `length` bytes.
 * @since 0.1.0
 * @category internals
 */
export const resize = (file: FileNode, length: number) => {
  const next = new Uint8Array(length)
  next.set(file.data.subarray(0, Math.min(length, file.data.length)))
  file.data = next
  touch(file)
}

/**
 * Opens `path` as `open(2)` would with `flag`: the node, created when the flag says so.
 * @since 0.1.0
 * @category internals
 */
export const openNode = (store: Store, method: string, syscall: string, path: string, flag: FileSystem.OpenFlag, mode: number | undefined) =>
  Effect.flatMap(place(store, method, syscall, path), (at): Effect.Effect<Node, PlatformError.PlatformError> => {
    const flags = flagsOf(flag)
    if (at.node === undefined) {
      if (!flags.create) return fail(method, "ENOENT", syscall, path)
      const file = store.newFile(mode ?? 0o666)
      return Effect.as(attach(method, syscall, at, file), file)
    }
    if (flags.create && flags.exclusive) return fail(method, "EEXIST", syscall, path)
    const node = at.node
    if (node.type === "Directory" && flags.write) return fail(method, "EISDIR", syscall, path)
    if ((flags.read && !can(node, R)) || (flags.write && !can(node, W))) return fail(method, "EACCES", syscall, path)
    if (node.type === "File" && flags.truncate && node.data.length > 0) resize(node, 0)
    return Effect.succeed(node)
  })

/**
 * `writeFile`: opens `path` with the flag (`w` unless told) and writes `data`.
 * @since 0.1.0
 * @category internals
 */
export const writeFileAt = (store: Store, method: string, path: string, data: Uint8Array, options?: FileSystem.WriteFileOptions) => {
  const flag = options?.flag ?? "w"
  if (!flagsOf(flag).write) return fail(method, "EBADF", "write", path)
  // openNode refused a folder for writing, and truncated the file for a `w` flag.
  return Effect.map(openNode(store, method, "open", path, flag, options?.mode), (node) => {
    const file = node as FileNode
    writeAt(file, flagsOf(flag).append ? file.data.length : 0, data)
    return file
  })
}

/**
 * `readFile`: a copy of the file's bytes.
 * @since 0.1.0
 * @category internals
 */
export const readFileAt = (store: Store, path: string) =>
  Effect.flatMap(existing(store, "readFile", "open", path), ({ node }) => {
    if (node.type === "Directory") return fail("readFile", "EISDIR", "read", path)
    if (!can(node, R)) return fail("readFile", "EACCES", "open", path)
    node.atime = new Date()
    return Effect.succeed(node.data.slice())
  })

/**
 * `truncate` by path.
 * @since 0.1.0
 * @category internals
 */
export const truncateAt = (store: Store, path: string, length: FileSystem.SizeInput | undefined) =>
  Effect.flatMap(existing(store, "truncate", "open", path), ({ node }) => {
    if (node.type === "Directory") return fail("truncate", "EISDIR", "open", path)
    if (!can(node, W)) return fail("truncate", "EACCES", "open", path)
    resize(node, Number(length ?? 0))
    return Effect.void
  })
