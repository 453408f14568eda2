/**
 * The failures of the in-memory store (../MemoryFileSystem.ts has the decisions): the platform's
 * `SystemError`s with Node's error codes in their description (`ENOENT: no such file or directory,
 * open '/a/b'`) and as `code` on their `cause`, mapped to a `reason` exactly as
 * `@effect/platform-node` maps them, so code that tells `NotFound` or `ENOTDIR` apart behaves here
 * as on a disk.
 * @since 0.1.0
 */
import * as PlatformError from "@effect/platform/Error"
import * as Effect from "effect/Effect"

/**
 * The error codes the store raises, as Node names them.
 * @since 0.1.0
 * @category models
 */
export type Errno = "ENOENT" | "EEXIST" | "ENOTDIR" | "EISDIR" | "ENOTEMPTY" | "EACCES" | "EINVAL" | "EBADF" | "EPERM" | "EBUSY"

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

/**
 * Fails as Node's `syscall` on `path` (and `dest`, for two-path calls) fails with `code`.
 * @since 0.1.0
 * @category constructors
 */
export const fail = (method: string, code: Errno, syscall: string, path: string | number, dest?: string) =>
  Effect.fail(systemError(method, code, syscall, path, dest))

/**
 * An error Node raises with a code of its own (`ERR_FS_…`): the platform gives it the reason `Unknown`.
 * @since 0.1.0
 * @category constructors
 */
export const nodeError = (method: string, code: string, syscall: string, path: string, description: string) =>
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
