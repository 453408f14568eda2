/**
 * Model-based property (issue "Execution leases"): random interleavings of add (good and failing
 * plugins), remove, Step start, Step end, Turn end and close, over two Sessions, checked against
 * a simple model:
 * - each instance is initialized once and disposed once;
 * - an instance is never disposed while a leased view contains it (a running Step's view, or the
 *   view a Turn holds between two Steps);
 * - a Step sees exactly the plugins that were ready and not removed when it started;
 * - after close nothing is left: no snapshot, no running Step.
 */
import { expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Plugin from "../../src/services/Plugin.ts"
import type { Session } from "../../src/services/city/Session.ts"
import { advanceUntilDone, makeCity, provideNode } from "../fixtures.ts"

type Op =
  | { readonly op: "add"; readonly name: string; readonly fails: boolean }
  | { readonly op: "remove"; readonly name: string }
  | { readonly op: "stepStart"; readonly session: number }
  | { readonly op: "stepEnd"; readonly session: number }
  | { readonly op: "turnEnd"; readonly session: number }
  | { readonly op: "close" }

const names = FastCheck.constantFrom("a", "b", "c")
const session = FastCheck.constantFrom(0, 1)
const op: FastCheck.Arbitrary<Op> = FastCheck.oneof(
  { weight: 4, arbitrary: FastCheck.record({ op: FastCheck.constant("add" as const), name: names, fails: FastCheck.boolean() }) },
  { weight: 3, arbitrary: FastCheck.record({ op: FastCheck.constant("remove" as const), name: names }) },
  { weight: 4, arbitrary: FastCheck.record({ op: FastCheck.constant("stepStart" as const), session }) },
  { weight: 3, arbitrary: FastCheck.record({ op: FastCheck.constant("stepEnd" as const), session }) },
  { weight: 2, arbitrary: FastCheck.record({ op: FastCheck.constant("turnEnd" as const), session }) },
  { weight: 1, arbitrary: FastCheck.record({ op: FastCheck.constant("close" as const) }) }
)

type Command =
  | { readonly _tag: "step"; readonly started: Deferred.Deferred<ReadonlyArray<string>>; readonly end: Deferred.Deferred<void> }
  | { readonly _tag: "end" }

interface Driver {
  readonly session: Session
  turn: { readonly commands: Queue.Queue<Command>; readonly fiber: Fiber.RuntimeFiber<unknown, unknown> } | undefined
  step: { readonly ids: ReadonlyArray<string>; readonly end: Deferred.Deferred<void> } | undefined
  /** The ids of the view the Turn holds between Steps (its last successful Step's). */
  held: ReadonlyArray<string>
}

it.scoped.prop(
  "leases never let an instance be disposed while a view that contains it is leased",
  { ops: FastCheck.array(op, { minLength: 1, maxLength: 30 }) },
  ({ ops }) =>
    provideNode(Effect.gen(function*() {
      const initialized = new Map<string, number>()
      const disposed = new Map<string, number>()
      const violations: Array<string> = []
      const drivers: Array<Driver> = []
      /** Model: name -> id of its ready instance. */
      const ready = new Map<string, string>()
      /** Names whose add is not allowed now (ready or being disposed). */
      const present = new Set<string>()
      let next = 0

      const holders = () => drivers.flatMap((d) => [...(d.step?.ids ?? []), ...d.held])
      const plugin = (name: string, fails: boolean, id: string) =>
        Plugin.make({
          name,
          initialize: Effect.gen(function*() {
            initialized.set(id, (initialized.get(id) ?? 0) + 1)
            yield* Effect.addFinalizer(() =>
              Effect.sync(() => {
                disposed.set(id, (disposed.get(id) ?? 0) + 1)
                if (holders().includes(id)) violations.push(`${id} disposed while leased`)
              })
            )
            if (fails) return yield* Effect.fail("refused")
            return { skills: [{ name: id }] }
          })
        })

      const city = yield* makeCity({ drainTimeout: "5 seconds" })
      const agent = yield* city.agents.add({ id: "agent" })
      const workspace = yield* city.workspaces.add({ id: "ws", path: "/tmp/ws" })
      for (let i = 0; i < 2; i++) {
        drivers.push({ session: yield* agent.sessions.create({ workspace }), turn: undefined, step: undefined, held: [] })
      }

      const startTurn = (driver: Driver) =>
        Effect.gen(function*() {
          const commands = yield* Queue.unbounded<Command>()
          const fiber = yield* Effect.fork(driver.session.turn((turn) =>
            Effect.gen(function*() {
              while (true) {
                const command = yield* Queue.take(commands)
                if (command._tag === "end") return
                const exit = yield* Effect.exit(turn.step((view) =>
                  Effect.gen(function*() {
                    const ids = view.view.plugins.map((p) => p.contributions.skills![0]!.name)
                    yield* Deferred.succeed(command.started, ids)
                    yield* Deferred.await(command.end)
                    return ids
                  }).pipe(
                    // The Step's body ends before its lease goes, also when close interrupts it.
                    Effect.onInterrupt(() => Effect.sync(() => (driver.step = undefined)))
                  )
                ))
                driver.held = exit._tag === "Success" ? exit.value : []
                driver.step = undefined
                // Only close makes a Step fail here (it interrupts Steps after drainTimeout).
                if (exit._tag === "Failure") return
              }
            })
          ))
          driver.turn = { commands, fiber }
        })

      let closed = false
      for (const step of ops) {
        if (closed) break
        switch (step.op) {
          case "add": {
            if (present.has(step.name)) break
            const id = `${step.name}#${next++}`
            const exit = yield* Effect.exit(city.plugins.add(plugin(step.name, step.fails, id)))
            if (exit._tag === "Success") {
              ready.set(step.name, id)
              present.add(step.name)
            }
            break
          }
          case "remove": {
            if (!ready.has(step.name)) break
            ready.delete(step.name)
            yield* Effect.fork(Effect.ensuring(
              Effect.exit(city.plugins.remove(step.name)),
              Effect.sync(() => present.delete(step.name))
            ))
            // The removal has taken effect once the plugin is out of the view (disposing or gone).
            while (true) {
              const snapshot = yield* city.plugins.get(step.name)
              if (Option.isNone(snapshot) || snapshot.value.status === "disposing") break
              yield* Effect.yieldNow()
            }
            break
          }
          case "stepStart": {
            const driver = drivers[step.session]!
            if (driver.step !== undefined) break
            if (driver.turn === undefined) yield* startTurn(driver)
            const started = yield* Deferred.make<ReadonlyArray<string>>()
            const end = yield* Deferred.make<void>()
            // Starting a Step swaps the Turn's held view for the new one (acquire, then release).
            driver.held = []
            yield* Queue.offer(driver.turn!.commands, { _tag: "step", started, end })
            const ids = yield* Deferred.await(started)
            driver.step = { ids, end }
            expect([...ids].sort()).toEqual([...ready.values()].sort())
            break
          }
          case "stepEnd": {
            const driver = drivers[step.session]!
            if (driver.step === undefined) break
            yield* Deferred.succeed(driver.step.end, undefined)
            while (driver.step !== undefined) yield* Effect.yieldNow()
            break
          }
          case "turnEnd": {
            const driver = drivers[step.session]!
            if (driver.turn === undefined || driver.step !== undefined) break
            yield* Queue.offer(driver.turn.commands, { _tag: "end" })
            yield* Fiber.join(driver.turn.fiber)
            driver.turn = undefined
            driver.held = []
            break
          }
          case "close": {
            closed = true
            break
          }
        }
      }

      // Close (steps still running are drained, then interrupted), then check the model.
      // Close stops the Sessions first, which lets go of the views Turns hold between Steps.
      for (const driver of drivers) driver.held = []
      const closing = yield* Effect.fork(city.close)
      const whenClosed = yield* advanceUntilDone(closing, "1 second")
      for (const driver of drivers) {
        if (driver.turn !== undefined) {
          yield* Queue.offer(driver.turn.commands, { _tag: "end" })
          yield* Fiber.await(driver.turn.fiber)
        }
      }
      expect(whenClosed._tag).toBe("Success")
      expect(violations).toEqual([])
      for (const [id, count] of initialized) {
        expect(count, `initialize of ${id}`).toBe(1)
        expect(disposed.get(id), `dispose of ${id}`).toBe(1)
      }
      expect(disposed.size).toBe(initialized.size)
      expect(yield* city.plugins.snapshots).toEqual([])
    })),
  { timeout: 180_000, fastCheck: { numRuns: Number(process.env["LEASE_RUNS"] ?? 500) } }
)
