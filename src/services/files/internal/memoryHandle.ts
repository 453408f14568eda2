/**
 * An open file of the in-memory store (../MemoryFileSystem.ts has the decisions): a platform
 * `File` over a node, with its own position; it keeps its node after a rename or a removal, as an
 * open descriptor keeps its inode.
 * @since 0.1.0
 */
import type * as PlatformError from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { fail } from "./memoryErrors.ts"
import { flagsOf, resize, writeAt } from "./memoryFiles.ts"
import { type FileNode, info, type Node, type Store } from "./memoryTree.ts"

/**
 * A handle on `node` opened with `flag`, and the Effect that closes it.
 * @since 0.1.0
 * @category constructors
 */
export const makeHandle = (store: Store, node: Node, flag: FileSystem.OpenFlag) => {
  const flags = flagsOf(flag)
  const fd = FileSystem.FileDescriptor(store.nextDescriptor())
  let position = 0
  let closed = false
  const usable = <A>(method: string, need: "read" | "write" | "any", f: (file: FileNode) => A) =>
    Effect.suspend((): Effect.Effect<A, PlatformError.PlatformError> => {
      if (closed || (need === "read" && !flags.read) || (need === "write" && !flags.write)) return fail(method, "EBADF", method, fd)
      if (node.type === "Directory") return fail(method, "EISDIR", method, fd)
      return Effect.succeed(f(node))
    })
  const readInto = (file: FileNode, buffer: Uint8Array) => {
    const n = Math.max(0, Math.min(buffer.length, file.data.length - position))
    buffer.set(file.data.subarray(position, position + n))
    position += n
    file.atime = new Date()
    return n
  }
  const write = (file: FileNode, buffer: Uint8Array) => {
    if (flags.append) {
      writeAt(file, file.data.length, buffer)
    } else {
      writeAt(file, position, buffer)
      position += buffer.length
    }
  }
  const handle: FileSystem.File = {
    [FileSystem.FileTypeId]: FileSystem.FileTypeId,
    fd,
    stat: Effect.suspend(() => (closed ? fail("stat", "EBADF", "fstat", fd) : Effect.succeed(info(node)))),
    seek: (offset, from) =>
      Effect.sync(() => {
        position = from === "start" ? Number(offset) : position + Number(offset)
      }),
    // Every write is already in the store: nothing to flush. A folder opened for reading syncs too.
    sync: Effect.suspend(() => (closed ? fail("sync", "EBADF", "fsync", fd) : Effect.void)),
    read: (buffer) => usable("read", "read", (file) => FileSystem.Size(readInto(file, buffer))),
    readAlloc: (size) =>
      usable("readAlloc", "read", (file) => {
        const buffer = new Uint8Array(Number(size))
        const n = readInto(file, buffer)
        return n === 0 ? Option.none() : Option.some(n === buffer.length ? buffer : buffer.slice(0, n))
      }),
    truncate: (length) =>
      usable("truncate", "write", (file) => {
        const size = Number(length ?? 0)
        resize(file, size)
        if (!flags.append && position > size) position = size
      }),
    write: (buffer) =>
      usable("write", "write", (file) => {
        write(file, buffer)
        return FileSystem.Size(buffer.length)
      }),
    writeAll: (buffer) => usable("writeAll", "write", (file) => write(file, buffer))
  }
  return { handle, close: Effect.sync(() => void (closed = true)) }
}
