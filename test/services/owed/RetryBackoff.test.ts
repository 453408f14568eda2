/**
 * The backoff of failed owed work (docs/live-application.md, "Failed owed work: the backoff"), on a
 * real state root under the TestClock: an endpoint host whose reload fails counts its runs (with
 * the clock's time), and the test calls the Applier's `pass` at every step of 250 ms, as a daemon
 * polling that often would. A failing reload runs at t = 0, base, 3·base, 7·base, … capped, and not
 * in between; each attempt logs one line; a success clears the backoff; a new request resets it;
 * a new layer on the same root (a restarted daemon) keeps the attempt count and the next time.
 */
import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { EndpointError } from "../../../src/schema/Live.ts"
import { Applier } from "../../../src/services/live/Applier.ts"
import type { EndpointHostShape } from "../../../src/services/live/EndpointHost.ts"
import { Reloads } from "../../../src/services/owed/Reloads.ts"
import { RetryBackoff } from "../../../src/services/owed/RetryBackoff.ts"
import { seedPeer } from "../../acceptance/cityCli.ts"
import { scriptedLayer, world, type World } from "../../support/world.ts"

const key = { personality: "alice", runtime: "claude" }
const step = Duration.millis(250)
const backoff = { base: Duration.seconds(1), cap: Duration.seconds(8) }

/**
 * An always idle endpoint whose reload fails while `failing` holds (and runs `during` in the
 * middle of a reload); `runs` are the clock's times of its reloads.
 */
const countingHost = () => {
  const runs: Array<number> = []
  const control: { failing: boolean; during: Effect.Effect<unknown, unknown> } = { failing: true, during: Effect.void }
  const host: EndpointHostShape = {
    status: () => Effect.succeed("idle"),
    reload: (ref, claim) =>
      Effect.gen(function*() {
        const claimed = yield* claim
        if (Option.isNone(claimed)) return claimed
        runs.push(yield* Clock.currentTimeMillis)
        yield* Effect.orDie(control.during)
        if (control.failing) {
          return yield* new EndpointError({ reason: "EndpointHostFailed", identity: ref.identity, operation: "reload", detail: "exit 3: first line\nsecond line" })
        }
        return claimed
      }),
    retire: () => Effect.void,
    kill: () => Effect.void
  }
  return { host, runs, control }
}

/** Runs `body` with the live services on the world's root (a fresh build each call: a restart). */
const withApplier = <A, E>(w: World, host: EndpointHostShape, body: Effect.Effect<A, E, Applier | Reloads>) =>
  body.pipe(Effect.provide(scriptedLayer(w, host)), Effect.provideService(RetryBackoff, backoff))

/** A pass at every step from now until `untilMs` (clock time), the clock advanced after each. */
const pollUntil = (untilMs: number) =>
  Effect.gen(function*() {
    const applier = yield* Applier
    while ((yield* Clock.currentTimeMillis) <= untilMs) {
      yield* applier.pass
      yield* TestClock.adjust(step)
    }
  })

const setup = Effect.gen(function*() {
  const w = yield* world
  yield* seedPeer(w.root, "alice", w.work, ["claude"])
  return w
})

const record = Effect.flatMap(Reloads, (r) => Effect.map(r.get(key), Option.getOrUndefined))

describe("failed owed work backs off", () => {
  it.scoped("a failing reload runs at 0, base, 3·base, 7·base, then every cap; one log line per attempt", () =>
    Effect.gen(function*() {
      const w = yield* setup
      const { host, runs } = countingHost()
      const logs: Array<string> = []
      const logger = Logger.make(({ message }) => void logs.push(String(message)))
      yield* withApplier(
        w,
        host,
        Effect.gen(function*() {
          yield* (yield* Reloads).request([key], "surfaces changed")
          yield* pollUntil(31_000)
        })
      ).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
      expect(runs).toEqual([0, 1_000, 3_000, 7_000, 15_000, 23_000, 31_000])
      const failures = logs.filter((l) => l.startsWith("owed reload of claude-alice failed"))
      expect(failures).toEqual(runs.map((_, i) =>
        `owed reload of claude-alice failed (attempt ${i + 1}, next at ${new Date(runs[i]! + Math.min(1_000 * 2 ** i, 8_000)).toISOString()}): ` +
        "endpoint claude-alice: reload failed: exit 3: first line\\nsecond line"
      ))
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("the record holds the attempts and the next time; a success clears them, and a new failure starts from base", () =>
    Effect.gen(function*() {
      const w = yield* setup
      const { control, host, runs } = countingHost()
      yield* withApplier(
        w,
        host,
        Effect.gen(function*() {
          const reloads = yield* Reloads
          yield* reloads.request([key], "surfaces changed")
          yield* pollUntil(3_000)
          expect(yield* record).toMatchObject({ attempts: 3, next_attempt_at: new Date(7_000).toISOString() })
          control.failing = false
          // An owed removal arriving during the reload keeps the record (a request would reset the backoff itself).
          control.during = reloads.requestRemoval(key)
          yield* pollUntil(7_000)
          expect(runs).toEqual([0, 1_000, 3_000, 7_000])
          const kept = yield* record
          expect(kept?.removal).toBeDefined()
          expect(kept).not.toHaveProperty("attempts")
          expect(kept).not.toHaveProperty("next_attempt_at")
          expect(kept).not.toHaveProperty("last_error")
          control.during = Effect.void
          yield* (yield* Applier).pass // the removal (refused for the default runtime: dropped)
          expect(yield* record).toBeUndefined()
          control.failing = true
          yield* reloads.request([key], "surfaces changed again")
          const now = yield* Clock.currentTimeMillis
          yield* (yield* Applier).pass
          expect(yield* record).toMatchObject({ attempts: 1, next_attempt_at: new Date(now + 1_000).toISOString() })
        })
      )
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a new request for a failing endpoint resets its backoff: it is tried at the next pass", () =>
    Effect.gen(function*() {
      const w = yield* setup
      const { host, runs } = countingHost()
      yield* withApplier(
        w,
        host,
        Effect.gen(function*() {
          const reloads = yield* Reloads
          yield* reloads.request([key], "surfaces changed")
          yield* pollUntil(4_000) // failed at 0, 1 and 3 s; the next is due at 7 s
          const requested = yield* reloads.request([key], "surfaces changed again")
          expect(requested[0]).not.toHaveProperty("attempts")
          expect(requested[0]).not.toHaveProperty("next_attempt_at")
          yield* pollUntil(4_250)
          expect(runs).toEqual([0, 1_000, 3_000, 4_250])
          expect(yield* record).toMatchObject({ attempts: 1 })
        })
      )
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a restarted applier (a new layer on the same root) keeps the attempt count and the next time", () =>
    Effect.gen(function*() {
      const w = yield* setup
      const { host, runs } = countingHost()
      yield* withApplier(
        w,
        host,
        Effect.gen(function*() {
          yield* (yield* Reloads).request([key], "surfaces changed")
          yield* pollUntil(3_000)
        })
      )
      expect(runs).toEqual([0, 1_000, 3_000])
      yield* withApplier(
        w,
        host,
        Effect.gen(function*() {
          expect(yield* record).toMatchObject({ attempts: 3, next_attempt_at: new Date(7_000).toISOString() })
          yield* pollUntil(7_000)
          expect(runs).toEqual([0, 1_000, 3_000, 7_000])
          // The fourth failure doubles the delay again (4 s → 8 s): the count survived the restart.
          expect(yield* record).toMatchObject({ attempts: 4, next_attempt_at: new Date(15_000).toISOString() })
        })
      )
    }).pipe(Effect.provide(NodeContext.layer)))
})
