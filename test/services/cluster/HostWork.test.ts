/**
 * A host's side of its endpoints' messages (docs/cluster.md, "Endpoints as entities"), on the host's
 * own services: a `Provision` runs the endpoint's provisioning call under the host's root lock,
 * records it and converges the endpoint (its reload owed and applied through the owed-work store).
 * Over the file stores: `HostWork` reads its stores through their Tags, whichever implementation a
 * host gives them.
 */
import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { EndpointError } from "../../../src/schema/Live.ts"
import * as HostWork from "../../../src/services/cluster/internal/hostWork.ts"
import { Provisioner } from "../../../src/services/capabilities/Provisioner.ts"
import { Peers } from "../../../src/services/capabilities/Peers.ts"
import { StateRootError } from "../../../src/schema/CapabilityErrors.ts"
import type { EndpointHostShape } from "../../../src/services/live/EndpointHost.ts"
import { Reloads } from "../../../src/services/owed/Reloads.ts"
import { RetryBackoff } from "../../../src/services/owed/RetryBackoff.ts"
import { capability, scriptedLayer, world } from "../../support/world.ts"

const key = { personality: "alice", runtime: "claude" }

/** A running endpoint whose reloads are counted; `failing` makes them fail. */
const countingHost = () => {
  const control = { runs: 0, failing: false }
  const host: EndpointHostShape = {
    status: () => Effect.succeed("idle"),
    reload: (ref, claim) =>
      Effect.gen(function*() {
        const claimed = yield* claim
        if (Option.isNone(claimed)) return claimed
        control.runs++
        if (control.failing) {
          return yield* new EndpointError({ reason: "EndpointHostFailed", identity: ref.identity, operation: "reload", detail: "exit 3: refused" })
        }
        return claimed
      }),
    retire: () => Effect.void,
    kill: () => Effect.void
  }
  return { host, control }
}

describe("HostWork on a host's services", () => {
  it.scoped("a Provision runs the endpoint's call, records it ok and converges the endpoint: its reload applied once, nothing left owed", () =>
    Effect.gen(function*() {
      const w = yield* world
      const file = yield* capability(w, "scribe", ["claude"])
      const { control, host } = countingHost()
      yield* Effect.gen(function*() {
        const { declaration } = yield* (yield* Provisioner).register(file)
        const work = yield* HostWork.make
        const before = control.runs
        const outcome = yield* work.provision(key, { verb: "sync", capability: declaration.capability, revision: "1" })
        expect(outcome).toMatchObject({ capability: "scribe", personality: "alice", runtime: "claude", state: "ok", application: "applied" })
        expect(control.runs).toBe(before + 1)
        expect(yield* (yield* Reloads).get(key)).toEqual(Option.none())
        // A failing reload stays owed, with its error: the outcome says so.
        control.failing = true
        const failed = yield* work.provision(key, { verb: "sync", capability: declaration.capability, revision: "2" })
        expect(failed).toMatchObject({ state: "ok", application: "failed" })
        const owed = yield* (yield* Reloads).get(key)
        expect(Option.getOrThrow(owed).last_error).toContain("refused")
      }).pipe(
        Effect.provide(scriptedLayer(w, host)),
        Effect.provideService(RetryBackoff, { base: Duration.seconds(1), cap: Duration.seconds(8) })
      )
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a call that ran ok stays ok when what follows it fails (the peer read again while the database restarts): the application is failed, naming why", () =>
    Effect.gen(function*() {
      const w = yield* world
      const file = yield* capability(w, "scribe", ["claude"])
      const { host } = countingHost()
      yield* Effect.gen(function*() {
        const { declaration } = yield* (yield* Provisioner).register(file)
        const real = yield* Peers
        let reads = 0
        // The call's own read of the peer succeeds; the read after it fails as a lost connection does.
        const flaky: typeof real = {
          ...real,
          get: (personality) =>
            ++reads === 1
              ? real.get(personality)
              : Effect.fail(new StateRootError({ reason: "StateError", operation: "read", path: "city_peers (alice)", detail: "Failed to acquire connection" }))
        }
        const work = yield* Effect.provideService(HostWork.make, Peers, flaky)
        const outcome = yield* work.provision(key, { verb: "sync", capability: declaration.capability, revision: "1" })
        expect(outcome).toMatchObject({ state: "ok", application: "failed" })
        expect(outcome.application_detail).toContain("Failed to acquire connection")
      }).pipe(
        Effect.provide(scriptedLayer(w, host)),
        Effect.provideService(RetryBackoff, { base: Duration.seconds(1), cap: Duration.seconds(8) })
      )
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a Provision for a capability that is not stored is a failed outcome naming it, never a failure of the message", () =>
    Effect.gen(function*() {
      const w = yield* world
      yield* capability(w, "scribe", ["claude"])
      const { host } = countingHost()
      const outcome = yield* HostWork.make.pipe(
        Effect.flatMap((work) => work.provision(key, { verb: "sync", capability: "absent", revision: "1" })),
        Effect.provide(scriptedLayer(w, host)),
        Effect.provideService(RetryBackoff, { base: Duration.seconds(1), cap: Duration.seconds(8) })
      )
      expect(outcome).toMatchObject({ state: "failed", capability: "absent", occasion: "sweep-on" })
      expect(outcome.detail).toContain("absent")
    }).pipe(Effect.provide(NodeContext.layer)))
})
