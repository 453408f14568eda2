/**
 * The per-name queue (docs/design.md, "Uniqueness and ordering": "Operations on the same name are
 * serialized (a per-name queue); different names proceed concurrently"): FIFO per key, keys
 * independent, a cancelled or interrupted waiter leaves the queue without losing a hand-over, and
 * the table holds only the keys in use.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as KeyedMutex from "../../../src/services/internal/keyedMutex.ts"
import { blocked } from "../../fixtures.ts"

const never = Effect.never

describe("KeyedMutex", () => {
  it.effect("bodies of one key run one at a time, in arrival order; the table is empty after", () =>
    Effect.gen(function*() {
      const mutex = KeyedMutex.make<string>()
      const gate = yield* Deferred.make<void>()
      const order: Array<string> = []
      const first = yield* Effect.fork(mutex.withLock("a", () => Effect.zipRight(Deferred.await(gate), Effect.sync(() => order.push("first"))), never))
      yield* blocked(first)
      const second = yield* Effect.fork(mutex.withLock("a", () => Effect.sync(() => order.push("second")), never))
      const third = yield* Effect.fork(mutex.withLock("a", () => Effect.sync(() => order.push("third")), never))
      yield* blocked(second)
      yield* blocked(third)
      expect(order).toEqual([])
      expect(mutex.size()).toBe(1)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(Fiber.zip(Fiber.zip(first, second), third))
      expect(order).toEqual(["first", "second", "third"])
      expect(mutex.size()).toBe(0)
    }))

  it.effect("a waiter in an uninterruptible region (a command that must run to its end) still gets the key when it is handed over", () =>
    Effect.gen(function*() {
      const mutex = KeyedMutex.make<string>()
      const gate = yield* Deferred.make<void>()
      const first = yield* Effect.fork(mutex.withLock("a", () => Deferred.await(gate), never))
      yield* blocked(first)
      const second = yield* Effect.fork(Effect.uninterruptible(mutex.withLock("a", () => Effect.succeed("second ran"), never)))
      yield* blocked(second)
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Fiber.join(second)).toBe("second ran")
      expect(mutex.size()).toBe(0)
    }))

  it.effect("different keys proceed concurrently", () =>
    Effect.gen(function*() {
      const mutex = KeyedMutex.make<string>()
      const a = yield* Deferred.make<void>()
      const b = yield* Deferred.make<void>()
      // Each body waits for the other to have started: serialized keys would hang.
      const left = mutex.withLock("a", () => Effect.zipRight(Deferred.succeed(a, undefined), Deferred.await(b)), never)
      const right = mutex.withLock("b", () => Effect.zipRight(Deferred.succeed(b, undefined), Deferred.await(a)), never)
      yield* Effect.all([left, right], { concurrency: 2 })
      expect(mutex.size()).toBe(0)
    }))

  it.effect("a cancelled waiter never runs its body and leaves the queue; the next waiter still gets the key", () =>
    Effect.gen(function*() {
      const mutex = KeyedMutex.make<string>()
      const gate = yield* Deferred.make<void>()
      const cancel = yield* Deferred.make<void, string>()
      const ran: Array<string> = []
      const holder = yield* Effect.fork(mutex.withLock("a", () => Deferred.await(gate), never))
      yield* blocked(holder)
      const cancelled = yield* Effect.fork(
        mutex.withLock("a", () => Effect.sync(() => ran.push("cancelled")), Effect.zipRight(Deferred.await(cancel), Effect.never))
      )
      const next = yield* Effect.fork(mutex.withLock("a", () => Effect.sync(() => ran.push("next")), never))
      yield* blocked(cancelled)
      yield* Deferred.fail(cancel, "closing")
      expect(yield* Fiber.await(cancelled)).toEqual(Exit.fail("closing"))
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(next)
      expect(ran).toEqual(["next"])
      expect(mutex.size()).toBe(0)
    }))

  it.effect("a waiter interrupted after the key was handed to it passes the key on", () =>
    Effect.gen(function*() {
      const mutex = KeyedMutex.make<string>()
      const gate = yield* Deferred.make<void>()
      const ran: Array<string> = []
      const holder = yield* Effect.fork(mutex.withLock("a", () => Deferred.await(gate), never))
      yield* blocked(holder)
      const interrupted = yield* Effect.fork(mutex.withLock("a", (restore) => restore(Effect.never), never))
      const last = yield* Effect.fork(mutex.withLock("a", () => Effect.sync(() => ran.push("last")), never))
      yield* blocked(interrupted)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(holder)
      // The key is now the interrupted waiter's: interrupting it (inside restore) releases it.
      yield* Fiber.interrupt(interrupted)
      yield* Fiber.join(last)
      expect(ran).toEqual(["last"])
      expect(mutex.size()).toBe(0)
    }))
})
