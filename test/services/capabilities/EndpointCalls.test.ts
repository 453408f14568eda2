/**
 * A joint's calls on the real command runner (docs/capability-plugin-lifecycle.md, "Joints
 * (core-owned)"): `--concurrency` bounds the commands running at once, an interrupted joint ends
 * its running commands and starts none of those still waiting, and a command killed mid-sweep
 * fails its own call while the sweep goes on.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import { join } from "node:path"
import * as CapabilityServices from "../../../src/layers/CapabilityServices.ts"
import type { Declaration } from "../../../src/schema/Declaration.ts"
import type { Peer } from "../../../src/schema/Peer.ts"
import { EndpointCalls, endpointsOf } from "../../../src/services/capabilities/EndpointCalls.ts"
import { RuntimeProfiles } from "../../../src/services/capabilities/RuntimeProfiles.ts"
import { StateRoot } from "../../../src/services/root/StateRoot.ts"
import { isAlive } from "../../fixtures.ts"
import { script } from "./runnerFixtures.ts"

/** Waits (bounded poll of a condition, not a sleep) until `file` exists; fails after ~10 s. */
const appears = (file: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    fs.exists(file).pipe(
      Effect.filterOrFail((exists) => exists),
      Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.compose(Schedule.recurs(500))))
    ))

const declaration = (command: string): Declaration => ({
  schema: 1,
  capability: "probe",
  runtimes: ["claude"],
  provision: { command, args: ["{personality}"] },
  unprovision: { command, args: ["{personality}"] }
})

/**
 * The capability services on a fresh root, `count` peers `p0`… with the claude runtime, and the
 * provisioning command `body` (an `sh` script; `$1` is the personality). Gives the folder the
 * script runs beside and the sweep of those endpoints.
 */
const world = <A>(
  count: number,
  body: (dir: string) => string,
  test: (
    dir: string,
    sweep: (concurrency: number) => ReturnType<EndpointCalls["Type"]["run"]>
  ) => Effect.Effect<A, unknown, FileSystem.FileSystem | Scope.Scope>
) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const dir = yield* fs.makeTempDirectoryScoped()
    const command = yield* script(dir, "provision", body(dir))
    return yield* Effect.gen(function*() {
      const state = yield* StateRoot
      yield* state.ensure
      const profiles = yield* RuntimeProfiles
      const calls = yield* EndpointCalls
      const peers = Array.from({ length: count }, (_, i): Peer => ({
        schema: 1,
        personality: `p${i}`,
        cwd: dir,
        runtimes: ["claude"],
        default_runtime: "claude"
      }))
      const endpoints = endpointsOf(declaration(command), peers, profiles.isAgent)
      expect(endpoints.length).toBe(count)
      return yield* test(dir, (concurrency) => calls.run(endpoints, "sweep-on", { concurrency, timeout: "60 seconds" }))
    }).pipe(Effect.provide(CapabilityServices.layer({ root: join(dir, "root"), killGrace: "200 millis" })))
  })

const live = (name: string, body: () => Effect.Effect<unknown, unknown, FileSystem.FileSystem | Scope.Scope>) =>
  it.scopedLive(name, () => Effect.asVoid(body()).pipe(Effect.provide(NodeContext.layer)))

describe("EndpointCalls.run", () => {
  live("runs at most `concurrency` commands at once, and every endpoint's", () =>
    world(
      9,
      (dir) => `echo + >> '${join(dir, "events")}'\nsleep 0.3\necho - >> '${join(dir, "events")}'`,
      (dir, sweep) =>
        Effect.gen(function*() {
          const fs = yield* FileSystem.FileSystem
          const { outcomes } = yield* sweep(3)
          expect(outcomes.map((o) => o.state)).toEqual(Array(9).fill("ok"))
          let running = 0
          let most = 0
          const events = (yield* fs.readFileString(join(dir, "events"))).trim().split("\n")
          for (const event of events) {
            running += event === "+" ? 1 : -1
            most = Math.max(most, running)
          }
          expect(events.length).toBe(18)
          expect(most).toBe(3)
        })
    ))

  live("an interrupted sweep ends its running command's process group and never starts the calls still waiting", () =>
    world(
      3,
      (dir) =>
        [
          `if [ "$1" = p0 ]; then`,
          `  sleep 60 &`,
          `  echo $$ $! > '${join(dir, "pids")}.tmp'; mv '${join(dir, "pids")}.tmp' '${join(dir, "pids")}'`,
          `  wait`,
          `fi`,
          `touch '${dir}/ran-'"$1"`
        ].join("\n"),
      (dir, sweep) =>
        Effect.gen(function*() {
          const fs = yield* FileSystem.FileSystem
          const fiber = yield* Effect.fork(sweep(1))
          yield* appears(join(dir, "pids"))
          yield* Fiber.interrupt(fiber)
          const group = (yield* fs.readFileString(join(dir, "pids"))).trim().split(" ").map(Number)
          expect(group.length).toBe(2)
          // The runner's interruption awaits the group's termination (SIGTERM, SIGKILL after the grace).
          expect(group.filter(isAlive)).toEqual([])
          expect((yield* fs.readDirectory(dir)).filter((name) => name.startsWith("ran-"))).toEqual([])
        })
    ))

  live("a command killed mid-sweep fails its own call with the signal; the sweep goes on and returns", () =>
    world(
      4,
      (dir) =>
        [
          `if [ "$1" = p0 ]; then`,
          `  echo $$ > '${join(dir, "pid")}.tmp'; mv '${join(dir, "pid")}.tmp' '${join(dir, "pid")}'`,
          `  exec sleep 60`,
          `fi`
        ].join("\n"),
      (dir, sweep) =>
        Effect.gen(function*() {
          const fs = yield* FileSystem.FileSystem
          const fiber = yield* Effect.fork(sweep(2))
          yield* appears(join(dir, "pid"))
          process.kill(Number((yield* fs.readFileString(join(dir, "pid"))).trim()), "SIGKILL")
          // Well before the calls' 60 s timeout: nothing waits on the killed command.
          const { outcomes } = yield* Fiber.join(fiber).pipe(Effect.timeoutFail({
            duration: "10 seconds",
            onTimeout: () => new Error("the sweep did not return after its command was killed")
          }))
          expect(outcomes.map((o) => [o.personality, o.state])).toEqual([
            ["p0", "failed"],
            ["p1", "ok"],
            ["p2", "ok"],
            ["p3", "ok"]
          ])
          expect(outcomes[0]?.detail).toMatch(/^killed by SIGKILL/)
        })
    ))
})
