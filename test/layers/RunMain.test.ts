/**
 * The public `runMain` (docs/library.md, "Process exit"): a signal interrupts the program and
 * starts its finalizers; if they have not finished within `finalizerDeadline`, the process says so
 * on stderr and exits 130. Real processes, real signals.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

const repo = fileURLToPath(new URL("../..", import.meta.url))
const fixture = fileURLToPath(new URL("../fixtures/stuckFinalizer.ts", import.meta.url))

interface Ended {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs the fixture in `mode`, sends it SIGTERM once it printed `ready`, and waits for its exit. */
const terminated = (mode: string) =>
  Effect.async<Ended>((resume) => {
    const child = spawn(process.execPath, ["--import", "tsx", fixture, mode], { cwd: repo, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    let signalled = false
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk
      if (!signalled && stdout.includes("ready\n")) {
        signalled = true
        child.kill("SIGTERM")
      }
    })
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk
    })
    child.on("close", (code) => resume(Effect.succeed({ code, stdout, stderr })))
    return Effect.sync(() => {
      child.kill("SIGKILL")
    })
  })

describe("runMain", () => {
  it.live("a program whose finalizer hangs exits 130 after the deadline, saying what it abandoned", () =>
    Effect.gen(function*() {
      const ended = yield* terminated("stuck")
      expect(ended.code, ended.stderr).toBe(130)
      expect(ended.stderr).toContain("cleanup did not finish within 1000 ms; exiting; abandoned: the stuck finalizer")
    }))

  it.live("a deadline given as a function is read when the signal arrives", () =>
    Effect.gen(function*() {
      const ended = yield* terminated("stuck-late")
      expect(ended.code, ended.stderr).toBe(130)
      expect(ended.stderr).toContain("cleanup did not finish within 1000 ms; exiting")
    }))

  it.live("a program whose finalizer ends in time exits through its teardown, without the deadline's message", () =>
    Effect.gen(function*() {
      const ended = yield* terminated("quick")
      expect(ended.stdout).toContain("finalized")
      expect(ended.code, ended.stderr).toBe(0)
      expect(ended.stderr).not.toContain("cleanup did not finish")
    }))
})
