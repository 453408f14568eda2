/**
 * The tree of the in-memory store (../MemoryFileSystem.ts has the decisions): one root of nodes,
 * directories holding their entries by name, files their bytes. A node is an inode: an open file
 * keeps its node after a rename or a removal, and a hard link shares it.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Option from "effect/Option"
import { posix } from "node:path"

/**
 * The options of the store: its umask and where temporary files go.
 * @since 0.1.0
 * @category models
 */
export interface MemoryOptions {
  /** Bits taken from the mode of every file and folder created (default `0o022`, Node's usual). */
  readonly umask?: number | undefined
  /** The folder `makeTempDirectory` and `makeTempFile` use when given none (default `/tmp`, made at start). */
  readonly tmpdir?: string | undefined
}

interface Meta {
  mode: number
  uid: number
  gid: number
  atime: Date
  mtime: Date
  ctime: Date
  readonly birthtime: Date
  readonly ino: number
  nlink: number
}

/**
 * A file: its metadata and its bytes.
 * @since 0.1.0
 * @category models
 */
export interface FileNode extends Meta {
  readonly type: "File"
  data: Uint8Array
}

/**
 * A folder: its metadata and its entries by name.
 * @since 0.1.0
 * @category models
 */
export interface DirNode extends Meta {
  readonly type: "Directory"
  readonly entries: Map<string, Node>
}

/**
 * A node of the tree (an inode).
 * @since 0.1.0
 * @category models
 */
export type Node = FileNode | DirNode

/**
 * One store: its root, its temp folder, and what every new node and handle takes from it.
 * @since 0.1.0
 * @category models
 */
export interface Store {
  /** The folder `/`. */
  readonly root: DirNode
  /** The absolute temp folder, made at start. */
  readonly tmpdir: string
  /** Makes a folder with `mode & ~umask`. */
  readonly newDir: (mode: number) => DirNode
  /** Makes an empty file with `mode & ~umask`. */
  readonly newFile: (mode: number) => FileNode
  /** The next file descriptor. */
  readonly nextDescriptor: () => number
}

/**
 * Marks `node` modified now.
 * @since 0.1.0
 * @category internals
 */
export const touch = (node: Node) => {
  node.mtime = node.ctime = new Date()
}

/**
 * An empty store: `/` and the temp folder, open to all as a system's is (its owner bits matter here).
 * @since 0.1.0
 * @category constructors
 */
export const makeStore = (options: MemoryOptions): Store => {
  const umask = options.umask ?? 0o022
  const owner = { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 }
  let inodes = 0
  let descriptors = 2
  const meta = (mode: number): Meta => {
    const now = new Date()
    return { mode, ...owner, atime: now, mtime: now, ctime: now, birthtime: now, ino: ++inodes, nlink: 1 }
  }
  const root: DirNode = { type: "Directory", entries: new Map(), ...meta(0o755) }
  const tmpdir = posix.resolve(options.tmpdir ?? "/tmp")
  let folder = root
  for (const part of tmpdir.split("/").filter((p) => p !== "")) {
    const made: DirNode = { type: "Directory", entries: new Map(), ...meta(0o1777) }
    folder.entries.set(part, made)
    folder = made
  }
  return {
    root,
    tmpdir,
    newDir: (mode) => ({ type: "Directory", entries: new Map(), ...meta(mode & ~umask & 0o7777) }),
    newFile: (mode) => ({ type: "File", data: new Uint8Array(0), ...meta(mode & ~umask & 0o7777) }),
    nextDescriptor: () => ++descriptors
  }
}

/**
 * The platform's `File.Info` of a node, as `stat` gives it.
 * @since 0.1.0
 * @category getters
 */
export const info = (node: Node): FileSystem.File.Info => ({
  type: node.type,
  mtime: Option.some(node.mtime),
  atime: Option.some(node.atime),
  birthtime: Option.some(node.birthtime),
  dev: 0,
  ino: Option.some(node.ino),
  mode: (node.type === "File" ? 0o100000 : 0o040000) | node.mode,
  nlink: Option.some(node.nlink),
  uid: Option.some(node.uid),
  gid: Option.some(node.gid),
  rdev: Option.some(0),
  size: FileSystem.Size(node.type === "File" ? node.data.length : 0),
  blksize: Option.none(),
  blocks: Option.none()
})
