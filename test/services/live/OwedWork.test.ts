/**
 * Owed work carried out once (docs/live-application.md, "Owed work"; docs/cluster.md, "Owed
 * reloads: one path"): a reload that ran is recorded even when the caller of the converge that ran
 * it is interrupted in the middle (on a fleet: a sweep's call cut because its runner lost its
 * shards, seen by the fleet's chaos test). The endpoint host here claims and reloads in one
 * uninterruptible region, as the command host does (CommandsHost.ts), and holds the reload until
 * the test lets it go.
 */
import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import { Peers } from "../../../src/services/capabilities/Peers.ts"
import { Applier } from "../../../src/services/live/Applier.ts"
import { type EndpointHostShape, refOf } from "../../../src/services/live/EndpointHost.ts"
import { Reloads } from "../../../src/services/owed/Reloads.ts"
import { seedPeer } from "../../acceptance/cityCli.ts"
import { scriptedLayer, world } from "../../support/world.ts"

const key = { personality: "alice", runtime: "claude" }

/**
 * An idle endpoint whose reloads are counted: the first one waits for `release` once it ran its
 * command; each then takes one more (interruptible) step before it returns.
 */
const heldHost = Effect.gen(function*() {
  const started = yield* Deferred.make<void>()
  const release = yield* Deferred.make<void>()
  let reloads = 0
  const host: EndpointHostShape = {
    status: () => Effect.succeed("idle"),
    reload: (_ref, claim) =>
      Effect.gen(function*() {
        const claimed = yield* Effect.uninterruptible(Effect.gen(function*() {
          const claimed = yield* claim
          if (Option.isNone(claimed)) return claimed
          reloads++
          yield* Deferred.succeed(started, undefined)
          yield* Deferred.await(release)
          return claimed
        }))
        // An interruptible step after the reload (a host that waits for the endpoint to be back).
        yield* Effect.sleep("1 millis")
        return claimed
      }),
    retire: () => Effect.void,
    kill: () => Effect.void
  }
  return { host, started, release, reloads: () => reloads }
})

describe("owed work", () => {
  it.scopedLive("a converge interrupted while its reload runs: the reload is recorded once it ends, and never run again", () =>
    Effect.gen(function*() {
      const w = yield* world
      yield* seedPeer(w.root, "alice", w.work, ["claude"])
      const held = yield* heldHost
      yield* Effect.gen(function*() {
        const applier = yield* Applier
        const reloads = yield* Reloads
        const ref = refOf(yield* (yield* Peers).get("alice"), "claude", Option.none())
        const converging = yield* Effect.fork(applier.converge([ref], "sync tools", "tools"))
        yield* Deferred.await(held.started)
        // The caller is interrupted while the reload runs (the signal sent before the reload ends).
        yield* Fiber.interruptAsFork(converging, yield* Effect.fiberId)
        yield* Deferred.succeed(held.release, undefined)
        yield* Fiber.await(converging)
        // The reload ends and is recorded (given 5 s): nothing is owed, so no later pass runs it again.
        yield* reloads.get(key).pipe(
          Effect.repeat({ until: (r) => Option.isNone(r) || r.value.claim === undefined, schedule: Schedule.spaced("10 millis") }),
          Effect.timeoutOption("5 seconds")
        )
        yield* applier.pass
        yield* applier.pass
        expect(held.reloads()).toBe(1)
        expect(Option.map(yield* reloads.get(key), (r) => r.requested > r.applied)).not.toEqual(Option.some(true))
      }).pipe(Effect.provide(scriptedLayer(w, held.host)))
    }).pipe(Effect.provide(NodeContext.layer)))
})
