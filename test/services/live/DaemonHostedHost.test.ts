/**
 * The host that sees daemon-hosted endpoints from another process (src/services/live/DaemonHostedHost.ts):
 * an endpoint's published state counts only while the daemon that published it runs, and the
 * daemon is named by its pid and its start, so a file left by a crashed daemon whose pid now
 * belongs to another process reads as asleep.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { spawn } from "node:child_process"
import { join } from "node:path"
import * as StateRoot from "../../../src/services/root/StateRoot.ts"
import * as DaemonHostedHost from "../../../src/services/live/DaemonHostedHost.ts"
import * as Reloads from "../../../src/services/owed/Reloads.ts"

const ref = { personality: "alice", runtime: "claude", identity: "claude-alice", cwd: "/tmp", privateDir: Option.none() }

describe("DaemonHostedHost", () => {
  it.scopedLive("a published state counts while its daemon runs; a file whose pid was reused by another process is asleep", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const root = join(yield* fs.makeTempDirectoryScoped(), "root")
      const services = Layer.provideMerge(Reloads.layer, StateRoot.layer({ root }))
      const host = yield* DaemonHostedHost.make().pipe(Effect.provide(services))
      // Published by this process (a running "daemon"): its state counts.
      yield* DaemonHostedHost.publish(ref, "busy").pipe(Effect.provide(services))
      expect(yield* host.status(ref)).toBe("busy")
      // A file naming a live process of another start (the pid was reused): stale, so asleep.
      const stranger = spawn("sleep", ["60"], { stdio: "ignore" })
      yield* Effect.addFinalizer(() => Effect.sync(() => void stranger.kill("SIGKILL")))
      yield* fs.writeFileString(
        join(root, DaemonHostedHost.hostedDir, "claude-alice.json"),
        JSON.stringify({ pid: stranger.pid, start: "another-boot:1", state: "busy", at: "2026-01-01T00:00:00.000Z" })
      )
      expect(yield* host.status(ref)).toBe("asleep")
    }).pipe(Effect.provide(NodeContext.layer)))
})
