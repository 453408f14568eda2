/**
 * A fault-injecting `FileSystem` for crash-point tests (docs/design.md, "State and durability"):
 * it runs on the real file system of a temp folder and counts every mutating call a scenario
 * makes (opening a file for writing, a write, a truncate, an fsync, a rename, a removal, a new
 * folder, a mode change, a link), so that the scenario can be replayed stopping after call k, for
 * every k: "the process died here".
 *
 * - **A crash** (`crashAfter: k`): calls 1..k run; call k + 1, and every call after it, mutating
 *   or not, dies with `Crashed` and does nothing, as nothing runs in a process that is gone: the
 *   scenario's finalizers (a temp file's removal, a lock's release) find the file system dead
 *   too, so the disk is left exactly as the crash left it.
 * - **Power loss** (`powerLoss: true`, with a crash or at the scenario's end): every file written since its last
 *   fsync is left empty, as ext4 without `data=journal` can leave a file whose rename reached the
 *   journal before its data reached the disk (ALICE, OSDI '14). Renames, removals and new folders
 *   are taken as persisted (the strictest case for the data).
 * - **A fault** (`fail: { at, code }`): mutating call `at` fails with `ENOSPC` or `EACCES` as the
 *   platform reports them (a `SystemError`) and does nothing; the calls before and after run.
 *
 * The calls made are kept in `calls` (index, operation, path), so a failure can name its crash
 * point.
 */
import * as PlatformError from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { truncateSync } from "node:fs"

/** The process died at this call (a defect: nothing handles it). */
export class Crashed extends Data.TaggedError("Crashed")<{ readonly index: number; readonly op: string; readonly path: string }> {}

/** What to do to a scenario's mutating calls. */
export interface FaultPlan {
  /** The process dies after this many mutating calls; none: it never does. */
  readonly crashAfter?: number
  /** With a crash, files written since their last fsync are left empty. */
  readonly powerLoss?: boolean
  /** Mutating call `at` (1-based) fails with `code` and does nothing. */
  readonly fail?: { readonly at: number; readonly code: "ENOSPC" | "EACCES" }
}

/** One mutating call, as counted. */
export interface Call {
  readonly index: number
  readonly op: string
  readonly path: string
  /** Files written and not yet fsynced before this call: a power loss here empties that many. */
  readonly unsynced: number
}

/** The faulty file system and what it saw. */
export interface Faulty {
  readonly fs: FileSystem.FileSystem
  readonly calls: ReadonlyArray<Call>
  /** Whether the process "died". */
  readonly crashed: () => boolean
  /** Files written and not yet fsynced now (after the scenario stopped). */
  readonly unsynced: () => number
  /**
   * Applies power loss to the disk (after the scenario stopped: cut by the crash, or at its end,
   * the machine losing power right after the last call): unsynced files left empty.
   */
  readonly settle: () => void
}

const isWriteFlag = (flag: FileSystem.OpenFlag | undefined) => flag !== undefined && flag !== "r"

const faultError = (code: "ENOSPC" | "EACCES", method: string, path: string) =>
  new PlatformError.SystemError({
    reason: code === "EACCES" ? "PermissionDenied" : "Unknown",
    module: "FileSystem",
    method,
    pathOrDescriptor: path,
    description: code === "EACCES" ? `EACCES: permission denied, ${method} '${path}'` : `ENOSPC: no space left on device, ${method} '${path}'`
  })

/** Wraps `real` with the plan. */
export const make = (real: FileSystem.FileSystem, plan: FaultPlan): Faulty => {
  const calls: Array<Call> = []
  let dead: Crashed | undefined
  /** Paths written since their last fsync (power loss empties them). */
  const unsynced = new Set<string>()

  const alive = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.suspend(() => (dead === undefined ? effect : Effect.die(dead)))

  /** Counts a mutating call, then dies, fails or runs it. */
  const mutating = <A, R>(
    op: string,
    path: string,
    run: Effect.Effect<A, PlatformError.PlatformError, R>
  ): Effect.Effect<A, PlatformError.PlatformError, R> =>
    Effect.suspend(() => {
      if (dead !== undefined) return Effect.die(dead)
      const index = calls.length + 1
      if (plan.crashAfter !== undefined && index > plan.crashAfter) {
        dead = new Crashed({ index, op, path })
        return Effect.die(dead)
      }
      calls.push({ index, op, path, unsynced: unsynced.size })
      if (plan.fail !== undefined && plan.fail.at === index) return Effect.fail(faultError(plan.fail.code, op, path))
      return run
    })

  const wrapFile = (file: FileSystem.File, at: string): FileSystem.File => ({
      [FileSystem.FileTypeId]: FileSystem.FileTypeId,
      fd: file.fd,
      stat: alive(file.stat),
      seek: (offset, from) => alive(file.seek(offset, from)),
      // Counted and modelled, not done: what a power loss keeps is the model's (`unsynced`), so the
      // real disk need not be flushed (thousands of fsyncs were most of these tests' time).
      sync: mutating("fsync", at, Effect.sync(() => void unsynced.delete(at))),
      read: (buffer) => alive(file.read(buffer)),
      readAlloc: (size) => alive(file.readAlloc(size)),
      truncate: (length) => mutating("truncate", at, Effect.tap(file.truncate(length), () => Effect.sync(() => unsynced.add(at)))),
      write: (buffer) => mutating("write", at, Effect.tap(file.write(buffer), () => Effect.sync(() => unsynced.add(at)))),
      writeAll: (buffer) => mutating("write", at, Effect.tap(file.writeAll(buffer), () => Effect.sync(() => unsynced.add(at))))
    })

  const fs = FileSystem.make({
    access: (path, options) => alive(real.access(path, options)),
    copy: (from, to, options) => mutating("copy", to, real.copy(from, to, options)),
    copyFile: (from, to) => mutating("copyFile", to, real.copyFile(from, to)),
    chmod: (path, mode) => mutating("chmod", path, real.chmod(path, mode)),
    chown: (path, uid, gid) => mutating("chown", path, real.chown(path, uid, gid)),
    link: (from, to) => mutating("link", to, real.link(from, to)),
    makeDirectory: (path, options) => mutating("mkdir", path, real.makeDirectory(path, options)),
    makeTempDirectory: (options) => mutating("mkdtemp", options?.directory ?? "", real.makeTempDirectory(options)),
    makeTempDirectoryScoped: (options) => mutating("mkdtemp", options?.directory ?? "", real.makeTempDirectoryScoped(options)),
    makeTempFile: (options) => mutating("mktemp", options?.directory ?? "", real.makeTempFile(options)),
    makeTempFileScoped: (options) => mutating("mktemp", options?.directory ?? "", real.makeTempFileScoped(options)),
    open: (path, options) =>
      isWriteFlag(options?.flag)
        ? mutating(`open(${options?.flag})`, path, Effect.map(real.open(path, options), (file) => {
          if (options?.flag?.startsWith("w") === true) unsynced.add(path)
          return wrapFile(file, path)
        }))
        : alive(Effect.map(real.open(path, options), (file) => wrapFile(file, path))),
    readDirectory: (path, options) => alive(real.readDirectory(path, options)),
    readFile: (path) => alive(real.readFile(path)),
    readLink: (path) => alive(real.readLink(path)),
    realPath: (path) => alive(real.realPath(path)),
    remove: (path, options) => mutating("remove", path, Effect.tap(real.remove(path, options), () => Effect.sync(() => unsynced.delete(path)))),
    rename: (from, to) =>
      mutating(
        "rename",
        `${from} -> ${to}`,
        Effect.tap(real.rename(from, to), () =>
          Effect.sync(() => {
            // The data goes with the name: unsynced data renamed is unsynced at its new name.
            unsynced.delete(to)
            if (unsynced.delete(from)) unsynced.add(to)
          }))
      ),
    stat: (path) => alive(real.stat(path)),
    symlink: (from, to) => mutating("symlink", to, real.symlink(from, to)),
    truncate: (path, length) => mutating("truncate", path, Effect.tap(real.truncate(path, length), () => Effect.sync(() => unsynced.add(path)))),
    utimes: (path, atime, mtime) => mutating("utimes", path, real.utimes(path, atime, mtime)),
    watch: (path, options) => real.watch(path, options),
    writeFile: (path, data, options) =>
      mutating("writeFile", path, Effect.tap(real.writeFile(path, data, options), () => Effect.sync(() => unsynced.add(path))))
  })

  const settle = () => {
    if (plan.powerLoss !== true) return
    for (const path of unsynced) {
      try {
        truncateSync(path, 0)
      } catch {
        // gone (renamed over, removed): nothing of it is left to lose
      }
    }
  }

  return { fs, calls, crashed: () => dead !== undefined, unsynced: () => unsynced.size, settle }
}
