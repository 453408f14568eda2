/**
 * Copies and hard links in the in-memory store (../MemoryFileSystem.ts has the decisions): `cp`
 * (files and whole folders, never a folder into itself), `copyFile`, and `link`, with Node's errors.
 * @since 0.1.0
 */
import type * as PlatformError from "@effect/platform/Error"
import * as Effect from "effect/Effect"
import { posix } from "node:path"
import { fail, nodeError } from "./memoryErrors.ts"
import { writeFileAt } from "./memoryFiles.ts"
import { makeDirectoryAt } from "./memoryDirectories.ts"
import { attach, existing, inside, place } from "./memoryPaths.ts"
import { can, R } from "./memoryModes.ts"
import type { FileNode, Node, Store } from "./memoryTree.ts"

/** Copies a file's bytes to `to` as `copyFile` does: a new file gets the source's mode. */
const copyFileTo = (store: Store, method: string, source: FileNode, to: string) =>
  Effect.flatMap(place(store, method, "copyfile", to), (at) =>
    Effect.map(writeFileAt(store, method, to, source.data.slice(), { mode: source.mode }), (file) => {
      if (at.node === undefined) file.mode = source.mode
      return file
    }))

const copyNode = (store: Store, source: Node, to: string, overwrite: boolean, preserve: boolean): Effect.Effect<void, PlatformError.PlatformError> =>
  Effect.flatMap(place(store, "copy", "cp", to), (at) => {
    if (source.type === "File") {
      if (at.node !== undefined) {
        if (at.node.type === "Directory") return fail("copy", "EISDIR", "cp", to)
        if (!overwrite) return Effect.void
      }
      return Effect.map(copyFileTo(store, "copy", source, to), (copied) => {
        if (preserve) {
          copied.atime = source.atime
          copied.mtime = source.mtime
        }
      })
    }
    if (at.node !== undefined && at.node.type !== "Directory") return fail("copy", "ENOTDIR", "cp", to)
    const children = Effect.forEach(
      [...source.entries],
      ([name, child]) => copyNode(store, child, posix.join(to, name), overwrite, preserve),
      { discard: true }
    )
    if (at.node !== undefined) return children
    // A new folder gets the source's mode once its entries are in (the mode may forbid writing).
    return makeDirectoryAt(store, "copy", to, false, 0o700).pipe(
      Effect.zipRight(children),
      Effect.zipRight(Effect.map(existing(store, "copy", "cp", to), ({ node }) => void (node.mode = source.mode)))
    )
  })

/**
 * `cp`: a file, or a folder with everything in it (never into itself).
 * @since 0.1.0
 * @category internals
 */
export const copyAt = (store: Store, from: string, to: string, overwrite: boolean, preserve: boolean) =>
  Effect.flatMap(existing(store, "copy", "cp", from), ({ node }) =>
    node.type === "Directory" && (to === from || inside(to, from))
      ? Effect.fail(nodeError("copy", "ERR_FS_CP_EINVAL", "cp", from, `Invalid src or dest: cp returned EINVAL (cannot copy ${from} to a subdirectory of self ${to}) ${to}`))
      : copyNode(store, node, to, overwrite, preserve))

/**
 * `copyFile`: a readable file's bytes to `to`.
 * @since 0.1.0
 * @category internals
 */
export const copyFileAt = (store: Store, from: string, to: string) =>
  Effect.flatMap(existing(store, "copyFile", "copyfile", from), ({ node }) =>
    node.type === "Directory"
      ? fail("copyFile", "EISDIR", "copyfile", from, to)
      : !can(node, R)
      ? fail("copyFile", "EACCES", "copyfile", from, to)
      : Effect.asVoid(copyFileTo(store, "copyFile", node, to)))

/**
 * `link`: a second name for a file (never a folder), sharing its node.
 * @since 0.1.0
 * @category internals
 */
export const linkAt = (store: Store, from: string, to: string) =>
  Effect.flatMap(existing(store, "link", "link", from), ({ node }) =>
    node.type === "Directory"
      ? fail("link", "EPERM", "link", from, to)
      : Effect.flatMap(place(store, "link", "link", to), (at) => {
        if (at.node !== undefined) return fail("link", "EEXIST", "link", from, to)
        node.nlink++
        return attach("link", "link", at, node)
      }))
