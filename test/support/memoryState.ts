/**
 * An in-memory StateRoot for unit and property tests of the stores built on it: the same
 * interface, a Map for the files, a no-op lock (one process), and `crash()` semantics for free
 * (whatever is in the Map was "written"; whatever a test kept in local variables is lost).
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { StateRoot } from "../../src/services/root/StateRoot.ts"

export const memoryStateRoot = (root = "/memory") => {
  const files = new Map<string, string>()
  // Each write is a new inode, as an atomic write (temp file + rename) is on disk.
  const inodes = new Map<string, number>()
  let inode = 0
  const info = (relative: string, text: string): FileSystem.File.Info => ({
    type: "File",
    mtime: Option.some(new Date(0)),
    atime: Option.none(),
    birthtime: Option.none(),
    dev: 0,
    ino: Option.fromNullable(inodes.get(relative)),
    mode: 0o600,
    nlink: Option.some(1),
    uid: Option.none(),
    gid: Option.none(),
    rdev: Option.none(),
    size: FileSystem.Size(new TextEncoder().encode(text).length),
    blksize: Option.none(),
    blocks: Option.none()
  })
  const put = (relative: string, text: string) => {
    files.set(relative, text)
    inodes.set(relative, ++inode)
  }
  const service = StateRoot.of({
    root,
    resolve: (relative) => `${root}/${relative}`,
    ensure: Effect.void,
    require: Effect.void,
    readText: (relative) => Effect.sync(() => Option.fromNullable(files.get(relative))),
    inspect: (relative) => Effect.sync(() => Option.map(Option.fromNullable(files.get(relative)), (text) => info(relative, text))),
    readInspected: (relative) => Effect.sync(() => Option.fromNullable(files.get(relative))),
    writeText: (relative, text) => Effect.sync(() => put(relative, text)),
    writeJson: (relative, value) => Effect.sync(() => put(relative, `${JSON.stringify(value, null, 2)}\n`)),
    makeDirectory: () => Effect.void,
    remove: (relative) =>
      Effect.sync(() => {
        for (const key of [...files.keys()]) if (key === relative || key.startsWith(`${relative}/`)) files.delete(key)
      }),
    list: (relative) =>
      Effect.sync(() =>
        [...files.keys()]
          .filter((k) => k.startsWith(`${relative}/`) && !k.slice(relative.length + 1).includes("/"))
          .map((k) => k.slice(relative.length + 1))
          .sort()
      ),
    lock: Effect.void
  })
  return { files, service }
}
