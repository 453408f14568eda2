/**
 * The store behind `MemoryFileSystem` (../MemoryFileSystem.ts has the decisions): one tree of
 * nodes, directories holding their entries by name, files their bytes. Every operation is
 * synchronous inside its Effect, so each one is atomic, as a single system call is. A node is an
 * inode: an open file keeps its node after a rename or a removal, and a hard link shares it.
 *
 * Failures are the platform's `SystemError`s with Node's error codes in their description
 * (`ENOENT: no such file or directory, open '/a/b'`) and as `code` on their `cause`, mapped to a
 * `reason` exactly as `@effect/platform-node` maps them, so code that tells `NotFound` or `ENOTDIR`
 * apart behaves here as on a disk.
 * @since 0.1.0
 */
import * as PlatformError from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
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

type Errno = "ENOENT" | "EEXIST" | "ENOTDIR" | "EISDIR" | "ENOTEMPTY" | "EACCES" | "EINVAL" | "EBADF" | "EPERM" | "EBUSY"

const texts: Record<Errno, string> = {
  ENOENT: "no such file or directory",
  EEXIST: "file already exists",
  ENOTDIR: "not a directory",
  EISDIR: "illegal operation on a directory",
  ENOTEMPTY: "directory not empty",
  EACCES: "permission denied",
  EINVAL: "invalid argument",
  EBADF: "bad file descriptor",
  EPERM: "operation not permitted",
  EBUSY: "resource busy or locked"
}

/** The reasons `@effect/platform-node` gives these codes (the others are `Unknown`). */
const reasons: Partial<Record<Errno, PlatformError.SystemErrorReason>> = {
  ENOENT: "NotFound",
  EACCES: "PermissionDenied",
  EEXIST: "AlreadyExists",
  EISDIR: "BadResource",
  ENOTDIR: "BadResource",
  EBUSY: "Busy"
}

/** A platform SystemError as Node's file system raises it: its `code` and `syscall` on the cause. */
const raised = (
  reason: PlatformError.SystemErrorReason,
  method: string,
  code: string,
  syscall: string,
  path: string | number,
  description: string
) =>
  new PlatformError.SystemError({
    reason,
    module: "FileSystem",
    method,
    syscall,
    pathOrDescriptor: path,
    description,
    cause: Object.assign(new Error(description), { code, syscall, path })
  })

const systemError = (method: string, code: Errno, syscall: string, path: string | number, dest?: string) =>
  raised(reasons[code] ?? "Unknown", method, code, syscall, path, `${code}: ${texts[code]}, ${syscall} '${path}'${dest === undefined ? "" : ` -> '${dest}'`}`)

/** An error Node raises with a code of its own (`ERR_FS_…`): the platform gives it the reason `Unknown`. */
const nodeError = (method: string, code: string, syscall: string, path: string, description: string) =>
  raised("Unknown", method, code, syscall, path, description)

/**
 * The failure of an operation the store does not model: a `SystemError` (reason `Unknown`,
 * `ENOSYS`) naming the operation, never a silent success.
 * @since 0.1.0
 * @category constructors
 */
export const unsupported = (method: string, path: string, what: string) =>
  new PlatformError.SystemError({
    reason: "Unknown",
    module: "FileSystem",
    method,
    pathOrDescriptor: path,
    description: `ENOSYS: the in-memory file system has no ${what}, ${method} '${path}'`
  })

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
interface FileNode extends Meta {
  readonly type: "File"
  data: Uint8Array
}
interface DirNode extends Meta {
  readonly type: "Directory"
  readonly entries: Map<string, Node>
}
type Node = FileNode | DirNode

const R = 4
const W = 2
const X = 1
/** The owner's bits: the store is used as its files' owner, never as root (who ignores them). */
const can = (node: Node, bit: number) => ((node.mode >> 6) & bit) !== 0

interface OpenFlags {
  readonly read: boolean
  readonly write: boolean
  readonly create: boolean
  readonly exclusive: boolean
  readonly truncate: boolean
  readonly append: boolean
}
const flagsOf = (flag: FileSystem.OpenFlag): OpenFlags => ({
  read: flag.startsWith("r") || flag.endsWith("+"),
  write: flag !== "r",
  create: !flag.startsWith("r"),
  exclusive: flag.includes("x"),
  truncate: flag.startsWith("w"),
  append: flag.startsWith("a")
})

/** Where a path lands: its folder (none for `/`), its last name and the node there, if any. */
interface Place {
  readonly path: string
  readonly dir: DirNode | undefined
  readonly name: string
  readonly node: Node | undefined
}

const randomName = (length: number) => {
  const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
  let out = ""
  for (let i = 0; i < length; i++) out += alphabet[Math.floor(Math.random() * alphabet.length)]
  return out
}

/**
 * Makes an empty store (`/` and the temp folder only) as a platform `FileSystem`.
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: MemoryOptions = {}): FileSystem.FileSystem => {
  const umask = options.umask ?? 0o022
  const owner = { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 }
  let inodes = 0
  let descriptors = 2
  const meta = (mode: number): Meta => {
    const now = new Date()
    return { mode, ...owner, atime: now, mtime: now, ctime: now, birthtime: now, ino: ++inodes, nlink: 1 }
  }
  const newDir = (mode: number): DirNode => ({ type: "Directory", entries: new Map(), ...meta(mode & ~umask & 0o7777) })
  const newFile = (mode: number): FileNode => ({ type: "File", data: new Uint8Array(0), ...meta(mode & ~umask & 0o7777) })
  const touch = (node: Node) => {
    node.mtime = node.ctime = new Date()
  }

  const root: DirNode = { type: "Directory", entries: new Map(), ...meta(0o755) }
  const tmpdir = posix.resolve(options.tmpdir ?? "/tmp")
  // The temp folder exists from the start, open to all as a system's is (its owner bits matter here).
  let folder = root
  for (const part of tmpdir.split("/").filter((p) => p !== "")) {
    const made: DirNode = { type: "Directory", entries: new Map(), ...meta(0o1777) }
    folder.entries.set(part, made)
    folder = made
  }

  const fail = (method: string, code: Errno, syscall: string, path: string | number, dest?: string) =>
    Effect.fail(systemError(method, code, syscall, path, dest))

  /** Runs `f` on the absolute form of `path`; a relative path is refused (it would mean another folder than on a disk). */
  const absolute = <A>(
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

  /**
   * Finds where `path` (absolute, normalized) lands, each folder on the way searchable; when the
   * Effect runs, not when it is made (a step composed after another sees what that one did).
   */
  const place = (method: string, syscall: string, path: string): Effect.Effect<Place, PlatformError.PlatformError> =>
    Effect.suspend(() => placeNow(method, syscall, path))
  const placeNow = (method: string, syscall: string, path: string): Effect.Effect<Place, PlatformError.PlatformError> => {
    const parts = path.split("/").filter((p) => p !== "")
    if (parts.length === 0) return Effect.succeed({ path, dir: undefined, name: "", node: root })
    let dir = root
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

  const existing = (method: string, syscall: string, path: string) =>
    Effect.flatMap(place(method, syscall, path), (at) =>
      at.node === undefined ? fail(method, "ENOENT", syscall, path) : Effect.succeed({ ...at, node: at.node }))

  /** Puts `node` at `at` (its folder must be writable). */
  const attach = (method: string, syscall: string, at: Place, node: Node) => {
    if (at.dir === undefined) return fail(method, "EEXIST", syscall, at.path)
    if (!can(at.dir, W)) return fail(method, "EACCES", syscall, at.path)
    at.dir.entries.set(at.name, node)
    touch(at.dir)
    return Effect.void
  }

  const unlink = (dir: DirNode, name: string) => {
    const node = dir.entries.get(name)
    dir.entries.delete(name)
    if (node !== undefined) node.nlink--
    touch(dir)
  }

  const info = (node: Node): FileSystem.File.Info => {
    const size = node.type === "File" ? node.data.length : 0
    return {
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
      size: FileSystem.Size(size),
      blksize: Option.none(),
      blocks: Option.none()
    }
  }

  /** Writes `bytes` into `file` at `offset`, growing it (with zeros) as needed. */
  const writeAt = (file: FileNode, offset: number, bytes: Uint8Array) => {
    const end = offset + bytes.length
    if (end > file.data.length) {
      const grown = new Uint8Array(end)
      grown.set(file.data)
      file.data = grown
    }
    file.data.set(bytes, offset)
    touch(file)
  }

  const resize = (file: FileNode, length: number) => {
    const next = new Uint8Array(length)
    next.set(file.data.subarray(0, Math.min(length, file.data.length)))
    file.data = next
    touch(file)
  }

  /** Opens `path` as `open(2)` would with `flag`: the node, created when the flag says so. */
  const openNode = (method: string, syscall: string, path: string, flag: FileSystem.OpenFlag, mode: number | undefined) =>
    Effect.flatMap(place(method, syscall, path), (at): Effect.Effect<Node, PlatformError.PlatformError> => {
      const flags = flagsOf(flag)
      if (at.node === undefined) {
        if (!flags.create) return fail(method, "ENOENT", syscall, path)
        const file = newFile(mode ?? 0o666)
        return Effect.as(attach(method, syscall, at, file), file)
      }
      if (flags.create && flags.exclusive) return fail(method, "EEXIST", syscall, path)
      const node = at.node
      if (node.type === "Directory" && flags.write) return fail(method, "EISDIR", syscall, path)
      if ((flags.read && !can(node, R)) || (flags.write && !can(node, W))) return fail(method, "EACCES", syscall, path)
      if (node.type === "File" && flags.truncate && node.data.length > 0) resize(node, 0)
      return Effect.succeed(node)
    })

  const makeHandle = (node: Node, flag: FileSystem.OpenFlag) => {
    const flags = flagsOf(flag)
    const fd = FileSystem.FileDescriptor(++descriptors)
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

  /** `mkdir`, or `mkdir -p` when recursive (each missing folder on the way made with `mode`). */
  const makeDirectoryAt = (method: string, path: string, recursive: boolean, mode: number): Effect.Effect<void, PlatformError.PlatformError> => {
    if (!recursive) {
      return Effect.flatMap(place(method, "mkdir", path), (at) =>
        at.node !== undefined ? fail(method, "EEXIST", "mkdir", path) : attach(method, "mkdir", at, newDir(mode)))
    }
    const parts = path.split("/").filter((p) => p !== "")
    return Effect.forEach(
      parts.map((_, i) => `/${parts.slice(0, i + 1).join("/")}`),
      (level, i) =>
        Effect.flatMap(place(method, "mkdir", level), (at) =>
          at.node === undefined
            ? attach(method, "mkdir", at, newDir(mode))
            : at.node.type === "Directory"
            ? Effect.void
            : fail(method, i === parts.length - 1 ? "EEXIST" : "ENOTDIR", "mkdir", path)),
      { discard: true }
    )
  }

  const makeTempDirectoryAt = (method: string, options?: FileSystem.MakeTempDirectoryOptions) =>
    Effect.suspend(() => {
      const directory = options?.directory === undefined ? tmpdir : options.directory
      const base = options?.prefix ? posix.join(directory, options.prefix) : `${directory}/`
      return absolute(method, base, () => {
        const attempt: Effect.Effect<string, PlatformError.PlatformError> = Effect.suspend(() => {
          const path = posix.resolve(`${base}${randomName(6)}`)
          return makeDirectoryAt(method, path, false, 0o700).pipe(
            Effect.as(path),
            Effect.catchIf((e) => e._tag === "SystemError" && e.reason === "AlreadyExists", () => attempt)
          )
        })
        return attempt
      })
    })

  /** `rm`, with Node's errors: a folder without `recursive` is `ERR_FS_EISDIR`; `force` forgives only a missing path. */
  const removeAt = (method: string, path: string, options?: FileSystem.RemoveOptions) =>
    Effect.flatMap(place(method, "lstat", path), (at): Effect.Effect<void, PlatformError.PlatformError> => {
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

  const writeFileAt = (method: string, path: string, data: Uint8Array, options?: FileSystem.WriteFileOptions) => {
    const flag = options?.flag ?? "w"
    if (!flagsOf(flag).write) return fail(method, "EBADF", "write", path)
    // openNode refused a folder for writing, and truncated the file for a `w` flag.
    return Effect.map(openNode(method, "open", path, flag, options?.mode), (node) => {
      const file = node as FileNode
      writeAt(file, flagsOf(flag).append ? file.data.length : 0, data)
      return file
    })
  }

  /** Copies a file's bytes to `to` as `copyFile` does: a new file gets the source's mode. */
  const copyFileTo = (method: string, source: FileNode, to: string) =>
    Effect.flatMap(place(method, "copyfile", to), (at) =>
      Effect.map(writeFileAt(method, to, source.data.slice(), { mode: source.mode }), (file) => {
        if (at.node === undefined) file.mode = source.mode
        return file
      }))

  const copyNode = (source: Node, to: string, overwrite: boolean, preserve: boolean): Effect.Effect<void, PlatformError.PlatformError> =>
    Effect.flatMap(place("copy", "cp", to), (at) => {
      if (source.type === "File") {
        if (at.node !== undefined) {
          if (at.node.type === "Directory") return fail("copy", "EISDIR", "cp", to)
          if (!overwrite) return Effect.void
        }
        return Effect.map(copyFileTo("copy", source, to), (copied) => {
          if (preserve) {
            copied.atime = source.atime
            copied.mtime = source.mtime
          }
        })
      }
      if (at.node !== undefined && at.node.type !== "Directory") return fail("copy", "ENOTDIR", "cp", to)
      const children = Effect.forEach(
        [...source.entries],
        ([name, child]) => copyNode(child, posix.join(to, name), overwrite, preserve),
        { discard: true }
      )
      if (at.node !== undefined) return children
      // A new folder gets the source's mode once its entries are in (the mode may forbid writing).
      return makeDirectoryAt("copy", to, false, 0o700).pipe(
        Effect.zipRight(children),
        Effect.zipRight(Effect.map(existing("copy", "cp", to), ({ node }) => void (node.mode = source.mode)))
      )
    })

  const inside = (path: string, folder: string) => path !== folder && path.startsWith(folder === "/" ? "/" : `${folder}/`)

  return FileSystem.make({
    access: (path, options) =>
      absolute("access", path, (p) =>
        Effect.flatMap(existing("access", "access", p), ({ node }) =>
          (options?.readable === true && !can(node, R)) || (options?.writable === true && !can(node, W))
            ? fail("access", "EACCES", "access", p)
            : Effect.void)),
    copy: (fromPath, toPath, options) =>
      absolute("copy", fromPath, (from) =>
        absolute("copy", toPath, (to) =>
          Effect.flatMap(existing("copy", "cp", from), ({ node }) =>
            node.type === "Directory" && (to === from || inside(to, from))
              ? Effect.fail(nodeError("copy", "ERR_FS_CP_EINVAL", "cp", from, `Invalid src or dest: cp returned EINVAL (cannot copy ${from} to a subdirectory of self ${to}) ${to}`))
              : copyNode(node, to, options?.overwrite === true, options?.preserveTimestamps === true)))),
    copyFile: (fromPath, toPath) =>
      absolute("copyFile", fromPath, (from) =>
        absolute("copyFile", toPath, (to) =>
          Effect.flatMap(existing("copyFile", "copyfile", from), ({ node }) =>
            node.type === "Directory"
              ? fail("copyFile", "EISDIR", "copyfile", from, to)
              : !can(node, R)
              ? fail("copyFile", "EACCES", "copyfile", from, to)
              : Effect.asVoid(copyFileTo("copyFile", node, to))))),
    chmod: (path, mode) =>
      absolute("chmod", path, (p) =>
        Effect.map(existing("chmod", "chmod", p), ({ node }) => {
          node.mode = mode & 0o7777
          node.ctime = new Date()
        })),
    chown: (path, uid, gid) =>
      absolute("chown", path, (p) =>
        Effect.map(existing("chown", "chown", p), ({ node }) => {
          node.uid = uid
          node.gid = gid
          node.ctime = new Date()
        })),
    link: (fromPath, toPath) =>
      absolute("link", fromPath, (from) =>
        absolute("link", toPath, (to) =>
          Effect.flatMap(existing("link", "link", from), ({ node }) =>
            node.type === "Directory"
              ? fail("link", "EPERM", "link", from, to)
              : Effect.flatMap(place("link", "link", to), (at) => {
                if (at.node !== undefined) return fail("link", "EEXIST", "link", from, to)
                node.nlink++
                return attach("link", "link", at, node)
              })))),
    makeDirectory: (path, options) =>
      absolute("makeDirectory", path, (p) => makeDirectoryAt("makeDirectory", p, options?.recursive === true, options?.mode ?? 0o777)),
    makeTempDirectory: (options) => makeTempDirectoryAt("makeTempDirectory", options),
    makeTempDirectoryScoped: (options) =>
      Effect.acquireRelease(
        makeTempDirectoryAt("makeTempDirectoryScoped", options),
        (dir) => Effect.orDie(removeAt("makeTempDirectoryScoped", dir, { recursive: true }))
      ),
    makeTempFile: (options) =>
      Effect.flatMap(makeTempDirectoryAt("makeTempFile", options), (dir) => {
        const path = posix.join(dir, `${randomName(12)}${options?.suffix ?? ""}`)
        return Effect.as(writeFileAt("makeTempFile", path, new Uint8Array(0), { flag: "wx" }), path)
      }),
    makeTempFileScoped: (options) =>
      Effect.acquireRelease(
        Effect.flatMap(makeTempDirectoryAt("makeTempFileScoped", options), (dir) => {
          const path = posix.join(dir, `${randomName(12)}${options?.suffix ?? ""}`)
          return Effect.as(writeFileAt("makeTempFileScoped", path, new Uint8Array(0), { flag: "wx" }), path)
        }),
        (file) => Effect.orDie(removeAt("makeTempFileScoped", posix.dirname(file), { recursive: true }))
      ),
    open: (path, options) =>
      absolute("open", path, (p) => Effect.succeed(p)).pipe(
        Effect.flatMap((p) =>
          Effect.acquireRelease(
            Effect.map(openNode("open", "open", p, options?.flag ?? "r", options?.mode), (node) => makeHandle(node, options?.flag ?? "r")),
            (opened) => opened.close
          )
        ),
        Effect.map((opened) => opened.handle)
      ),
    readDirectory: (path, options) =>
      absolute("readDirectory", path, (p) =>
        Effect.flatMap(existing("readDirectory", "scandir", p), ({ node }) => {
          if (node.type !== "Directory") return fail("readDirectory", "ENOTDIR", "scandir", p)
          if (!can(node, R)) return fail("readDirectory", "EACCES", "scandir", p)
          const names: Array<string> = []
          const walk = (dir: DirNode, prefix: string) => {
            for (const [name, child] of dir.entries) {
              names.push(`${prefix}${name}`)
              if (options?.recursive === true && child.type === "Directory") walk(child, `${prefix}${name}/`)
            }
          }
          walk(node, "")
          return Effect.succeed(names.sort())
        })),
    readFile: (path) =>
      absolute("readFile", path, (p) =>
        Effect.flatMap(existing("readFile", "open", p), ({ node }) => {
          if (node.type === "Directory") return fail("readFile", "EISDIR", "read", p)
          if (!can(node, R)) return fail("readFile", "EACCES", "open", p)
          node.atime = new Date()
          return Effect.succeed(node.data.slice())
        })),
    // No symbolic links are ever made here: an existing path is not one.
    readLink: (path) =>
      absolute("readLink", path, (p) => Effect.flatMap(existing("readLink", "readlink", p), () => fail("readLink", "EINVAL", "readlink", p))),
    realPath: (path) => absolute("realPath", path, (p) => Effect.as(existing("realPath", "realpath", p), p)),
    remove: (path, options) => absolute("remove", path, (p) => removeAt("remove", p, options)),
    rename: (oldPath, newPath) =>
      absolute("rename", oldPath, (from) =>
        absolute("rename", newPath, (to) =>
          Effect.flatMap(
            Effect.zip(existing("rename", "rename", from), place("rename", "rename", to)),
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
          ))),
    stat: (path) => absolute("stat", path, (p) => Effect.map(existing("stat", "stat", p), ({ node }) => info(node))),
    symlink: (fromPath, toPath) => Effect.fail(unsupported("symlink", toPath, `symbolic links (to '${fromPath}')`)),
    truncate: (path, length) =>
      absolute("truncate", path, (p) =>
        Effect.flatMap(existing("truncate", "open", p), ({ node }) => {
          if (node.type === "Directory") return fail("truncate", "EISDIR", "open", p)
          if (!can(node, W)) return fail("truncate", "EACCES", "open", p)
          resize(node, Number(length ?? 0))
          return Effect.void
        })),
    utimes: (path, atime, mtime) =>
      absolute("utimes", path, (p) =>
        Effect.map(existing("utimes", "utime", p), ({ node }) => {
          // As Node's `utimes`: a number is seconds since the epoch.
          const date = (t: Date | number) => (typeof t === "number" ? new Date(t * 1000) : t)
          node.atime = date(atime)
          node.mtime = date(mtime)
          node.ctime = new Date()
        })),
    watch: (path) => Stream.fail(unsupported("watch", path, "change events")),
    writeFile: (path, data, options) => absolute("writeFile", path, (p) => Effect.asVoid(writeFileAt("writeFile", p, data, options)))
  })
}
