/**
 * A process named so that a reused pid is never mistaken for it (docs/cli.md, "Commands and
 * signals"): its pid and its start, the boot id and the start time the kernel keeps for it
 * (`/proc/sys/kernel/random/boot_id`, field 22 of `/proc/<pid>/stat`, in clock ticks since boot).
 *
 * A command `city` has just spawned is named more cheaply, by its pid and a bound on its start
 * (`startBound`): the time it was recorded, in the same ticks, plus a second. It started before it
 * was recorded; a process that later got its pid started after it ended, so after the record, and
 * is told apart unless the pid was handed out again within that second (which takes the whole pid
 * space to be used up in it). The bound is this process's own start plus its uptime, so a sweep
 * reads no `/proc` file per command it starts (that read was a tenth of a sweep's own CPU). These are read with the
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

/** What `/proc/<pid>/stat` says of `pid`: whether it has exited (a zombie) and its start; `None` when it is gone or there is no `/proc`. */
const statusOf = (pid: number): Effect.Effect<Option.Option<{ readonly exited: boolean; readonly start: string }>, never, FileSystem.FileSystem> =>
  Effect.flatMap(boot, (id) =>
    Option.isNone(id)
      ? Effect.succeed(Option.none())
      : Effect.map(readProc(`/proc/${pid}/stat`), Option.flatMap((line) => {
        // `pid (comm) state ppid ...`: comm may hold spaces and parentheses, so fields count from the last ')'.
        const fields = line.slice(line.lastIndexOf(")") + 2).split(" ")
        const status = fields[0]
        const started = fields[19] // field 22 of proc(5), `starttime`
        return status === undefined || started === undefined
          ? Option.none()
          : Option.some({ exited: status === "Z" || status === "X", start: `${id.value}:${started}` })
      })))

/**
 * The start of `pid`: `None` when it is gone, a zombie, or the platform gives no start.
 * @since 0.1.0
 * @category utils
 */
export const startOf = (pid: number): Effect.Effect<Option.Option<string>, never, FileSystem.FileSystem> =>
  Effect.map(statusOf(pid), Option.flatMap((s) => s.exited ? Option.none() : Option.some(s.start)))

/**
 * The identity of a process that runs now (its start `null` where the platform gives none).
 * @since 0.1.0
 * @category utils
 */
export const identify = (pid: number): Effect.Effect<ProcessIdentity, never, FileSystem.FileSystem> =>
  Effect.map(startOf(pid), (start) => ({ pid, start: Option.getOrNull(start) }))

/**
 * Whether the process the identity names runs (a zombie does not): `true`, `false`, or
 * `undefined` when a process of that pid exists but cannot be told from a reused pid.
 * @since 0.1.0
 * @category utils
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

/** Clock ticks per second of `/proc/<pid>/stat` (`USER_HZ`, 100 on every Linux architecture Node runs on). */
const ticksPerSecond = 100

/** A start (`boot:ticks`) in its two parts; `None` when the ticks are not a number. */
const partsOf = (start: string) => {
  const at = start.lastIndexOf(":")
  const ticks = Number(start.slice(at + 1))
  return at < 0 || !Number.isFinite(ticks) ? Option.none() : Option.some({ boot: start.slice(0, at), ticks })
}

/**
 * The bound on the start of a process spawned just now, from `self` (this process, as `identify`
 * gave it): a function giving `boot:ticks` a second after the moment it is called; `null` where
 * `self` has no start. `self` is read once, here: the function runs at every spawn.
 * @since 0.1.0
 * @category utils
 */
export const startBound = (self: ProcessIdentity): () => string | null => {
  const parts = self.start === null ? Option.none() : partsOf(self.start)
  if (Option.isNone(parts)) return () => null
  const { boot, ticks } = parts.value
  // `process.uptime()` counts from Node's start, a little after the kernel's: the second covers it.
  return () => `${boot}:${Math.ceil(ticks + (process.uptime() + 1) * ticksPerSecond)}`
}

/**
 * What the pid of a command recorded with `bound` (a `startBound`) names now: `running` (that
 * command, alive), `exited` (that command, a zombie), `gone` (no process has the pid), `other` (a
 * process that started after the bound got the pid), or `unknown` (a process of that pid exists
 * but cannot be told from a reused pid: no start to compare).
 * @since 0.1.0
 * @category utils
 */
export const commandStatus = (
  pid: number,
  bound: string | null
): Effect.Effect<"running" | "exited" | "gone" | "other" | "unknown", never, FileSystem.FileSystem> => {
  const limit = bound === null ? Option.none() : partsOf(bound)
  if (Option.isNone(limit)) return Effect.map(running({ pid, start: null }), (alive) => alive === false ? "gone" : "unknown")
  return Effect.map(statusOf(pid), (status) => {
    if (Option.isNone(status)) return "gone"
    const started = partsOf(status.value.start)
    if (Option.isNone(started) || started.value.boot !== limit.value.boot || started.value.ticks > limit.value.ticks) return "other"
    return status.value.exited ? "exited" : "running"
  })
}
