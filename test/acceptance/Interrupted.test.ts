/**
 * An interrupted verb says what finished and what was interrupted (docs/cli.md, "Interrupted"),
 * with the real binary and real signals: SIGTERM or SIGINT to the process group of a `city`
 * started as a supervisor starts it (`setsid`), once the test knows the slow command is running
 * (it says so through a FIFO the test reads). The first endpoint (alice) succeeds at once; the
 * second (bob) blocks until it is ended.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { spawn } from "node:child_process"
import { join } from "node:path"
import { Interrupted } from "../../src/programs/jsonOutput.ts"
import { isAlive } from "../fixtures.ts"
import { binary, declaration, provisioner, seedPeer, world, writeJson } from "./cityCli.ts"

const real = (name: string, body: () => Effect.Effect<void, unknown, NodeContext.NodeContext | Scope.Scope>) =>
  it.scopedLive(name, () => body().pipe(Effect.provide(NodeContext.layer)), 60_000)

const mkfifo = (path: string) =>
  Effect.promise(() =>
    new Promise<void>((resolve, reject) => {
      spawn("mkfifo", [path]).once("exit", (code) => code === 0 ? resolve() : reject(new Error(`mkfifo ${path}`)))
    })
  )

/** Peers alice and bob on claude and the `stat` capability: alice's call ends at once, bob's blocks. */
const slowWorld = Effect.gen(function*() {
  const w = yield* world
  const started = join(w.base, "started")
  const pid = join(w.base, "bob.pid")
  yield* mkfifo(started)
  const script = yield* provisioner(
    w.bin,
    "prov",
    w.journal,
    `[ "$2" = bob ] && { echo $$ > '${pid}'; echo go > '${started}'; exec /bin/sleep 600; }\nexit 0`
  )
  yield* seedPeer(w.root, "alice", w.work, ["claude"])
  yield* seedPeer(w.root, "bob", w.work, ["claude"])
  // Registered with a command that succeeds; the sync below runs the slow one.
  const ok = yield* provisioner(w.bin, "ok", join(w.base, "ok-journal"))
  const file = yield* writeJson(w.bin, "stat.json", declaration({ name: "stat", command: ok, runtimes: ["claude"] }))
  return { w, started, pid, file, script }
})

/** `city ...args` as the leader of its own process group, stdout and stderr kept apart; its exit awaited. */
const startCity = (root: string, args: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child = spawn(process.execPath, [binary, ...args], {
        env: { ...process.env, CITY_ROOT: root },
        stdio: ["ignore", "pipe", "pipe"],
        detached: true
      })
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString()
      })
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString()
      })
      const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
        child.once("close", (code) => resolve({ code, stdout, stderr }))
      )
      return { pid: child.pid ?? 0, exited, child }
    }),
    ({ child }) => Effect.sync(() => void (child.exitCode === null && child.signalCode === null ? child.kill("SIGKILL") : undefined))
  )

/** Runs `capability sync stat` with the slow command, signals the group once bob's call runs, returns what city printed. */
const interruptedSync = (signal: "SIGTERM" | "SIGINT", extra: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const { file, pid, script, started, w } = yield* slowWorld
    const registered = yield* startCity(w.root, ["capability", "register", file])
    expect((yield* Effect.promise(() => registered.exited)).code).toBe(0)
    // The declaration now runs the slow command.
    yield* writeJson(join(w.root, "capabilities"), "stat.json", declaration({ name: "stat", command: script, runtimes: ["claude"] }))
    const cli = yield* startCity(w.root, ["capability", "sync", "stat", "--concurrency", "1", ...extra])
    yield* fs.readFileString(started)
    const command = Number((yield* fs.readFileString(pid)).trim())
    process.kill(-cli.pid, signal)
    const result = yield* Effect.promise(() => cli.exited)
    // The running command was ended before city exited.
    expect(isAlive(command)).toBe(false)
    return result
  })

describe("an interrupted verb says what finished and what was interrupted", () => {
  real("SIGTERM to the group of `capability sync --json`: the document lists alice ok and bob interrupted; exit 143", () =>
    Effect.gen(function*() {
      const r = yield* interruptedSync("SIGTERM", ["--json"])
      expect(r.code).toBe(143)
      const document = Schema.decodeUnknownSync(Schema.parseJson(Interrupted), { onExcessProperty: "error" })(r.stdout)
      expect(document).toMatchObject({
        ok: false,
        verb: "capability sync",
        error: { _tag: "Interrupted", message: "interrupted: 1 of 2 endpoints done, 1 interrupted" },
        summary: { total: 2, ok: 1, failed: 1, by_state: { ok: 1, interrupted: 1 } }
      })
      expect(document.outcomes?.map((o) => [o.peer, o.state])).toEqual([["alice", "ok"], ["bob", "interrupted"]])
      expect(r.stderr).toBe("city: interrupted: capability sync: 1 of 2 endpoints done, 1 interrupted\n")
    }))

  real("SIGINT to the group of `capability sync`: one line on stderr, nothing on stdout; exit 130", () =>
    Effect.gen(function*() {
      const r = yield* interruptedSync("SIGINT", [])
      expect(r.code).toBe(130)
      expect(r.stdout).toBe("")
      expect(r.stderr).toBe("city: interrupted: capability sync: 1 of 2 endpoints done, 1 interrupted\n")
    }))
})
