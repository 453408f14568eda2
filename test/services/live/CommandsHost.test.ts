/**
 * The Commands endpoint host against real scripts: status parsing, failures named, the Turn
 * boundary waited for by polling status, and the claim taken only at the boundary.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { join } from "node:path"
import { defaultHostConfig, type HostConfig } from "../../../src/schema/HostConfig.ts"
import * as CommandRunner from "../../../src/services/capabilities/CommandRunner.ts"
import * as ProcessRecords from "../../../src/services/capabilities/ProcessRecords.ts"
import { fromConfig, RuntimeProfiles } from "../../../src/services/capabilities/RuntimeProfiles.ts"
import * as StateRoot from "../../../src/services/root/StateRoot.ts"
import * as CommandsHost from "../../../src/services/live/CommandsHost.ts"
import type { EndpointRef } from "../../../src/services/live/EndpointHost.ts"
import { tempDir } from "../../acceptance/cityCli.ts"
import { eventually } from "../../fixtures.ts"

const ref = (cwd: string, runtime = "claude"): EndpointRef => ({
  personality: "alice",
  runtime,
  identity: `${runtime}-alice`,
  cwd,
  privateDir: Option.none()
})

const setup = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const dir = yield* tempDir
  const status = join(dir, "status")
  const journal = join(dir, "journal")
  const script = join(dir, "ctl")
  yield* fs.writeFileString(script, [
    "#!/bin/sh",
    `if [ "$1" = status ]; then echo status >> '${journal}.status'; cat '${status}'; exit $?; fi`,
    `echo "$1 $2" >> '${journal}'`,
    ""
  ].join("\n"))
  yield* fs.chmod(script, 0o755)
  yield* fs.makeDirectory(join(dir, "root")) // commands run in the state root
  const cmd = (verb: string, extra: ReadonlyArray<string> = []) => ({ command: script, args: [verb, "{personality}", ...extra] })
  const config: HostConfig = {
    ...defaultHostConfig,
    profiles: {
      ...defaultHostConfig.profiles,
      claude: { commands: { status: cmd("status"), reload: cmd("reload"), retire: cmd("retire"), kill: cmd("kill") } },
      codex: { commands: { status: cmd("status", ["{privateDir}"]) } }
    }
  }
  const root = StateRoot.layer({ root: join(dir, "root") })
  const layer = Layer.mergeAll(
    Layer.succeed(RuntimeProfiles, fromConfig(config)),
    CommandRunner.layer().pipe(Layer.provide(ProcessRecords.layer().pipe(Layer.provide(root)))),
    root
  )
  // Built in the test's scope: the process records keep their journal open until it closes.
  const services = yield* Layer.build(layer)
  const host = yield* CommandsHost.make({ pollInterval: "10 millis", timeout: "30 seconds" }).pipe(Effect.provide(services))
  // Atomically (temp + rename): the status command must never read a half-written file.
  const setStatus = (s: string) =>
    Effect.zipRight(fs.writeFileString(`${status}.tmp`, s), fs.rename(`${status}.tmp`, status))
  const lines = Effect.map(Effect.orElseSucceed(fs.readFileString(journal), () => ""), (t) => t.split("\n").filter((l) => l !== ""))
  const statusCalls = Effect.map(
    Effect.orElseSucceed(fs.readFileString(`${journal}.status`), () => ""),
    (t) => t.split("\n").filter((l) => l !== "").length
  )
  return { dir, host, setStatus, lines, statusCalls }
})

const live = (name: string, body: Effect.Effect<void, unknown, FileSystem.FileSystem | import("@effect/platform/Path").Path | import("effect/Scope").Scope>) =>
  it.scopedLive(name, () => body.pipe(Effect.provide(NodeContext.layer)), 60_000)

describe("Commands host", () => {
  live("status is the first line the command prints; anything else is a failure naming it", Effect.gen(function*() {
    const { dir, host, setStatus } = yield* setup
    yield* setStatus("busy\nmore\n")
    expect(yield* host.status(ref(dir))).toBe("busy")
    yield* setStatus("sleeping\n")
    const bad = yield* Effect.flip(host.status(ref(dir)))
    expect(bad.message).toBe(`endpoint claude-alice: status failed: printed "sleeping"; expected one of idle busy asleep stopped foreign`)
  }))

  live("a runtime without a status command is asleep; {privateDir} on a runtime without one fails before spawn", Effect.gen(function*() {
    const { dir, host } = yield* setup
    expect(yield* host.status(ref(dir, "opencode"))).toBe("asleep")
    const refused = yield* Effect.flip(host.status(ref(dir, "codex")))
    expect(refused.detail).toContain("{privateDir} is not available for runtime codex")
  }))

  live("reload waits for the Turn boundary, then claims, then runs the reload command", Effect.gen(function*() {
    const { dir, host, lines, setStatus, statusCalls } = yield* setup
    yield* setStatus("busy\n")
    let claims = 0
    const fiber = yield* Effect.fork(host.reload(ref(dir), Effect.sync(() => Option.some(++claims))))
    // Let it poll status a few times while busy: it must neither claim nor reload.
    yield* eventually(Effect.map(statusCalls, (n) => n >= 3))
    expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
    expect(claims).toBe(0)
    expect(yield* lines).toEqual([])
    yield* setStatus("idle\n")
    expect(yield* Fiber.join(fiber)).toEqual(Option.some(1))
    expect(yield* lines).toEqual(["reload alice"])
  }))

  live("nothing claimed at the boundary: no reload; an asleep endpoint: no claim, no reload", Effect.gen(function*() {
    const { dir, host, lines, setStatus } = yield* setup
    yield* setStatus("idle\n")
    expect(yield* host.reload(ref(dir), Effect.succeed(Option.none()))).toEqual(Option.none())
    yield* setStatus("asleep\n")
    expect(yield* host.reload(ref(dir), Effect.dieMessage("must not claim"))).toEqual(Option.none())
    expect(yield* lines).toEqual([])
  }))
})
