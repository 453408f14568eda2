/**
 * The one child runner's options that host `status` commands and tool calls use: stdout collected
 * under an output cap, no grace (SIGKILL at once), and pipes read until they close.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import { join } from "node:path"
import * as ChildRunner from "../../../src/services/capabilities/ChildRunner.ts"
import { isAlive } from "../../fixtures.ts"
import { script } from "./runnerFixtures.ts"

const collecting = ChildRunner.make({ killGraceMs: 0, stderrGraceMs: Infinity, tailBytes: 1024, outputBytes: 1024 })

const request = (command: string, timeoutMs = 20_000): ChildRunner.ChildRequest => ({
  command,
  args: [],
  cwd: "/",
  env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
  timeoutMs
})

const live = (name: string, body: Effect.Effect<void, unknown, FileSystem.FileSystem | Scope.Scope>) =>
  it.scopedLive(name, () => body.pipe(Effect.provide(NodeContext.layer)))

const pidsIn = (file: string) =>
  Effect.map(Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readFileString(file)), (s) => s.trim().split(/\s+/).map(Number))

/**
 * Every pid in the file is dead within a second. With no grace the call does not wait for the
 * SIGKILLed group to be reaped (as tool calls never did), so this polls (bounded) rather than sleeps.
 */
const allGone = (file: string) =>
  Effect.flatMap(pidsIn(file), (pids) =>
    Effect.sync(() => pids.filter(isAlive)).pipe(
      Effect.filterOrFail((alive) => alive.length === 0, (alive) => alive),
      Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.compose(Schedule.recurs(50)))),
      Effect.orElseSucceed(() => pids.filter(isAlive))
    ))

describe("ChildRunner", () => {
  live("stdout is collected and read until the pipes close, even after the command exited", Effect.gen(function*() {
    const dir = yield* (yield* FileSystem.FileSystem).makeTempDirectoryScoped()
    const late = yield* script(dir, "late", `(sleep 0.3; echo late) &\necho early\nexit 0`)
    const { outcome, stdout } = yield* ChildRunner.run(collecting, request(late))
    expect(outcome).toMatchObject({ state: "ok", exit: 0 })
    expect(stdout).toBe("early\nlate\n")
  }))

  live("output over the cap kills the group and fails the call", Effect.gen(function*() {
    const dir = yield* (yield* FileSystem.FileSystem).makeTempDirectoryScoped()
    const pids = join(dir, "pids")
    const loud = yield* script(dir, "loud", `sleep 60 &\necho $$ $! > '${pids}'\nwhile :; do echo xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; done`)
    const { outcome } = yield* ChildRunner.run(collecting, request(loud))
    expect(outcome).toMatchObject({ state: "failed", detail: "output over 1024 bytes" })
    expect(yield* allGone(pids)).toEqual([])
  }))

  live("with no grace, a timeout sends SIGKILL at once: a command ignoring SIGTERM ends promptly", Effect.gen(function*() {
    const dir = yield* (yield* FileSystem.FileSystem).makeTempDirectoryScoped()
    const pids = join(dir, "pids")
    const stubborn = yield* script(dir, "stubborn", `trap '' TERM\nsleep 60 &\necho $$ $! > '${pids}'\nwait\nwait`)
    const { outcome } = yield* ChildRunner.run(collecting, request(stubborn, 300))
    expect(outcome.state).toBe("timeout")
    expect(outcome.ms).toBeLessThan(5_000)
    expect(yield* allGone(pids)).toEqual([])
  }))

  live("an interrupted call sends its group SIGKILL: even what ignores SIGTERM is gone", Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const dir = yield* fs.makeTempDirectoryScoped()
    const pids = join(dir, "pids")
    const stubborn = yield* script(dir, "stubborn", `trap '' TERM\nsleep 60 &\necho $$ $! > '${pids}.tmp'\nmv '${pids}.tmp' '${pids}'\nwait\nwait`)
    const fiber = yield* Effect.fork(ChildRunner.run(collecting, request(stubborn)))
    yield* fs.exists(pids).pipe(
      Effect.filterOrFail((exists) => exists),
      Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.compose(Schedule.recurs(500))))
    )
    yield* Fiber.interrupt(fiber)
    expect(yield* allGone(pids)).toEqual([])
  }))

  live("a missing executable is not-executable, with the reason", Effect.gen(function*() {
    const { outcome } = yield* ChildRunner.run(collecting, request("/nonexistent/tool"))
    expect(outcome.state).toBe("not-executable")
    expect(outcome.detail).toContain("ENOENT")
  }))
})
