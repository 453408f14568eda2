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

/** Waits until `fiber` is suspended: a runner's call has then been handed to the spawner. */
const handedOver = <A>(fiber: Fiber.RuntimeFiber<A>) =>
  Fiber.status(fiber).pipe(
    Effect.filterOrFail((status) => status._tag === "Suspended"),
    Effect.retry(Schedule.recurs(10_000)),
    Effect.orDie
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

  live("the spawner starts without NODE_OPTIONS and NODE_EXTRA_CA_CERTS; its children get both", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      expect(SpawnerRunner.spawnerEnvironment({ A: "1", NODE_OPTIONS: "--import tsx", NODE_EXTRA_CA_CERTS: "/ca.pem" }))
        .toEqual({ A: "1" })
      const saved = { options: process.env.NODE_OPTIONS, certs: process.env.NODE_EXTRA_CA_CERTS }
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          for (const [key, value] of [["NODE_OPTIONS", saved.options], ["NODE_EXTRA_CA_CERTS", saved.certs]] as const) {
            if (value === undefined) delete process.env[key]
            else process.env[key] = value
          }
        })
      )
      process.env.NODE_EXTRA_CA_CERTS = join(dir, "no-such-ca.pem")
      process.env.NODE_OPTIONS = "--no-deprecation"
      const runner = yield* SpawnerRunner.make()
      const seen = join(dir, "seen")
      const show = yield* script(dir, "show", `echo "$NODE_OPTIONS|$NODE_EXTRA_CA_CERTS" > '${seen}'`)
      expect((yield* runner.run(request(show))).state).toBe("ok")
      expect((yield* fs.readFileString(seen)).trim()).toBe(`--no-deprecation|${join(dir, "no-such-ca.pem")}`)
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
        expect(outcome.detail).toMatch(/^the spawner process exited with code 1 before it reported the command's start.*no-such-spawner/s)
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

  live("a lane runs at most its concurrency at once, though it is handed twice as many calls", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const runner = yield* SpawnerRunner.make()
      const events = join(dir, "events")
      const step = yield* script(dir, "step", `echo + >> '${events}'\nsleep 0.15\necho - >> '${events}'`)
      const lane = runner.lane?.(3)
      if (lane === undefined) return expect.fail("the spawner runner has lanes")
      expect(lane.window).toBe(6)
      const outcomes = yield* Effect.forEach(Array.from({ length: 9 }), () => lane.run(request(step)), {
        concurrency: lane.window
      })
      expect(outcomes.map((outcome) => outcome.state)).toEqual(Array(9).fill("ok"))
      let running = 0
      let most = 0
      for (const event of (yield* fs.readFileString(events)).trim().split("\n")) {
        running += event === "+" ? 1 : -1
        most = Math.max(most, running)
      }
      expect(most).toBe(3)
    }))

  live("a call cancelled while it waits in its lane never starts; one killed with its spawner fails", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const runner = yield* SpawnerRunner.make({ killGrace: "200 millis" })
      const lane = runner.lane?.(1)
      if (lane === undefined) return expect.fail("the spawner runner has lanes")
      const ids = join(dir, "ids")
      const gate = join(dir, "gate")
      const first = yield* script(
        dir,
        "first",
        `echo $PPID > '${ids}.tmp'\nmv '${ids}.tmp' '${ids}'\nwhile [ ! -e '${gate}' ]; do sleep 0.02; done`
      )
      const marker = join(dir, "second-ran")
      const second = yield* script(dir, "second", `touch '${marker}'`)
      const third = yield* script(dir, "third", "exit 0")
      const running = yield* Effect.fork(lane.run(request(first)))
      yield* appears(ids)
      // The lane's one place is taken: the second call waits in the spawner until it is cancelled.
      const waiting = yield* Effect.fork(lane.run(request(second)))
      yield* handedOver(waiting)
      yield* Fiber.interrupt(waiting)
      yield* fs.writeFileString(gate, "")
      expect((yield* Fiber.join(running)).state).toBe("ok")
      // Calls start in the order they were handed over: had the second not been dropped, it would run before this one.
      expect((yield* lane.run(request(third))).state).toBe("ok")
      expect(yield* fs.exists(marker)).toBe(false)

      // A spawner killed with a call running and one waiting: both fail, neither hangs.
      yield* fs.remove(gate)
      yield* fs.remove(ids)
      const again = yield* Effect.fork(lane.run(request(first)))
      yield* appears(ids)
      const queued = yield* Effect.fork(lane.run(request(second)))
      yield* handedOver(queued)
      process.kill(Number((yield* fs.readFileString(ids)).trim()), "SIGKILL")
      expect((yield* Fiber.join(again)).state).toBe("failed")
      expect((yield* Fiber.join(queued)).detail).toMatch(/^the spawner process was killed by SIGKILL before it reported the command's start/)
      expect(yield* fs.exists(marker)).toBe(false)
    }))
})

describe("the spawner protocol", () => {
  it.effect("a message is decoded only when every field has its type", () =>
    Effect.sync(() => {
      expect(decodeFromSpawner(JSON.stringify({ t: "done", id: 3, outcome: { state: "ok", exit: 0, ms: 4 } })))
        .toEqual({ t: "done", id: 3, outcome: { state: "ok", exit: 0, ms: 4 } })
      expect(decodeFromSpawner(JSON.stringify({ t: "done", id: 3, outcome: { state: "fine", ms: 4 } }))).toBeUndefined()
      expect(decodeFromSpawner("{not json")).toBeUndefined()
      expect(decodeFromSpawner(JSON.stringify({ t: "closed" }))).toEqual({ t: "closed" })
      expect(decodeFromSpawner(JSON.stringify({ t: "spawned", pid: 4 }))).toBeUndefined()
      expect(decodeToSpawner(JSON.stringify({ t: "run", id: 1, command: "/bin/true", args: [1], cwd: "/", privateDir: null, timeoutMs: 5 })))
        .toBeUndefined()
      expect(decodeToSpawner(JSON.stringify({ t: "run", id: 1, command: "/bin/true", args: ["a"], cwd: "/", privateDir: null, timeoutMs: 5 })))
        .toEqual({ t: "run", id: 1, command: "/bin/true", args: ["a"], cwd: "/", privateDir: null, timeoutMs: 5 })
      const inLane = { t: "run", id: 1, command: "/bin/true", args: [], cwd: "/", privateDir: null, timeoutMs: 5 }
      expect(decodeToSpawner(JSON.stringify({ ...inLane, lane: { id: 2, limit: 3 } })))
        .toEqual({ ...inLane, lane: { id: 2, limit: 3 } })
      expect(decodeToSpawner(JSON.stringify({ ...inLane, lane: { id: 2, limit: 0 } }))).toBeUndefined()
      expect(decodeToSpawner(JSON.stringify({ ...inLane, lane: { id: "2", limit: 1 } }))).toBeUndefined()
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
