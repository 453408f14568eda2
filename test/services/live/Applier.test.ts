/**
 * One endpoint's owed-work record that cannot be read (docs/live-application.md, "Owed reloads and
 * removals"): a FIFO, a directory, bytes that are not UTF-8, a file over the state cap or a
 * truncated JSON under `state/reloads/` is a fact about that record, not a failure of the folder.
 * The daemon's pass (the Applier's `pass`, on a real state root) goes on for every other endpoint;
 * the record of an endpoint of this root is replaced by one that owes a reload again (logged once);
 * a record naming no endpoint is logged once, not at every pass, and left.
 *
 * A FIFO is never opened: the one reader refuses it on its `stat` (files/TextFile.ts); were it
 * opened, the pass would wait for a writer and the test would time out.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import { execFileSync } from "node:child_process"
import { join } from "node:path"
import { Applier } from "../../../src/services/live/Applier.ts"
import type { EndpointHostShape } from "../../../src/services/live/EndpointHost.ts"
import { Reloads } from "../../../src/services/owed/Reloads.ts"
import { seedOwedReload, seedPeer, unreadable } from "../../acceptance/cityCli.ts"
import { scriptedLayer, world } from "../../support/world.ts"

/** An always idle endpoint host that journals the reloads it ran. */
const idleHost = () => {
  const reloaded: Array<string> = []
  const host: EndpointHostShape = {
    status: () => Effect.succeed("idle"),
    reload: (ref, claim) =>
      Effect.tap(claim, (claimed) => Effect.sync(() => Option.isSome(claimed) && void reloaded.push(ref.identity))),
    retire: () => Effect.void,
    kill: () => Effect.void
  }
  return { host, reloaded }
}

describe("an owed-work record that cannot be read", () => {
  for (const [kind, make] of unreadable) {
    it.scoped(`${kind}: the pass goes on for the others, and the record is replaced, owing its reload again (logged once)`, () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const w = yield* world
        yield* seedPeer(w.root, "alice", w.work, ["claude"])
        yield* seedPeer(w.root, "bob", w.work, ["claude"])
        yield* seedOwedReload(w.root, "bob", "claude", { requested: 1, applied: 0 })
        const bad = join(w.root, "state", "reloads", "claude-alice.json")
        yield* make(bad)
        const { host, reloaded } = idleHost()
        const logs: Array<string> = []
        const logger = Logger.make(({ message }) => void logs.push(String(message)))
        yield* Effect.gen(function*() {
          const reloads = yield* Reloads
          const scanned = yield* reloads.scan
          expect(scanned.valid.map((r) => r.personality)).toEqual(["bob"])
          expect(scanned.invalid).toHaveLength(1)
          expect(scanned.invalid[0]).toMatchObject({ file: bad, identity: "claude-alice" })
          expect(scanned.invalid[0]!.rule).not.toContain("\n")
          const applier = yield* Applier
          yield* applier.pass
          yield* applier.pass
          yield* applier.pass
          expect(yield* reloads.invalid).toEqual([])
          expect(yield* reloads.list).toEqual([])
        }).pipe(
          Effect.provide(scriptedLayer(w, host)),
          Effect.provide(Logger.replace(Logger.defaultLogger, logger))
        )
        expect([...reloaded].sort()).toEqual(["claude-alice", "claude-bob"])
        const replaced = logs.filter((l) => l.startsWith(`owed-work record ${bad} is invalid (`))
        expect(replaced).toHaveLength(1)
        expect(replaced[0]).toMatch(/\): replaced; the reload it may have stood for is owed again$/)
        expect(replaced[0]).not.toContain("\n")
        // A directory is set aside, never deleted; anything else is gone.
        const left = (yield* fs.readDirectory(join(w.root, "state", "reloads"))).sort()
        if (kind === "a directory") {
          expect(left).toHaveLength(1)
          expect(left[0]).toMatch(/^claude-alice\.json\.invalid-\d+$/)
          expect(yield* fs.readDirectory(join(w.root, "state", "reloads", left[0]!))).toEqual(["inside"])
        } else expect(left).toEqual([])
      }).pipe(Effect.provide(NodeContext.layer)))
  }

  it.scoped("a record naming no endpoint of the root is logged once, not at every pass, and left as it is", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const w = yield* world
      yield* seedPeer(w.root, "bob", w.work, ["claude"])
      yield* seedOwedReload(w.root, "bob", "claude", { requested: 1, applied: 0 })
      const bad = join(w.root, "state", "reloads", "claude-nobody.json")
      execFileSync("mkfifo", [bad])
      const { host, reloaded } = idleHost()
      const logs: Array<string> = []
      const logger = Logger.make(({ message }) => void logs.push(String(message)))
      yield* Effect.gen(function*() {
        const applier = yield* Applier
        for (let i = 0; i < 4; i++) yield* applier.pass
      }).pipe(Effect.provide(scriptedLayer(w, host)), Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
      expect(reloaded).toEqual(["claude-bob"])
      expect(logs.filter((l) => l.includes(bad))).toEqual([
        `owed-work record ${bad} is invalid (cannot be read (is a FIFO, not a regular file)) and names no endpoint of this root: left as it is`
      ])
      expect((yield* fs.stat(bad)).type).toBe("FIFO")
    }).pipe(Effect.provide(NodeContext.layer)))
})
