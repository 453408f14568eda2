/**
 * What an operator does to the chaos fleet, each act a line of the history
 * (test/chaos/history.ts):
 *
 * - `sweep`: `city capability register|sync|unregister … --cluster <url> --json` as a real process
 *   on the operator's own root, bounded (`test sweep-begin id= verb= capability=`, then `test
 *   sweep-end id= code=`, `code=killed` when it outlived its bound and was killed); its stdout is
 *   the report;
 * - `readFleet`: `city fleet --cluster <url> --json` (in this process: one read a second, with no
 *   process start each time), bounded by 5 s (`test poll from= up= down= owed=` or `error=`).
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import type * as Terminal from "@effect/platform/Terminal"
import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"
import { binary, city } from "../acceptance/cityCli.ts"
import { append, now, testLine } from "./history.ts"

/** How long a sweep may take before it is killed: longer than a takeover after a SIGSTOP (15 s) plus a call's timeout. */
export const sweepBoundMs = 60_000

/** The call timeout the sweeps are given (`--timeout-ms`): a stopped host's endpoints fail after it. */
export const callTimeoutMs = 6_000

export interface SweepRun {
  readonly id: string
  readonly code: number | "killed"
  readonly stdout: string
}

/** A report's verdict, or its error's tag, for the history's line. */
const verdictOf = (stdout: string) => {
  try {
    const document = JSON.parse(stdout) as { readonly verdict?: string; readonly error?: { readonly _tag?: string } }
    return document.verdict ?? document.error?._tag ?? "?"
  } catch {
    return "none"
  }
}

/** One capability verb on the fleet, from the operator's root. */
export const sweep = (options: {
  readonly log: string
  readonly root: string
  readonly url: string
  readonly id: string
  readonly verb: "register" | "sync" | "unregister"
  readonly capability: string
  /** `register`'s declaration file. */
  readonly file: string
}): Effect.Effect<SweepRun> =>
  Effect.async<SweepRun>((resume) => {
    const { capability, id, log, verb } = options
    const target = verb === "register" ? options.file : capability
    append(log, testLine("sweep-begin", { id, verb, capability }))
    const env: Record<string, string | undefined> = { ...process.env, CITY_ROOT: options.root }
    delete env["CITY_PRIVATE_DIR"]
    const child = execFile(
      process.execPath,
      [binary, "capability", verb, target, "--cluster", options.url, "--timeout-ms", String(callTimeoutMs), "--json"],
      { env, timeout: sweepBoundMs, killSignal: "SIGKILL", maxBuffer: 16 * 1024 * 1024, encoding: "utf8" },
      (error, stdout) => {
        const code = error === null ? 0 : error.killed === true && error.signal === "SIGKILL" ? "killed" : typeof error.code === "number" ? error.code : 1
        append(log, testLine("sweep-end", { id, code, verdict: verdictOf(stdout), ...(code === "killed" ? { bound: sweepBoundMs } : {}) }))
        resume(Effect.succeed({ id, code, stdout }))
      }
    )
    child.stdin?.end()
    return Effect.sync(() => void child.kill("SIGKILL"))
  })

export interface FleetHost {
  readonly host: string
  readonly up: boolean
  readonly owed_reloads: number
  readonly owed_removals: number
}

export interface FleetRead {
  readonly stdout: string | undefined
  readonly hosts: ReadonlyArray<FleetHost> | undefined
}

/** `city fleet --cluster <url> --json`, once, as a line of the history. */
export const readFleet = (log: string, url: string): Effect.Effect<FleetRead, never, FileSystem.FileSystem | Path.Path | Terminal.Terminal> =>
  Effect.gen(function*() {
    const from = now()
    const run = yield* city(["fleet", "--cluster", url, "--json"]).pipe(Effect.timeout("5 seconds"), Effect.either)
    const stdout = run._tag === "Right" ? run.right.stdout : undefined
    let hosts: ReadonlyArray<FleetHost> | undefined
    try {
      hosts = stdout === undefined ? undefined : (JSON.parse(stdout) as { hosts?: ReadonlyArray<FleetHost> }).hosts
    } catch {
      hosts = undefined
    }
    const seconds = (from / 1000).toFixed(3)
    if (hosts === undefined) {
      const why = run._tag === "Left" ? "no answer within 5 s" : (run.right.stderr.trim().split("\n").at(-1) ?? `exit ${run.right.code}`)
      append(log, testLine("poll", { from: seconds, error: why.slice(0, 200) }))
    } else {
      append(log, testLine("poll", {
        from: seconds,
        up: hosts.filter((h) => h.up).map((h) => h.host).join(","),
        down: hosts.filter((h) => !h.up).map((h) => h.host).join(","),
        owed: hosts.map((h) => `${h.host}:${h.owed_reloads}/${h.owed_removals}`).join(",")
      }))
    }
    return { stdout, hosts }
  })
