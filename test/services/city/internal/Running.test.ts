/**
 * What close drains (docs/design.md, "Close": "let running Steps finish up to drainTimeout, then
 * interrupt"): `track` counts a fiber while its bodies run (nested bodies of one fiber count
 * once), `drain` returns at once when nothing runs, waits for running bodies up to its timeout,
 * then interrupts those still running and says how many.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import * as Running from "../../../../src/services/city/internal/running.ts"
import { blocked } from "../../../fixtures.ts"

describe("Running", () => {
  it.effect("a fiber counts while its bodies run, nested ones once, and not after", () =>
    Effect.gen(function*() {
      const running = Running.make()
      const inside = yield* Deferred.make<number>()
      const gate = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(
        running.track(running.track(Effect.zipRight(Effect.suspend(() => Deferred.succeed(inside, running.size())), Deferred.await(gate))))
      )
      expect(yield* Deferred.await(inside)).toBe(1)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(fiber)
      expect(running.size()).toBe(0)
      // A failing body leaves too.
      yield* Effect.exit(running.track(Effect.fail("boom")))
      expect(running.size()).toBe(0)
    }))

  it.effect("drain returns at once when nothing runs, and waits for a body that ends within the timeout", () =>
    Effect.gen(function*() {
      const running = Running.make()
      expect(yield* running.drain("1 second")).toBe(0)
      const gate = yield* Deferred.make<void>()
      const body = yield* Effect.fork(running.track(Deferred.await(gate)))
      yield* blocked(body)
      const draining = yield* Effect.fork(running.drain("1 second"))
      yield* blocked(draining)
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Fiber.join(draining)).toBe(0)
      expect(Exit.isSuccess(yield* Fiber.await(body))).toBe(true)
    }))

  it.effect("drain interrupts what still runs after the timeout, and says how many", () =>
    Effect.gen(function*() {
      const running = Running.make()
      const stuck = yield* Effect.fork(running.track(Effect.never))
      const stuckToo = yield* Effect.fork(running.track(Effect.never))
      yield* blocked(stuck, stuckToo)
      const draining = yield* Effect.fork(running.drain("1 second"))
      yield* blocked(draining)
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.join(draining)).toBe(2)
      expect(Exit.isInterrupted(yield* Fiber.await(stuck))).toBe(true)
      expect(Exit.isInterrupted(yield* Fiber.await(stuckToo))).toBe(true)
      expect(running.size()).toBe(0)
    }))
})
