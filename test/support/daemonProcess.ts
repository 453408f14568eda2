/**
 * A real `city` child process (the daemon, or any verb) for the crash tests: started with
 * `CITY_ROOT`, its output kept in a file, its exit awaited; `kill` sends a signal. The scope kills
 * what is left.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { openSync } from "node:fs"
import { join } from "node:path"
import { binary, underUmask } from "../acceptance/cityCli.ts"

export interface Daemon {
  readonly pid: number
  readonly exited: Deferred.Deferred<{ readonly code: number | null; readonly signal: string | null }>
  readonly kill: (signal: NodeJS.Signals) => Effect.Effect<void>
  readonly log: string
}

/**
 * `city ...args` as a child process. `detached`: the leader of a new process group, as a
 * supervisor starts it (`setsid`), so a test can signal the whole group.
 */
export const startCity = (
  root: string,
  logDir: string,
  name: string,
  args: ReadonlyArray<string>,
  options: { readonly umask?: string; readonly detached?: boolean } = {}
) =>
  Effect.gen(function*() {
    const log = join(logDir, `${name}.log`)
    const out = openSync(log, "a")
    const exited = yield* Deferred.make<{ readonly code: number | null; readonly signal: string | null }>()
    const child = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const env: Record<string, string | undefined> = { ...process.env, CITY_ROOT: root }
        delete env["CITY_PRIVATE_DIR"]
        const [file, argv] = underUmask(options.umask, [binary, ...args])
        const c = spawn(file, argv, { env, stdio: ["ignore", out, out], detached: options.detached === true })
        c.once("exit", (code, signal) => Deferred.unsafeDone(exited, Effect.succeed({ code, signal })))
        return c
      }),
      (c) => Effect.sync(() => void (c.exitCode === null && c.signalCode === null ? c.kill("SIGKILL") : undefined))
    )
    const started: Daemon = {
      pid: child.pid ?? 0,
      exited,
      kill: (signal) => Effect.sync(() => void child.kill(signal)),
      log
    }
    return started
  })

/** `city daemon --poll-ms 100 ...args` (see `startCity`). */
export const startDaemon = (
  root: string,
  logDir: string,
  name: string,
  args: ReadonlyArray<string> = [],
  options: { readonly umask?: string } = {}
) => startCity(root, logDir, name, ["daemon", "--poll-ms", "100", ...args], options)
