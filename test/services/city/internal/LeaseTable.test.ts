/**
 * The lease table on its own (src/services/city/internal/leaseTable.ts): views are published in
 * generations, leases count on a view, and a removed plugin's instance is unleased exactly when no
 * leased view contains it (docs/city-plugin-lifecycle.md, "Execution leases").
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { emptyPlugins, PluginInstance, withInstance, without } from "../../../../src/services/city/ExecutionView.ts"
import * as LeaseTable from "../../../../src/services/city/internal/leaseTable.ts"
import { blocked } from "../../../fixtures.ts"

const instance = (name: string, life: object = {}) => new PluginInstance(name, "1.0.0", {}, life)

describe("LeaseTable", () => {
  it("publishes views in versions and leases the current one", () => {
    const table = LeaseTable.make()
    expect(table.current().version).toBe(0)
    expect(table.current().names).toEqual([])
    const a = instance("a")
    const view = table.publish(withInstance(emptyPlugins, a))
    expect(view.version).toBe(1)
    expect(table.current()).toBe(view)
    const lease = table.acquire()
    expect(lease.view).toBe(view)
    expect(table.leases()).toBe(1)
    lease.release()
    lease.release() // idempotent
    expect(table.leases()).toBe(0)
  })

  it("a view never changes after it is published", () => {
    const table = LeaseTable.make()
    const first = table.publish(withInstance(withInstance(emptyPlugins, instance("b")), instance("a")))
    table.publish(without(withInstance(emptyPlugins, instance("c")), "c"))
    expect(first.names).toEqual(["a", "b"])
    expect(table.current().names).toEqual([])
  })

  it.effect("an instance removed from the current view is unleased once its last leased view lets go", () =>
    Effect.gen(function*() {
      const table = LeaseTable.make()
      const a = instance("a")
      const withA = withInstance(emptyPlugins, a)
      table.publish(withA)
      const first = table.acquire()
      const second = table.acquire()
      // A change that keeps `a` retires the leased view; `a` is still in the new current one too.
      table.publish(withInstance(withA, instance("b")))
      const third = table.acquire()
      // `a` is removed: only the retired, leased views still hold it.
      table.publish(without(withInstance(withA, instance("b")), "a"))
      expect(table.isLeased(a)).toBe(true)
      const waiting = yield* Effect.fork(table.unleased(a))
      yield* blocked(waiting)
      first.release()
      second.release()
      expect(table.isLeased(a)).toBe(true) // `third` still covers it
      expect(waiting.unsafePoll()).toBe(null)
      third.release()
      yield* Fiber.join(waiting)
      expect(table.isLeased(a)).toBe(false)
      expect(table.leases()).toBe(0)
    }))

  it.effect("an instance nobody leases is unleased at once; a new life of the same name is another instance", () =>
    Effect.gen(function*() {
      const table = LeaseTable.make()
      const old = instance("a")
      table.publish(withInstance(emptyPlugins, old))
      const lease = table.acquire()
      const renewed = instance("a") // the same name, another life (a restart)
      table.publish(withInstance(emptyPlugins, renewed))
      expect(table.isLeased(old)).toBe(true)
      expect(table.isLeased(renewed)).toBe(true) // in the current view
      lease.release()
      expect(table.isLeased(old)).toBe(false)
      yield* table.unleased(old) // completes without waiting
    }))

  it.effect("an interrupted wait leaves no waiter behind", () =>
    Effect.gen(function*() {
      const table = LeaseTable.make()
      const a = instance("a")
      table.publish(withInstance(emptyPlugins, a))
      const lease = table.acquire()
      table.publish(emptyPlugins)
      const waiting = yield* Effect.fork(table.unleased(a))
      yield* blocked(waiting)
      yield* Fiber.interrupt(waiting)
      lease.release()
      expect(table.isLeased(a)).toBe(false)
      yield* table.unleased(a)
    }))

  it.effect("the fiber running under a lease holds its view, and so do the fibers it forks; nobody else does", () =>
    Effect.gen(function*() {
      const table = LeaseTable.make()
      const a = instance("a")
      table.publish(withInstance(emptyPlugins, a))
      const lease = table.acquire()
      const inside = yield* Effect.withFiberRuntime((fiber) =>
        LeaseTable.underLease(
          fiber,
          lease,
          Effect.zip(LeaseTable.heldByCaller(a), Effect.flatMap(Effect.fork(LeaseTable.heldByCaller(a)), Fiber.join)),
          () => lease.release()
        )
      )
      expect(inside).toEqual([true, true])
      expect(yield* LeaseTable.heldByCaller(a)).toBe(false)
      expect(table.leases()).toBe(0)
    }))
})
