/**
 * The core's behaviour under the interleavings that used to hang or escape the error channel:
 * one describe per behaviour.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as City from "../../src/City.ts"
import { action } from "../../src/services/Contributions.ts"
import * as Plugin from "../../src/services/Plugin.ts"
import { advanceUntilDone, blocked, eventually, failureOf, Journal, makeCity, probe, provideNode } from "../fixtures.ts"

const host = Effect.gen(function*() {
  const city = yield* makeCity({ disposeTimeout: "1 second", drainTimeout: "1 second" })
  const agent = yield* city.agents.add({ id: "agent" })
  const workspace = yield* city.workspaces.add({ id: "ws", path: "/tmp/ws" })
  const session = yield* agent.sessions.create({ workspace })
  return { city, agent, workspace, session, calls: city.calls({ agent, workspace }) }
})

describe("1. the Promise adapter keeps `this`", () => {
  class Prompted {
    readonly name = "prompted"
    readonly prompt = "Answer in haiku."
    readonly open = true
    system() {
      return this.prompt
    }
    availability() {
      return { available: this.open, reasons: [] }
    }
  }

  it.scoped("system() and availability() are called as methods of the instance", () =>
    provideNode(Effect.gen(function*() {
      const { calls, city } = yield* host
      yield* city.plugins.add(Plugin.fromPromise(new Prompted()))
      expect(yield* calls.system()).toEqual([{ name: "prompted", content: "Answer in haiku." }])
      expect(yield* calls.availability("prompted")).toEqual({ available: true, reasons: [] })
    })))
})

describe("1b. an Effect-style action inside a Promise-style plugin is run, not returned unrun", () => {
  it.scoped("invoke returns the Effect's result, and its failure fails the call", () =>
    provideNode(Effect.gen(function*() {
      const { calls, city } = yield* host
      yield* city.plugins.add(Plugin.fromPromise({
        name: "mixed",
        actions: {
          shout: action({ input: Schema.String, handler: (text) => Effect.succeed(text.toUpperCase()) }),
          refuse: action({ input: Schema.String, handler: () => Effect.fail("no") })
        }
      }))
      expect(yield* calls.invoke("mixed", "shout", "hi")).toBe("HI")
      expect(Exit.isFailure(yield* Effect.exit(calls.invoke("mixed", "refuse", "x")))).toBe(true)
    })))
})

describe("2. initializeTimeout bounds every initialize", () => {
  const stuck = (journal: Journal, gate: Deferred.Deferred<void>) =>
    Plugin.make({
      name: "stuck",
      initialize: Effect.gen(function*() {
        // The acquire of acquireRelease is uninterruptible: a timeout cannot interrupt it.
        yield* Effect.acquireRelease(
          Effect.zipRight(journal.push("acquire:stuck"), Deferred.await(gate)),
          () => journal.push("release:stuck")
        )
        return {}
      })
    })

  it.scoped("an initialize stuck in an uninterruptible region times out; its late release still runs", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const gate = yield* Deferred.make<void>()
      const city = yield* makeCity({ initializeTimeout: "2 seconds" })
      const adding = yield* Effect.fork(city.plugins.add(stuck(journal, gate)))
      const error = failureOf(yield* advanceUntilDone(adding, "1 second"))
      expect(error).toMatchObject({ _tag: "RegistryError", reason: "PluginInitializeFailed" })
      expect(error._tag === "RegistryError" && error.reason === "PluginInitializeFailed" && error.outcome).toBe("timed-out")
      expect(Option.map(yield* city.plugins.get("stuck"), (s) => s.status)).toEqual(Option.some("error"))
      expect(journal.count("release:stuck")).toBe(0)
      yield* Deferred.succeed(gate, undefined)
      yield* eventually(Effect.sync(() => journal.count("release:stuck") === 1))
      expect(journal.events).toEqual(["acquire:stuck", "release:stuck"])
    })))

  it.scoped("a close that starts meanwhile ends within its bounds and reports the abandoned initialize", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const gate = yield* Deferred.make<void>()
      const city = yield* makeCity({ initializeTimeout: "30 seconds", disposeTimeout: "1 second" })
      const adding = yield* Effect.fork(city.plugins.add(stuck(journal, gate)))
      yield* eventually(Effect.sync(() => journal.count("acquire:stuck") === 1))
      const closing = yield* Effect.fork(city.close)
      const closed = yield* advanceUntilDone(closing, "500 millis")
      const error = failureOf(closed)
      expect(error.failures.map((f) => f.subject)).toEqual(["initialize of stuck"])
      expect(error.message).toContain("abandoned")
      expect(Exit.isFailure(yield* Fiber.await(adding))).toBe(true)
      yield* Deferred.succeed(gate, undefined)
      yield* eventually(Effect.sync(() => journal.count("release:stuck") === 1))
    })))
})

describe("3. close always ends within its bounds, whatever is queued", () => {
  it.scoped("an add queued behind a remove that waits on a forgotten lease is cancelled with CityClosed", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const city = yield* makeCity({ disposeTimeout: "1 second" })
      yield* city.plugins.add(probe("alpha", { journal }))
      const forgotten = yield* Scope.make()
      yield* city.leases.acquireIn(forgotten)
      const removing = yield* Effect.fork(city.plugins.remove("alpha"))
      yield* eventually(Effect.map(city.plugins.get("alpha"), (s) => Option.getOrUndefined(s)?.status === "disposing"))
      const adding = yield* Effect.fork(city.plugins.add(probe("alpha", { journal })))
      yield* blocked(adding)
      const closing = yield* Effect.fork(city.close)
      const closed = yield* advanceUntilDone(closing, "500 millis")
      expect(failureOf(closed).message).toContain("still-leased")
      expect(failureOf(yield* Fiber.await(adding))._tag).toBe("CityClosed")
      const removed = yield* Fiber.join(removing)
      expect(Option.isSome(removed) && removed.value.status).toBe("disposed")
      expect(journal.count("init:alpha")).toBe(1)
      expect(journal.count("dispose:alpha")).toBe(1)
    })))
})

describe("4. remove from inside a leased call never deadlocks", () => {
  let lastRemoval: Effect.Effect<void, unknown> = Effect.void
  const manager = (journal: Journal, city: () => City.CityShape) =>
    Plugin.make({
      name: "manager",
      initialize: Effect.succeed({
        actions: {
          drop: action({
            input: Schema.String,
            handler: (name) =>
              Effect.gen(function*() {
                const removal = yield* Effect.orDie(city().plugins.remove(name))
                yield* journal.push(`removed:${Option.isNone(removal) ? "unknown" : removal.value.status}`)
                if (Option.isSome(removal)) lastRemoval = removal.value.disposal
                return Option.isNone(removal) ? "unknown" : removal.value.status
              })
          })
        }
      })
    })

  it.scoped("an action that removes another plugin returns `pending`; disposal follows the call", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const { calls, city } = yield* host
      yield* city.plugins.add(manager(journal, () => city))
      yield* city.plugins.add(probe("target", { journal }))
      expect(yield* calls.invoke("manager", "drop", "target")).toBe("pending")
      yield* lastRemoval
      expect(journal.events).toEqual(["init:target", "removed:pending", "dispose:target", "release:target"])
      expect(failureOf(yield* Effect.exit(calls.invoke("target", "echo", { text: "x" })))).toMatchObject({ _tag: "ActionRejected", reason: "PluginNotFound" })
    })))

  it.scoped("a host Step that removes a plugin gets `pending`; the next Step never sees it; the caller can wait", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const { city, session } = yield* host
      yield* city.plugins.add(probe("target", { journal }))
      const seen = yield* session.turn((turn) =>
        Effect.gen(function*() {
          const removal = yield* turn.step(() => city.plugins.remove("target"))
          expect(Option.isSome(removal) && removal.value.status).toBe("pending")
          const names = yield* turn.step((view) => Effect.succeed(view.names))
          // The Turn holds the last Step's view until it ends; the removed plugin waits for it.
          expect(journal.count("dispose:target")).toBe(0)
          return { names, removal }
        })
      )
      expect(seen.names).toEqual([])
      if (Option.isSome(seen.removal)) yield* seen.removal.value.disposal
      expect(journal.count("dispose:target")).toBe(1)
    })))

  it.scoped("remove answers `disposed` when nothing holds the plugin, and None for an unknown name", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const { city } = yield* host
      yield* city.plugins.add(probe("alpha", { journal }))
      const removal = yield* city.plugins.remove("alpha")
      expect(Option.isSome(removal) && removal.value.status).toBe("disposed")
      expect(journal.count("dispose:alpha")).toBe(1)
      expect(yield* city.plugins.remove("alpha")).toEqual(Option.none())
    })))
})

describe("5. bad input to City.make / City.layer is a typed failure", () => {
  it.scoped("an optional plugin with an invalid name fails with InvalidPluginName", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const exit = yield* Effect.exit(makeCity({ plugins: [probe("ok", { journal }), probe("not a name!", { journal })] }))
      expect(failureOf(exit)).toMatchObject({ _tag: "RegistryError", reason: "InvalidPluginName" })
      expect(journal.events).toEqual([])
    })))

  it.scoped("two start plugins with the same name fail with PluginAlreadyRegistered", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const exit = yield* Effect.exit(makeCity({ plugins: [probe("twin", { journal }), probe("twin", { journal })] }))
      const error = failureOf(exit)
      expect(error).toMatchObject({ _tag: "RegistryError", reason: "PluginAlreadyRegistered" })
      expect(error.message).toContain("twin")
      expect(journal.events).toEqual([])
    })))
})

describe("6. atNextBoundary forgets an interrupted caller", () => {
  it.scoped("the effect of an interrupted caller does not run at the boundary", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const { session } = yield* host
      const inTurn = yield* Deferred.make<void>()
      const endTurn = yield* Deferred.make<void>()
      const turn = yield* Effect.fork(session.turn(() => Effect.zipRight(Deferred.succeed(inTurn, undefined), Deferred.await(endTurn))))
      yield* Deferred.await(inTurn)
      const forgotten = yield* Effect.fork(session.atNextBoundary(journal.push("forgotten")))
      const kept = yield* Effect.fork(session.atNextBoundary(journal.push("kept")))
      yield* blocked(forgotten, kept)
      yield* Fiber.interrupt(forgotten)
      yield* Deferred.succeed(endTurn, undefined)
      yield* Fiber.join(turn)
      yield* Fiber.join(kept)
      expect(journal.events).toEqual(["kept"])
    })))
})

describe("7. a failed close runs once: a later close returns that failure again", () => {
  it.scoped("a second close returns the same failure and runs no cleanup twice", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      let flakyDisposals = 0
      let workspaceReleases = 0
      const city = yield* makeCity()
      yield* city.plugins.add(probe("steady", { journal }))
      yield* city.plugins.add(probe("flaky", {
        journal,
        dispose: Effect.suspend(() => ++flakyDisposals === 1 ? Effect.dieMessage("busy") : Effect.void)
      }))
      const workspace = yield* city.workspaces.add({ id: "ws", path: "/tmp/ws" })
      yield* Scope.addFinalizer(
        workspace.scope,
        Effect.suspend(() => ++workspaceReleases === 1 ? Effect.dieMessage("locked") : Effect.void)
      )
      const first = yield* Effect.exit(city.close)
      expect(failureOf(first).failures.map((f) => f.subject).sort()).toEqual(["plugin flaky", "workspace ws"])
      const second = yield* Effect.exit(city.close)
      expect(second).toEqual(first)
      expect(flakyDisposals).toBe(1)
      expect(workspaceReleases).toBe(1)
      expect(journal.count("dispose:steady")).toBe(1)
      expect(journal.count("release:flaky")).toBe(1)
    })))

  it.scoped("a release that may fail transiently retries inside itself, and the close succeeds once", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      let attempts = 0
      const city = yield* makeCity()
      yield* city.plugins.add(probe("patient", {
        journal,
        dispose: Effect.suspend(() => ++attempts < 3 ? Effect.fail("busy") : Effect.void).pipe(
          Effect.retry(Schedule.recurs(5)),
          Effect.orDie
        )
      }))
      const report = yield* city.close
      expect(report.failures).toEqual([])
      expect(report.plugins.map((p) => [p.plugin, p.outcome])).toEqual([["patient", "disposed"]])
      expect(attempts).toBe(3)
    })))

  it.scoped("concurrent closes share one result; later ones return it without running anything again", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      let attempts = 0
      const city = yield* makeCity()
      yield* city.plugins.add(probe("broken", {
        journal,
        dispose: Effect.suspend(() => {
          attempts++
          return Effect.dieMessage("always")
        })
      }))
      const [a, b] = yield* Effect.all([Effect.exit(city.close), Effect.exit(city.close)], { concurrency: 2 })
      expect(failureOf(a).failures.map((f) => f.subject)).toEqual(["plugin broken"])
      expect(b).toEqual(a)
      expect(attempts).toBe(1)
      expect(yield* Effect.exit(city.close)).toEqual(a)
      expect(attempts).toBe(1)
    })))
})

describe("8. an initialize that fails and whose release fails reports both", () => {
  it.scoped("add's Cause and last_error carry the initialize failure and the release failure", () =>
    provideNode(Effect.gen(function*() {
      const city = yield* makeCity()
      const exit = yield* Effect.exit(city.plugins.add(Plugin.make({
        name: "leaky",
        initialize: Effect.gen(function*() {
          yield* Effect.addFinalizer(() => Effect.dieMessage("release blew up"))
          return yield* Effect.fail("init refused")
        })
      })))
      // The plugin's own failure first, the release's defect after it (as acquireUseRelease does).
      expect(failureOf(exit)).toBe("init refused")
      const cause = Exit.isFailure(exit) ? exit.cause : Cause.empty
      expect(Cause.isSequentialType(cause)).toBe(true)
      expect([...Cause.failures(cause)]).toEqual(["init refused"])
      expect([...Cause.defects(cause)].map((defect) => (defect as Error).message)).toEqual(["release blew up"])
      const snapshot = Option.getOrThrow(yield* city.plugins.get("leaky"))
      expect(snapshot.last_error).toContain("init refused")
      expect(snapshot.last_error).toContain("release blew up")
    })))
})
