/**
 * A Session's Turn boundary (docs/library.md, `session.atNextBoundary`), on the
 * queue itself (services/city/internal/turnBoundary.ts): effects queued while a Turn runs run in
 * the order they were queued, when the boundary drains, each caller getting its own result; a
 * caller interrupted before its turn comes is forgotten (its effect never runs); a closed Session
 * refuses at once; closing fails every queued caller with SessionError (reason SessionClosed).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { SessionError } from "../../../../src/schema/Errors.ts"
import * as TurnBoundary from "../../../../src/services/city/internal/turnBoundary.ts"

/** A Session mid-Turn: open, and its kick does nothing (the Turn's end drains). */
const busy = { refuse: () => undefined, kick: () => Effect.void }

describe("TurnBoundary", () => {
  it.effect("effects queued during a Turn wait for the drain, then run in order, each caller getting its own result", () =>
    Effect.gen(function*() {
      const boundary = TurnBoundary.make()
      const ran: Array<string> = []
      const first = yield* Effect.fork(boundary.enqueue(Effect.sync(() => (ran.push("first"), 1)), busy))
      const second = yield* Effect.fork(boundary.enqueue(Effect.sync(() => (ran.push("second"), 2)), busy))
      const third = yield* Effect.fork(boundary.enqueue(Effect.fail("no" as const), busy))
      yield* Effect.yieldNow()
      expect(ran).toEqual([])
      yield* boundary.drain
      expect(ran).toEqual(["first", "second"])
      expect(yield* Fiber.join(first)).toBe(1)
      expect(yield* Fiber.join(second)).toBe(2)
      expect(yield* Effect.flip(Fiber.join(third))).toBe("no")
    }))

  it.effect("an idle Session's kick drains at once", () =>
    Effect.gen(function*() {
      const boundary = TurnBoundary.make()
      const idle = { refuse: () => undefined, kick: () => boundary.drain }
      expect(yield* boundary.enqueue(Effect.succeed("now"), idle)).toBe("now")
    }))

  it.effect("a caller interrupted before its turn is forgotten: its effect never runs", () =>
    Effect.gen(function*() {
      const boundary = TurnBoundary.make()
      const ran: Array<string> = []
      const gone = yield* Effect.fork(boundary.enqueue(Effect.sync(() => ran.push("gone")), busy))
      const kept = yield* Effect.fork(boundary.enqueue(Effect.sync(() => ran.push("kept")), busy))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(gone)
      yield* boundary.drain
      yield* Fiber.join(kept)
      expect(ran).toEqual(["kept"])
    }))

  it.effect("a closed Session refuses at once, queueing nothing", () =>
    Effect.gen(function*() {
      const boundary = TurnBoundary.make()
      const closed = new SessionError({ reason: "SessionClosed", session: "s1", closedBy: "closed" })
      let ran = false
      const error = yield* Effect.flip(
        boundary.enqueue(Effect.sync(() => (ran = true)), { refuse: () => closed, kick: () => boundary.drain })
      )
      expect(error).toBe(closed)
      yield* boundary.drain
      expect(ran).toBe(false)
    }))

  it.effect("closing fails every queued caller with SessionClosed, and none of their effects runs", () =>
    Effect.gen(function*() {
      const boundary = TurnBoundary.make()
      const ran: Array<string> = []
      const fibers = yield* Effect.forEach(["a", "b"], (name) =>
        Effect.fork(boundary.enqueue(Effect.sync(() => ran.push(name)), busy)))
      yield* Effect.yieldNow()
      const error = new SessionError({ reason: "SessionClosed", session: "s1", closedBy: "city-closed" })
      boundary.cancelAll(error)
      yield* boundary.drain
      for (const fiber of fibers) expect(yield* Fiber.await(fiber)).toEqual(Exit.fail(error))
      expect(ran).toEqual([])
    }))
})
