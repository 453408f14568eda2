/**
 * Model-based property (issue "Execution leases"): random interleavings of add (good and failing
 * plugins), remove, Step start, Step end, Turn end and close, over two Sessions, checked against
 * a simple model:
 * - each instance is initialized once and disposed once;
 * - an instance is never disposed while a leased view contains it (a running Step's view, or the
 *   view a Turn holds between two Steps);
 * - a Step sees exactly the plugins that were ready and not removed when it started;
 * - a remove issued from inside a Step returns `pending` when that Step's view contains the
 *   plugin (it never waits for its own lease) and `disposed` when nothing holds it;
 * - adds queued behind a disposing plugin and close racing them never hang: close ends, every
 *   instance that initialized is disposed once;
 * - after close nothing is left: no snapshot, no running Step.
 *
 * A failing run prints fast-check's seed and path; replay it with
 * `LEASE_SEED=<seed> LEASE_PATH=<path> npx vitest run test/property/Leases.test.ts`.
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
import { advanceUntilDone, eventually, failureOf, makeCity, provideNode } from "../fixtures.ts"

type Op =
  | { readonly op: "add"; readonly name: string; readonly fails: boolean }
  | { readonly op: "remove"; readonly name: string }
  | { readonly op: "stepStart"; readonly session: number }
  | { readonly op: "stepEnd"; readonly session: number }
  | { readonly op: "turnEnd"; readonly session: number }
  | { readonly op: "removeInStep"; readonly session: number; readonly name: string }
  | { readonly op: "closeRacingQueuedAdd"; readonly name: string }
  | { readonly op: "close" }

const names = FastCheck.constantFrom("a", "b", "c")
const session = FastCheck.constantFrom(0, 1)
const op: FastCheck.Arbitrary<Op> = FastCheck.oneof(
  { weight: 4, arbitrary: FastCheck.record({ op: FastCheck.constant("add" as const), name: names, fails: FastCheck.boolean() }) },
  { weight: 3, arbitrary: FastCheck.record({ op: FastCheck.constant("remove" as const), name: names }) },
  { weight: 4, arbitrary: FastCheck.record({ op: FastCheck.constant("stepStart" as const), session }) },
  { weight: 3, arbitrary: FastCheck.record({ op: FastCheck.constant("stepEnd" as const), session }) },
  { weight: 2, arbitrary: FastCheck.record({ op: FastCheck.constant("turnEnd" as const), session }) },
  { weight: 8, arbitrary: FastCheck.record({ op: FastCheck.constant("removeInStep" as const), session, name: names }) },
  { weight: 4, arbitrary: FastCheck.record({ op: FastCheck.constant("closeRacingQueuedAdd" as const), name: names }) },
  { weight: 1, arbitrary: FastCheck.record({ op: FastCheck.constant("close" as const) }) }
)

type Command =
  | { readonly _tag: "step"; readonly started: Deferred.Deferred<ReadonlyArray<string>>; readonly inner: Queue.Queue<Inner> }
  | { readonly _tag: "end" }

/** What a running Step is told to do: end, or remove a plugin from inside its body. */
type Inner =
  | { readonly _tag: "end" }
  | { readonly _tag: "remove"; readonly name: string; readonly result: Deferred.Deferred<string> }

interface Driver {
  readonly session: Session
  turn: { readonly commands: Queue.Queue<Command>; readonly fiber: Fiber.RuntimeFiber<unknown, unknown> } | undefined
  step: { readonly ids: ReadonlyArray<string>; readonly inner: Queue.Queue<Inner> } | undefined
  /** The ids of the view the Turn holds between Steps (its last successful Step's). */
  held: ReadonlyArray<string>
  /** A remove the running Step issued that waits for leases held elsewhere. */
  removing: { readonly name: string; readonly result: Deferred.Deferred<string> } | undefined
}

it.scoped.prop(
  "leases never let an instance be disposed while a view that contains it is leased",
  { ops: FastCheck.array(op, { minLength: 5, maxLength: 40 }) },
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
            if (fails) return yield* Effect.fail({ _tag: "Refused" } as const)
            return { skills: [{ name: id }] }
          })
        })

      const city = yield* makeCity({ drainTimeout: "5 seconds" })
      const agent = yield* city.agents.add({ id: "agent" })
      const workspace = yield* city.workspaces.add({ id: "ws", path: "/tmp/ws" })
      for (let i = 0; i < 2; i++) {
        drivers.push({
          session: yield* agent.sessions.create({ workspace }),
          turn: undefined,
          step: undefined,
          held: [],
          removing: undefined
        })
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
                    while (true) {
                      const inner = yield* Queue.take(command.inner)
                      if (inner._tag === "end") return ids
                      const removal = yield* Effect.either(city.plugins.remove(inner.name))
                      yield* Deferred.succeed(
                        inner.result,
                        removal._tag === "Left" ? removal.left._tag : Option.isNone(removal.right) ? "false" : removal.right.value.status
                      )
                    }
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

      const startStep = (driver: Driver) =>
        Effect.gen(function*() {
          if (driver.turn === undefined) yield* startTurn(driver)
          const started = yield* Deferred.make<ReadonlyArray<string>>()
          const inner = yield* Queue.unbounded<Inner>()
          // Starting a Step swaps the Turn's held view for the new one (acquire, then release).
          driver.held = []
          yield* Queue.offer(driver.turn!.commands, { _tag: "step", started, inner })
          const ids = yield* Deferred.await(started)
          driver.step = { ids, inner }
          expect([...ids].sort()).toEqual([...ready.values()].sort())
        })

      /** Names removed from inside a Step, by the id whose disposal is pending on a lease. */
      const removedPending = new Map<string, string>()
      const queued: Array<Fiber.RuntimeFiber<unknown, { readonly _tag: string }>> = []
      /** A pending removal is over once no lease the model knows holds its id. */
      const settle = () => {
        for (const driver of drivers) {
          const removing = driver.removing
          if (removing === undefined) continue
          const done = Effect.runSync(Deferred.poll(removing.result))
          if (Option.isSome(done)) {
            expect(Effect.runSync(done.value)).toBe("disposed")
            present.delete(removing.name)
            driver.removing = undefined
          }
        }
        for (const [name, id] of removedPending) {
          if (!holders().includes(id)) {
            removedPending.delete(name)
            present.delete(name)
          }
        }
      }
      let closed = false
      for (const step of ops) {
        if (closed) break
        settle()
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
            yield* eventually(Effect.map(
              city.plugins.get(step.name),
              (snapshot) => Option.isNone(snapshot) || snapshot.value.status === "disposing"
            ))
            break
          }
          case "stepStart": {
            const driver = drivers[step.session]!
            if (driver.step !== undefined) break
            yield* startStep(driver)
            break
          }
          case "stepEnd": {
            const driver = drivers[step.session]!
            if (driver.step === undefined || driver.removing !== undefined) break
            yield* Queue.offer(driver.step.inner, { _tag: "end" })
            yield* eventually(Effect.sync(() => driver.step === undefined))
            break
          }
          case "removeInStep": {
            const driver = drivers[step.session]!
            const id = ready.get(step.name)
            if (driver.removing !== undefined || id === undefined) break
            if (driver.step === undefined) yield* startStep(driver)
            const ownStep = driver.step!.ids.includes(id)
            ready.delete(step.name)
            const result = yield* Deferred.make<string>()
            yield* Queue.offer(driver.step!.inner, { _tag: "remove", name: step.name, result })
            if (ownStep) {
              // Under its own lease the remove never waits: pending, at once.
              expect(yield* Deferred.await(result)).toBe("pending")
              removedPending.set(step.name, id)
              break
            }
            // Held elsewhere (or nowhere): the remove waits for those leases, then disposes. The
            // Step is busy until then; the model settles it when the result arrives.
            driver.removing = { name: step.name, result }
            break
          }
          case "closeRacingQueuedAdd": {
            // An add of a name whose disposal is pending on a lease waits for that disposal;
            // a close that starts meanwhile cancels it with CityClosed and still ends.
            const id = removedPending.get(step.name)
            if (id === undefined || !holders().includes(id)) break
            queued.push(yield* Effect.fork(city.plugins.add(plugin(step.name, false, `${step.name}#${next++}`))))
            closed = true
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
      // Queued adds were cancelled by close, not awaited.
      for (const fiber of queued) expect(failureOf(yield* Fiber.await(fiber))._tag).toBe("CityClosed")
      expect(whenClosed._tag).toBe("Success")
      expect(violations).toEqual([])
      for (const [id, count] of initialized) {
        expect(count, `initialize of ${id}`).toBe(1)
        expect(disposed.get(id), `dispose of ${id}`).toBe(1)
      }
      expect(disposed.size).toBe(initialized.size)
      expect(yield* city.plugins.snapshots).toEqual([])
    })),
  {
    timeout: 180_000,
    fastCheck: {
      numRuns: Number(process.env["LEASE_RUNS"] ?? 500),
      ...(process.env["LEASE_SEED"] === undefined
        ? {}
        : { seed: Number(process.env["LEASE_SEED"]), path: process.env["LEASE_PATH"] ?? "" })
    }
  }
)
