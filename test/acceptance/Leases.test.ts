/**
 * Acceptance: docs/city-plugin-lifecycle.md "Execution leases" and "close", as issue "Execution
 * leases, Agents, Sessions, Turns and Steps" states them. One test per behaviour.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import type * as City from "../../src/City.ts"
import type { CityLayerOptions } from "../../src/City.ts"
import { action } from "../../src/services/Contributions.ts"
import * as Plugin from "../../src/services/Plugin.ts"
import * as KeyedResources from "../../src/services/KeyedResources.ts"
import { PluginContext } from "../../src/services/PluginContext.ts"
import { advanceUntilDone, blocked, eventually, failureOf, Journal, makeCity, probe, provideNode } from "../fixtures.ts"

const setup = (options: CityLayerOptions = {}) =>
  Effect.gen(function*() {
    const city = yield* makeCity(options)
    const agent = yield* city.agents.add({ id: "ada" })
    const workspace = yield* city.workspaces.add({ id: "ws", path: "/tmp/ws" })
    const session = yield* agent.sessions.create({ workspace })
    return { city, agent, workspace, session }
  })

const statusOf = (city: { plugins: { get: (n: string) => Effect.Effect<Option.Option<{ status: string }>> } }, name: string) =>
  Effect.map(city.plugins.get(name), (s) => Option.getOrUndefined(s)?.status)

/** A probe whose `hold` action signals `entered` and waits for `release`. */
const holding = (name: string, journal: Journal, entered: Deferred.Deferred<void>, release: Deferred.Deferred<void>) =>
  probe(name, {
    journal,
    contributions: {
      actions: {
        hold: action({
          input: Schema.Void,
          handler: () =>
            Deferred.succeed(entered, undefined).pipe(
              Effect.zipRight(Deferred.await(release)),
              Effect.zipRight(journal.push(`step-end:${name}`))
            )
        })
      }
    }
  })

describe("Execution leases", () => {
  it.scoped("a lease keeps a removed plugin usable until released, and dispose runs once after release", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const { city } = yield* setup()
      yield* city.plugins.add(probe("alpha", { journal }))
      const leaseScope = yield* Scope.make()
      const view = yield* Scope.extend(city.leases.acquire, leaseScope)
      const removing = yield* Effect.fork(city.plugins.remove("alpha"))
      yield* eventually(Effect.map(statusOf(city, "alpha"), (s) => s === "disposing"))
      expect(view.get("alpha")).toBeDefined()
      expect(journal.count("dispose:alpha")).toBe(0)
      yield* Scope.close(leaseScope, Exit.void)
      expect(Option.map(yield* Fiber.join(removing), (r) => r.status)).toEqual(Option.some("disposed"))
      expect(journal.count("dispose:alpha")).toBe(1)
    })))

  it.scoped("a Step that starts after remove returned never sees the plugin", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const { city, session } = yield* setup()
      yield* city.plugins.add(probe("alpha", { journal }))
      yield* city.plugins.add(probe("beta", { journal }))
      yield* city.plugins.remove("alpha")
      const names = yield* session.turn((turn) => turn.step((view) => Effect.succeed(view.view.names)))
      expect(names).toEqual(["beta"])
      const error = yield* session.turn((turn) => turn.step((view) => Effect.flip(view.invoke("alpha", "echo", { text: "x" }))))
      expect(error).toMatchObject({ _tag: "ActionRejected", reason: "PluginNotFound" })
    })))

  it.scoped("a Step that started before remove keeps its instance until it ends, and dispose runs after it", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const entered = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const { city, session } = yield* setup()
      yield* city.plugins.add(holding("alpha", journal, entered, release))
      const step = yield* Effect.fork(session.turn((turn) => turn.step((view) => view.invoke("alpha", "hold", undefined))))
      yield* Deferred.await(entered)
      const removing = yield* Effect.fork(city.plugins.remove("alpha"))
      yield* eventually(Effect.map(statusOf(city, "alpha"), (s) => s === "disposing"))
      expect(journal.count("dispose:alpha")).toBe(0)
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(step)
      yield* Fiber.join(removing)
      expect(journal.events.slice(-3)).toEqual(["step-end:alpha", "dispose:alpha", "release:alpha"])
    })))

  it.scoped("a Turn's consecutive Steps swap leases with no gap", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const { city, session } = yield* setup()
      yield* city.plugins.add(probe("alpha", { journal }))
      yield* city.plugins.add(probe("beta", { journal }))
      let removing: Fiber.RuntimeFiber<Option.Option<City.Removal>, unknown> | undefined
      const seen = yield* session.turn((turn) =>
        Effect.gen(function*() {
          const first = yield* turn.step((view) => Effect.succeed(view.view.names))
          // Between two Steps the Turn still holds the first Step's view: alpha is out of new
          // views at once, but not disposed while the Turn is between Steps.
          removing = yield* Effect.fork(city.plugins.remove("alpha"))
          yield* Fiber.await(removing)
          expect(yield* statusOf(city, "alpha")).toBe("disposing")
          const disposedBetween = journal.count("dispose:alpha")
          const second = yield* turn.step((view) => Effect.succeed(view.view.names))
          return { first, second, disposedBetween }
        })
      )
      expect(seen).toEqual({ first: ["alpha", "beta"], second: ["beta"], disposedBetween: 0 })
      // The remove ran in a fiber of the Turn, under the Turn's view: pending, disposed after the Turn.
      const removal = yield* Fiber.join(removing!)
      expect(Option.isSome(removal) && removal.value.status).toBe("pending")
      if (Option.isSome(removal)) yield* removal.value.disposal
      expect(journal.count("dispose:alpha")).toBe(1)
    })))

  it.scoped("remove from a fiber holding a lease from city.leases.acquire returns pending, never waiting on itself", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const { city } = yield* setup()
      yield* city.plugins.add(probe("alpha", { journal }))
      const removal = yield* Effect.scoped(Effect.gen(function*() {
        const view = yield* city.leases.acquire
        expect(view.names).toEqual(["alpha"])
        const removal = yield* city.plugins.remove("alpha")
        expect(Option.isSome(removal) && removal.value.status).toBe("pending")
        expect(yield* statusOf(city, "alpha")).toBe("disposing")
        expect(journal.count("dispose:alpha")).toBe(0)
        return removal
      }))
      // The lease went with the scope: the disposal ran.
      if (Option.isSome(removal)) yield* removal.value.disposal
      expect(journal.count("dispose:alpha")).toBe(1)
      // A lease the fiber no longer holds does not count: a later remove waits for nothing.
      yield* city.plugins.add(probe("beta", { journal }))
      const later = yield* city.plugins.remove("beta")
      expect(Option.isSome(later) && later.value.status).toBe("disposed")
    })))

  it.scoped("the system text of a Step comes from its own view", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const { city, session } = yield* setup()
      const text = (name: string) => probe(name, { journal, contributions: { system: () => Effect.succeed(`${name} text`) } })
      yield* city.plugins.add(text("alpha"))
      const { during, next } = yield* session.turn((turn) =>
        Effect.gen(function*() {
          const during = yield* turn.step((view) =>
            Effect.zipRight(city.plugins.add(text("beta")), view.system())
          )
          const next = yield* turn.step((view) => view.system())
          return { during, next }
        })
      )
      expect(during.map((b) => b.name)).toEqual(["alpha"])
      expect(next.map((b) => b.name)).toEqual(["alpha", "beta"])
    })))

  it.scoped("two Agents calling the same plugin concurrently each see their own agent, session and turn", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const { city, workspace } = yield* setup()
      const both = yield* Deferred.make<void>()
      let arrived = 0
      yield* city.plugins.add(probe("who", {
        journal,
        contributions: {
          actions: {
            whoami: action({
              input: Schema.Void,
              handler: () =>
                Effect.gen(function*() {
                  arrived++
                  if (arrived === 2) yield* Deferred.succeed(both, undefined)
                  yield* Deferred.await(both)
                  const ctx = yield* PluginContext
                  return `${ctx.agent.id}/${ctx.session?.id}/${ctx.turn?.number}`
                })
            })
          }
        }
      }))
      const run = (id: string) =>
        Effect.gen(function*() {
          const agent = yield* city.agents.add({ id })
          const session = yield* agent.sessions.create({ workspace, id: `${id}-s` })
          return yield* session.turn((turn) => turn.step((view) => view.invoke("who", "whoami", undefined)))
        })
      const results = yield* Effect.all([run("grace"), run("alan")], { concurrency: "unbounded" })
      expect(results).toEqual(["grace/grace-s/1", "alan/alan-s/1"])
    })))

  it.scoped("removing an Agent mid-call does not dispose the plugin, and its Session then refuses", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const entered = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const { agent, city, session } = yield* setup()
      yield* city.plugins.add(holding("alpha", journal, entered, release))
      const step = yield* Effect.fork(session.turn((turn) => turn.step((view) => view.invoke("alpha", "hold", undefined))))
      yield* Deferred.await(entered)
      expect(yield* city.agents.remove(agent.id)).toBe(true)
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(step)
      expect(journal.count("dispose:alpha")).toBe(0)
      expect(yield* statusOf(city, "alpha")).toBe("ready")
      const refused = failureOf(yield* Effect.exit(session.turn(() => Effect.void)))
      expect(refused).toMatchObject({ _tag: "SessionError", reason: "SessionClosed", closedBy: "agent-removed" })
      expect(refused.message).toContain("Agent was removed")
      expect(yield* session.status).toBe("closed")
    })))

  it.scoped("adding and removing Agents, Sessions and Workspaces never runs plugin lifecycle", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const { city, workspace } = yield* setup()
      yield* city.plugins.add(probe("alpha", { journal }))
      const agent = yield* city.agents.add({ id: "tmp" })
      const session = yield* agent.sessions.create({ workspace })
      yield* session.close
      yield* city.agents.remove("tmp")
      yield* city.workspaces.add({ id: "other", path: "/tmp/other" })
      yield* city.workspaces.remove("other")
      expect(journal.events).toEqual(["init:alpha"])
    })))

  describe("close", () => {
    it.scoped("waits for a Step in flight (within drainTimeout) and disposes after it", () =>
      provideNode(Effect.gen(function*() {
        const journal = new Journal()
        const entered = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const { city, session } = yield* setup()
        yield* city.plugins.add(holding("alpha", journal, entered, release))
        const step = yield* Effect.fork(session.turn((turn) => turn.step((view) => view.invoke("alpha", "hold", undefined))))
        yield* Deferred.await(entered)
        const closing = yield* Effect.fork(city.close)
        // Admission is closed at once: a new Turn is refused while the Step drains.
        yield* eventually(Effect.map(session.status, (s) => s === "closed"))
        expect(failureOf(yield* Effect.exit(session.turn(() => Effect.void)))).toMatchObject({ _tag: "SessionError", reason: "SessionClosed", closedBy: "city-closed" })
        expect(journal.count("dispose:alpha")).toBe(0)
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(step)
        yield* Fiber.join(closing)
        expect(journal.events.slice(-3)).toEqual(["step-end:alpha", "dispose:alpha", "release:alpha"])
      })))

    it.scoped("interrupts the fiber of a Step that never ends after drainTimeout and still disposes everything", () =>
      provideNode(Effect.gen(function*() {
        const journal = new Journal()
        const entered = yield* Deferred.make<void>()
        const never = yield* Deferred.make<void>()
        const { city, session } = yield* setup({ drainTimeout: "2 seconds" })
        yield* city.plugins.add(holding("alpha", journal, entered, never))
        yield* city.plugins.add(probe("beta", { journal }))
        const step = yield* Effect.fork(session.turn((turn) => turn.step((view) => view.invoke("alpha", "hold", undefined))))
        yield* Deferred.await(entered)
        const closing = yield* Effect.fork(city.close)
        const closed = yield* advanceUntilDone(closing, "1 second")
        expect(Exit.isSuccess(closed)).toBe(true)
        // The Step runs in its caller's fiber: that fiber is interrupted, as by an outer timeout.
        const stepped = yield* Fiber.await(step)
        expect(Exit.isInterrupted(stepped)).toBe(true)
        expect(journal.count("step-end:alpha")).toBe(0)
        expect(journal.count("dispose:alpha")).toBe(1)
        expect(journal.count("dispose:beta")).toBe(1)
      })))

    it.scoped("a lease never released does not block close: it is reported and the waiting remove completes", () =>
      provideNode(Effect.gen(function*() {
        const journal = new Journal()
        const { city } = yield* setup({ disposeTimeout: "1 second" })
        yield* city.plugins.add(probe("alpha", { journal }))
        const forgotten = yield* Scope.make()
        yield* city.leases.acquireIn(forgotten)
        const removing = yield* Effect.fork(city.plugins.remove("alpha"))
        yield* eventually(Effect.map(statusOf(city, "alpha"), (s) => s === "disposing"))
        const closing = yield* Effect.fork(city.close)
        const closed = yield* advanceUntilDone(closing, "500 millis")
        const error = failureOf(closed)
        expect(error.failures.map((f) => f.subject)).toEqual(["plugin alpha"])
        expect(error.message).toContain("still-leased")
        expect(Option.map(yield* Fiber.join(removing), (r) => r.status)).toEqual(Option.some("disposed"))
        expect(journal.count("dispose:alpha")).toBe(1)
      })))
  })

  describe("bad input and faults", () => {
    it.scoped("a closed Session, and a Session of a removed Agent, refuse with typed errors", () =>
      provideNode(Effect.gen(function*() {
        const { agent, city, session, workspace } = yield* setup()
        yield* session.close
        expect(failureOf(yield* Effect.exit(session.turn(() => Effect.void))).message).toContain("it was closed")
        yield* city.agents.remove(agent.id)
        const created = failureOf(yield* Effect.exit(agent.sessions.create({ workspace })))
        expect(created).toMatchObject({ _tag: "SessionError", reason: "AgentNotFound", id: agent.id })
      })))

    it.scoped("a Step after its Turn ended is refused", () =>
      provideNode(Effect.gen(function*() {
        const { session } = yield* setup()
        const turn = yield* session.turn((turn) => Effect.succeed(turn))
        expect(failureOf(yield* Effect.exit(turn.step(() => Effect.void)))).toMatchObject({ _tag: "SessionError", reason: "TurnEnded", session: session.id })
      })))

    it.scoped("an interrupted Step and a failed Step release their leases at once", () =>
      provideNode(Effect.gen(function*() {
        const journal = new Journal()
        const entered = yield* Deferred.make<void>()
        const never = yield* Deferred.make<void>()
        const { city, session } = yield* setup()
        yield* city.plugins.add(holding("alpha", journal, entered, never))
        yield* session.turn((turn) =>
          Effect.gen(function*() {
            const step = yield* Effect.fork(turn.step((view) => view.invoke("alpha", "hold", undefined)))
            yield* Deferred.await(entered)
            yield* Fiber.interrupt(step)
            // The Turn is still running; the interrupted Step's lease is already gone.
            yield* city.plugins.remove("alpha")
            expect(journal.count("dispose:alpha")).toBe(1)
          })
        )
        yield* city.plugins.add(probe("beta", { journal }))
        yield* session.turn((turn) =>
          Effect.gen(function*() {
            yield* Effect.exit(turn.step(() => Effect.fail("step failed")))
            yield* city.plugins.remove("beta")
            expect(journal.count("dispose:beta")).toBe(1)
          })
        )
      })))

    it.scoped("releasing a lease twice is harmless", () =>
      provideNode(Effect.gen(function*() {
        const journal = new Journal()
        const { city } = yield* setup()
        yield* city.plugins.add(probe("alpha", { journal }))
        const a = yield* Scope.make()
        const b = yield* Scope.make()
        yield* Scope.extend(city.leases.acquire, a)
        yield* Scope.extend(city.leases.acquire, b)
        yield* Scope.close(a, Exit.void)
        yield* Scope.close(a, Exit.void)
        const removing = yield* Effect.fork(city.plugins.remove("alpha"))
        yield* eventually(Effect.map(statusOf(city, "alpha"), (s) => s === "disposing"))
        yield* blocked(removing)
        expect(journal.count("dispose:alpha")).toBe(0)
        yield* Scope.close(b, Exit.void)
        yield* Fiber.join(removing)
        expect(journal.count("dispose:alpha")).toBe(1)
      })))
  })

  describe("Turn boundaries", () => {
    it.scoped("a Session is busy during a Turn and idle after; atNextBoundary runs after the Turn ends", () =>
      provideNode(Effect.gen(function*() {
        const journal = new Journal()
        const inTurn = yield* Deferred.make<void>()
        const finish = yield* Deferred.make<void>()
        const { session } = yield* setup()
        expect(yield* session.status).toBe("idle")
        const turn = yield* Effect.fork(session.turn(() =>
          Deferred.succeed(inTurn, undefined).pipe(
            Effect.zipRight(Deferred.await(finish)),
            Effect.zipRight(journal.push("turn-end"))
          )
        ))
        yield* Deferred.await(inTurn)
        expect(yield* session.status).toBe("busy")
        const boundary = yield* Effect.fork(session.atNextBoundary(Effect.as(journal.push("boundary"), "reloaded")))
        const next = yield* Effect.fork(session.turn(() => journal.push("next-turn")))
        yield* blocked(boundary, next)
        expect(journal.events).toEqual([])
        yield* Deferred.succeed(finish, undefined)
        yield* Fiber.join(turn)
        expect(yield* Fiber.join(boundary)).toBe("reloaded")
        yield* Fiber.join(next)
        expect(journal.events).toEqual(["turn-end", "boundary", "next-turn"])
        expect(yield* session.status).toBe("idle")
        expect(yield* session.atNextBoundary(Effect.succeed("now"))).toBe("now")
      })))
  })

  describe("plugin-owned long-lived work", () => {
    it.scoped("dispose interrupts the plugin's background fibers", () =>
      provideNode(Effect.gen(function*() {
        const journal = new Journal()
        const { city } = yield* setup()
        const started = yield* Deferred.make<void>()
        yield* city.plugins.add(Plugin.make({
          name: "ticker",
          initialize: Effect.gen(function*() {
            yield* Effect.forkScoped(
              Deferred.succeed(started, undefined).pipe(
                Effect.zipRight(Effect.never),
                Effect.onInterrupt(() => journal.push("ticker interrupted"))
              )
            )
            return {}
          })
        }))
        yield* Deferred.await(started)
        yield* city.plugins.remove("ticker")
        expect(journal.events).toEqual(["ticker interrupted"])
      })))

    it.scoped("keyed resources are created on first use per key and all closed at dispose, even when one fails", () =>
      provideNode(Effect.gen(function*() {
        const journal = new Journal()
        const { city, session } = yield* setup()
        yield* city.plugins.add(Plugin.make({
          name: "browser",
          initialize: Effect.gen(function*() {
            const providers = yield* KeyedResources.make((agent: string) =>
              Effect.acquireRelease(
                Effect.as(journal.push(`open:${agent}`), { agent }),
                () => agent === "bad" ? Effect.die(new Error("close failed")) : journal.push(`close:${agent}`)
              )
            )
            return {
              actions: {
                open: action({
                  input: Schema.String,
                  handler: (agent) => providers.get(agent)
                })
              }
            }
          })
        }))
        yield* session.turn((turn) =>
          turn.step((view) =>
            Effect.forEach(["a", "bad", "a", "c"], (agent) => view.invoke("browser", "open", agent))
          )
        )
        expect(journal.events).toEqual(["open:a", "open:bad", "open:c"])
        const error = failureOf(yield* Effect.exit(city.plugins.remove("browser")))
        expect(error.message).toContain("close failed")
        expect(journal.events.filter((e) => e.startsWith("close:")).sort()).toEqual(["close:a", "close:c"])
      })))
  })
})
