/**
 * The store behind `MemoryFileSystem` (../MemoryFileSystem.ts has the decisions): the platform
 * `FileSystem` over one tree (memoryTree.ts), each operation taking its path through
 * memoryPaths.ts, checking modes in memoryModes.ts and failing as Node does (memoryErrors.ts); files are read and written in
 * memoryFiles.ts and memoryHandle.ts, folders handled in memoryDirectories.ts, copies and links
 * made in memoryCopy.ts.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { posix } from "node:path"
import { copyAt, copyFileAt, linkAt } from "./memoryCopy.ts"
import { makeDirectoryAt, makeTempDirectoryAt, makeTempFileAt, readDirectoryAt, removeAt, renameAt } from "./memoryDirectories.ts"
import { fail, unsupported } from "./memoryErrors.ts"
import { openNode, readFileAt, truncateAt, writeFileAt } from "./memoryFiles.ts"
import { makeHandle } from "./memoryHandle.ts"
import { absolute, existing } from "./memoryPaths.ts"
import { can, R, W } from "./memoryModes.ts"
import { info, makeStore, type MemoryOptions } from "./memoryTree.ts"

export type { MemoryOptions } from "./memoryTree.ts"

/**
 * Makes an empty store (`/` and the temp folder only) as a platform `FileSystem`.
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: MemoryOptions = {}): FileSystem.FileSystem => {
  const store = makeStore(options)
  return FileSystem.make({
    access: (path, options) =>
      absolute("access", path, (p) =>
        Effect.flatMap(existing(store, "access", "access", p), ({ node }) =>
          (options?.readable === true && !can(node, R)) || (options?.writable === true && !can(node, W))
            ? fail("access", "EACCES", "access", p)
            : Effect.void)),
    copy: (fromPath, toPath, options) =>
      absolute("copy", fromPath, (from) =>
        absolute("copy", toPath, (to) => copyAt(store, from, to, options?.overwrite === true, options?.preserveTimestamps === true))),
    copyFile: (fromPath, toPath) =>
      absolute("copyFile", fromPath, (from) => absolute("copyFile", toPath, (to) => copyFileAt(store, from, to))),
    chmod: (path, mode) =>
      absolute("chmod", path, (p) =>
        Effect.map(existing(store, "chmod", "chmod", p), ({ node }) => {
          node.mode = mode & 0o7777
          node.ctime = new Date()
        })),
    chown: (path, uid, gid) =>
      absolute("chown", path, (p) =>
        Effect.map(existing(store, "chown", "chown", p), ({ node }) => {
          node.uid = uid
          node.gid = gid
          node.ctime = new Date()
        })),
    link: (fromPath, toPath) => absolute("link", fromPath, (from) => absolute("link", toPath, (to) => linkAt(store, from, to))),
    makeDirectory: (path, options) =>
      absolute("makeDirectory", path, (p) => makeDirectoryAt(store, "makeDirectory", p, options?.recursive === true, options?.mode ?? 0o777)),
    makeTempDirectory: (options) => makeTempDirectoryAt(store, "makeTempDirectory", options),
    makeTempDirectoryScoped: (options) =>
      Effect.acquireRelease(
        makeTempDirectoryAt(store, "makeTempDirectoryScoped", options),
        (dir) => Effect.orDie(removeAt(store, "makeTempDirectoryScoped", dir, { recursive: true }))
      ),
    makeTempFile: (options) => makeTempFileAt(store, "makeTempFile", options),
    makeTempFileScoped: (options) =>
      Effect.acquireRelease(
        makeTempFileAt(store, "makeTempFileScoped", options),
        (file) => Effect.orDie(removeAt(store, "makeTempFileScoped", posix.dirname(file), { recursive: true }))
      ),
    open: (path, options) =>
      absolute("open", path, (p) => Effect.succeed(p)).pipe(
        Effect.flatMap((p) =>
          Effect.acquireRelease(
            Effect.map(openNode(store, "open", "open", p, options?.flag ?? "r", options?.mode), (node) => makeHandle(store, node, options?.flag ?? "r")),
            (opened) => opened.close
          )
        ),
        Effect.map((opened) => opened.handle)
      ),
    readDirectory: (path, options) => absolute("readDirectory", path, (p) => readDirectoryAt(store, p, options)),
    readFile: (path) => absolute("readFile", path, (p) => readFileAt(store, p)),
    // No symbolic links are ever made here: an existing path is not one.
    readLink: (path) =>
      absolute("readLink", path, (p) => Effect.flatMap(existing(store, "readLink", "readlink", p), () => fail("readLink", "EINVAL", "readlink", p))),
    realPath: (path) => absolute("realPath", path, (p) => Effect.as(existing(store, "realPath", "realpath", p), p)),
    remove: (path, options) => absolute("remove", path, (p) => removeAt(store, "remove", p, options)),
    rename: (oldPath, newPath) => absolute("rename", oldPath, (from) => absolute("rename", newPath, (to) => renameAt(store, from, to))),
    stat: (path) => absolute("stat", path, (p) => Effect.map(existing(store, "stat", "stat", p), ({ node }) => info(node))),
    symlink: (fromPath, toPath) => Effect.fail(unsupported("symlink", toPath, `symbolic links (to '${fromPath}')`)),
    truncate: (path, length) => absolute("truncate", path, (p) => truncateAt(store, p, length)),
    utimes: (path, atime, mtime) =>
      absolute("utimes", path, (p) =>
        Effect.map(existing(store, "utimes", "utime", p), ({ node }) => {
          // As Node's `utimes`: a number is seconds since the epoch.
          const date = (t: Date | number) => (typeof t === "number" ? new Date(t * 1000) : t)
          node.atime = date(atime)
          node.mtime = date(mtime)
          node.ctime = new Date()
        })),
    watch: (path) => Stream.fail(unsupported("watch", path, "change events")),
    writeFile: (path, data, options) => absolute("writeFile", path, (p) => Effect.asVoid(writeFileAt(store, "writeFile", p, data, options)))
  })
}
