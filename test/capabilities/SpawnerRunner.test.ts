import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import { join } from "node:path"
import * as SpawnerRunner from "../../src/services/capabilities/SpawnerRunner.ts"
import { decodeFromSpawner, decodeToSpawner, lineReader } from "../../src/services/capabilities/SpawnerProtocol.ts"
import { isAlive } from "../fixtures.ts"
import { request, script } from "./runnerFixtures.ts"

// The semantics shared with the in-process runner are tested on both in CommandRunner.test.ts;
// this file is what only the spawner has: its own process, and that process dying or not starting.


/** Waits (bounded poll of a condition, not a sleep) until `file` exists; fails after ~10 s. */
const appears = (file: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    fs.exists(file).pipe(
      Effect.filterOrFail((exists) => exists),
      Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.compose(Schedule.recurs(500))))
    ))

/** Waits (bounded poll) until none of `pids` is alive; returns those still alive after ~10 s. */
const allGone = (pids: ReadonlyArray<number>) =>
  Effect.sync(() => pids.filter(isAlive)).pipe(
    Effect.filterOrFail((alive) => alive.length === 0),
    Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.compose(Schedule.recurs(500)))),
    Effect.orElseSucceed(() => pids.filter(isAlive))
  )

const live = <A>(name: string, body: () => Effect.Effect<A, unknown, FileSystem.FileSystem | Scope.Scope>) =>
  it.scopedLive(name, () => Effect.asVoid(body()).pipe(Effect.provide(NodeContext.layer)))

describe("SpawnerRunner", () => {
  live("the commands run in the spawner process, not in this one", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      // In a checkout the script is the bundle's dist/spawner.cjs (built by the global setup).
      expect(Option.isSome(SpawnerRunner.spawnerScript())).toBe(true)
      const runner = yield* SpawnerRunner.make()
      const parent = yield* script(dir, "parent", `echo $PPID > '${join(dir, "ppid")}'`)
      expect((yield* runner.run(request(parent))).state).toBe("ok")
      const ppid = Number((yield* fs.readFileString(join(dir, "ppid"))).trim())
      expect(ppid).not.toBe(process.pid)
      expect(isAlive(ppid)).toBe(true)
    }))

  live("a spawner killed mid-call fails the call with the reason, terminates its group, and the next call gets a new spawner", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const runner = yield* SpawnerRunner.make({ killGrace: "200 millis" })
      const ids = join(dir, "ids")
      const long = yield* script(dir, "long", `sleep 60 &\necho $PPID $$ $! > '${ids}.tmp'\nmv '${ids}.tmp' '${ids}'\nwait`)
      const fiber = yield* Effect.fork(runner.run(request(long, { timeout: "60 seconds" })))
      yield* appears(ids)
      const [spawner = 0, ...group] = (yield* fs.readFileString(ids)).trim().split(" ").map(Number)
      process.kill(spawner, "SIGKILL")
      const outcome = yield* Fiber.join(fiber)
      expect(outcome.state).toBe("failed")
      expect(outcome.detail).toMatch(/^the spawner process was killed by SIGKILL while the command ran/)
      expect(yield* allGone(group)).toEqual([])
      const ok = yield* script(dir, "ok", "exit 0")
      expect((yield* runner.run(request(ok))).state).toBe("ok")
    }))

  live("a spawner that cannot start fails each call with its exit and stderr, and never hangs", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const runner = yield* SpawnerRunner.make({}, { script: Option.some(join(dir, "no-such-spawner.mjs")) })
      const ok = yield* script(dir, "ok", "exit 0")
      const outcomes = yield* Effect.forEach([1, 2, 3], () => runner.run(request(ok)), { concurrency: 3 })
      for (const outcome of outcomes) {
        expect(outcome.state).toBe("failed")
        expect(outcome.detail).toMatch(/^the spawner process exited with code 1 while the command ran.*no-such-spawner/s)
      }
    }))

  live("a Ctrl-C that reaches the spawner (same process group) does not end its calls", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const runner = yield* SpawnerRunner.make()
      const ids = join(dir, "ids")
      const gate = join(dir, "gate")
      const waiter = yield* script(
        dir,
        "waiter",
        `echo $PPID > '${ids}.tmp'\nmv '${ids}.tmp' '${ids}'\nwhile [ ! -e '${gate}' ]; do sleep 0.02; done\nexit 0`
      )
      const fiber = yield* Effect.fork(runner.run(request(waiter)))
      yield* appears(ids)
      process.kill(Number((yield* fs.readFileString(ids)).trim()), "SIGINT")
      yield* fs.writeFileString(gate, "")
      expect((yield* Fiber.join(fiber)).state).toBe("ok")
    }))
})

describe("the spawner protocol", () => {
  it.effect("a message is decoded only when every field has its type", () =>
    Effect.sync(() => {
      expect(decodeFromSpawner(JSON.stringify({ t: "done", id: 3, outcome: { state: "ok", exit: 0, ms: 4 } })))
        .toEqual({ t: "done", id: 3, outcome: { state: "ok", exit: 0, ms: 4 } })
      expect(decodeFromSpawner(JSON.stringify({ t: "done", id: 3, outcome: { state: "fine", ms: 4 } }))).toBeUndefined()
      expect(decodeFromSpawner("{not json")).toBeUndefined()
      expect(decodeToSpawner(JSON.stringify({ t: "run", id: 1, command: "/bin/true", args: [1], cwd: "/", privateDir: null, timeoutMs: 5 })))
        .toBeUndefined()
      expect(decodeToSpawner(JSON.stringify({ t: "run", id: 1, command: "/bin/true", args: ["a"], cwd: "/", privateDir: null, timeoutMs: 5 })))
        .toEqual({ t: "run", id: 1, command: "/bin/true", args: ["a"], cwd: "/", privateDir: null, timeoutMs: 5 })
    }))

  it.effect("lines split across chunks, inside a multi-byte character too, are read whole", () =>
    Effect.sync(() => {
      const lines: Array<string> = []
      const read = lineReader((line) => lines.push(line))
      const bytes = new TextEncoder().encode("é1\nab€\n\nlast")
      for (let i = 0; i < bytes.length; i++) read(bytes.subarray(i, i + 1))
      read(new TextEncoder().encode("\n"))
      expect(lines).toEqual(["é1", "ab€", "last"])
    }))
})
