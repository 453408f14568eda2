/**
 * A process named so that a reused pid is never mistaken for it (docs/cli.md, "Commands and
 * signals"): its pid and its start, the boot id and the start time the kernel keeps for it
 * (`/proc/sys/kernel/random/boot_id`, field 22 of `/proc/<pid>/stat`). These are read with the
 * platform's `readFileString`, not the file reader: they are the kernel's own one-line files, which
 * no one can swap for a FIFO or a device, and a sweep reads one per command it starts. Where the
 * platform has no `/proc`, the start is `null`: such a process can be found
 * alive or gone, but never told from another process that got its pid (`running` says
 * `undefined`), and callers never signal it on that ground.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { ProcessIdentity } from "../../schema/ProcessRecord.ts"

const readProc = (file: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    fs.readFileString(file).pipe(
      Effect.map((text) => Option.some(text.trim())),
      Effect.orElseSucceed(() => Option.none<string>())
    ))

let bootId: Option.Option<string> | undefined

/** The boot id, read on first use and kept (`None` without `/proc`). */
const boot = Effect.suspend(() =>
  bootId !== undefined
    ? Effect.succeed(bootId)
    : Effect.tap(readProc("/proc/sys/kernel/random/boot_id"), (id) => {
      bootId = id
    })
)

/**
 * The start of `pid`: `None` when it is gone, a zombie, or the platform gives no start.
 * @since 0.1.0
 * @category identity
 */
export const startOf = (pid: number): Effect.Effect<Option.Option<string>, never, FileSystem.FileSystem> =>
  Effect.flatMap(boot, (id) =>
    Option.isNone(id)
      ? Effect.succeed(Option.none())
      : Effect.map(readProc(`/proc/${pid}/stat`), Option.flatMap((line) => {
        // `pid (comm) state ppid ...`: comm may hold spaces and parentheses, so fields count from the last ')'.
        const fields = line.slice(line.lastIndexOf(")") + 2).split(" ")
        const status = fields[0]
        const started = fields[19] // field 22 of proc(5), `starttime`
        return status === undefined || status === "Z" || status === "X" || started === undefined
          ? Option.none()
          : Option.some(`${id.value}:${started}`)
      })))

/**
 * The identity of a process that runs now (its start `null` where the platform gives none).
 * @since 0.1.0
 * @category identity
 */
export const identify = (pid: number): Effect.Effect<ProcessIdentity, never, FileSystem.FileSystem> =>
  Effect.map(startOf(pid), (start) => ({ pid, start: Option.getOrNull(start) }))

/**
 * Whether the process the identity names runs (a zombie does not): `true`, `false`, or
 * `undefined` when a process of that pid exists but cannot be told from a reused pid.
 * @since 0.1.0
 * @category identity
 */
export const running = (identity: ProcessIdentity): Effect.Effect<boolean | undefined, never, FileSystem.FileSystem> =>
  Effect.flatMap(boot, (id) =>
    identity.start !== null && Option.isSome(id)
      ? Effect.map(startOf(identity.pid), (start) => Option.isSome(start) && start.value === identity.start)
      : Effect.sync(() => {
        try {
          process.kill(identity.pid, 0)
          return undefined
        } catch (error) {
          return typeof error === "object" && error !== null && "code" in error && error.code === "EPERM" ? undefined : false
        }
      }))
