/**
 * Plugin dependencies (docs/library.md, "Plugin dependencies"): `requires` on a plugin orders
 * initialize and dispose, refuses what would leave a dependent without what it requires, and
 * isolates the dependents of a start plugin that failed.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Plugin from "../../../../src/services/Plugin.ts"
import { requirements } from "../../../../src/services/internal/pluginCallbacks.ts"
import * as Dependencies from "../../../../src/services/city/internal/dependencies.ts"
import { Journal, makeCity, provideNode } from "../../../fixtures.ts"

/** A plugin that journals its initialize and dispose; `fails` makes its initialize fail. */
/** A probe's own typed initialize failure. */
class Refused extends Data.TaggedError("Refused")<{ readonly plugin: string }> {
  override get message() {
    return `${this.plugin} refused`
  }
}

const probe = (journal: Journal, name: string, requires: ReadonlyArray<Plugin.RequirementInput> = [], fails = false) =>
  Plugin.make({
    name,
    requires,
    initialize: Effect.gen(function*() {
      yield* journal.push(`init ${name}`)
      yield* Effect.addFinalizer(() => journal.push(`dispose ${name}`))
      if (fails) return yield* Effect.fail(new Refused({ plugin: name }))
      return {}
    })
  })

const graph = (entries: Record<string, ReadonlyArray<string>>): Dependencies.Graph =>
  new Map(Object.entries(entries).map(([name, deps]) => [name, requirements(deps)]))

describe("the dependency graph", () => {
  it("initialize waves put each plugin after what it requires; dispose waves reverse it; a cycle is named", () => {
    const g = graph({ zeta: [], alpha: ["zeta"], mid: ["zeta"], top: ["alpha", "mid"] })
    expect(Dependencies.initializeWaves(g)).toEqual([["zeta"], ["alpha", "mid"], ["top"]])
    expect(Dependencies.disposeWaves(g)).toEqual([["top"], ["alpha", "mid"], ["zeta"]])
    expect(Dependencies.findCycle(g)).toBeUndefined()
    expect(Dependencies.findCycle(graph({ a: ["b"], b: ["c"], c: ["a"], d: [] }))).toEqual(["a", "b", "c", "a"])
    expect(Dependencies.findCycle(graph({ a: ["a"] }))).toEqual(["a", "a"])
    expect(Dependencies.transitiveDependents(g, ["zeta"])).toEqual(["alpha", "mid", "top"])
  })
})

describe("plugin dependencies in a City", () => {
  it.scoped("add refuses a plugin whose required dependency is not ready, naming both; an optional one may be absent", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const city = yield* makeCity()
      const refused = yield* Effect.either(city.plugins.add(probe(journal, "notes", ["store", "clock"])))
      expect(Either.isLeft(refused) && refused.left).toMatchObject({ _tag: "RegistryError", reason: "PluginDependencyMissing" })
      expect(Either.isLeft(refused) && refused.left.message).toBe("Plugin notes requires clock, store, which are not ready")
      expect(journal.events).toEqual([]) // nothing of it ran
      expect(yield* city.plugins.get("notes")).toEqual(Option.none())
      yield* city.plugins.add(probe(journal, "store"))
      yield* city.plugins.add(probe(journal, "notes", ["store", { name: "clock", optional: true }]))
      expect(journal.events).toEqual(["init store", "init notes"])
    })))

  it.scoped("remove of a plugin others require fails listing them; with cascade the dependents go first", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const city = yield* makeCity()
      yield* city.plugins.add(probe(journal, "zeta"))
      yield* city.plugins.add(probe(journal, "beta", ["zeta"]))
      yield* city.plugins.add(probe(journal, "alpha", ["beta"]))
      yield* city.plugins.add(probe(journal, "omega", [{ name: "zeta", optional: true }]))
      const refused = yield* Effect.either(city.plugins.remove("zeta"))
      expect(Either.isLeft(refused) && refused.left.message).toBe(
        "Plugin zeta is required by beta: remove them first, or remove with cascade"
      )
      expect((yield* city.plugins.snapshots).map((s) => s.name)).toEqual(["alpha", "beta", "omega", "zeta"])
      const removal = yield* city.plugins.remove("zeta", { cascade: true })
      expect(Option.map(removal, (r) => r.status)).toEqual(Option.some("disposed"))
      // The optional dependent stays; the required ones went, each before what it requires.
      expect(journal.events.filter((e) => e.startsWith("dispose"))).toEqual(["dispose alpha", "dispose beta", "dispose zeta"])
      expect((yield* city.plugins.snapshots).map((s) => s.name)).toEqual(["omega"])
      // An optional dependency may be removed without cascade.
      yield* city.plugins.add(probe(journal, "zeta"))
      yield* city.plugins.add(probe(journal, "opt", [{ name: "zeta", optional: true }]))
      expect(Option.isSome(yield* city.plugins.remove("zeta"))).toBe(true)
    })))

  it.scoped("close disposes dependents before what they require, whatever their names", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const scope = yield* Scope.make()
      const city = yield* Scope.extend(makeCity(), scope)
      // Reverse name order would dispose zeta first.
      yield* city.plugins.add(probe(journal, "zeta"))
      yield* city.plugins.add(probe(journal, "alpha", ["zeta"]))
      yield* city.plugins.add(probe(journal, "beta", ["alpha"]))
      yield* city.plugins.add(probe(journal, "solo"))
      yield* Scope.close(scope, Exit.void)
      const disposals = journal.events.filter((e) => e.startsWith("dispose"))
      expect(disposals.indexOf("dispose beta")).toBeLessThan(disposals.indexOf("dispose alpha"))
      expect(disposals.indexOf("dispose alpha")).toBeLessThan(disposals.indexOf("dispose zeta"))
      expect(disposals).toHaveLength(4)
    })))

  it.scoped("start plugins initialize in dependency order; a dependent of a failed one is not initialized and says why", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const city = yield* makeCity({
        plugins: [
          probe(journal, "alpha", ["zeta"]),
          probe(journal, "zeta"),
          probe(journal, "broken", [], true),
          probe(journal, "needs-broken", ["broken"]),
          probe(journal, "needs-that", ["needs-broken"]),
          probe(journal, "maybe", [{ name: "broken", optional: true }])
        ]
      })
      expect(journal.events.indexOf("init zeta")).toBeLessThan(journal.events.indexOf("init alpha"))
      expect(journal.events).not.toContain("init needs-broken")
      expect(journal.events).not.toContain("init needs-that")
      expect(journal.events).toContain("init maybe")
      const snapshots = new Map((yield* city.plugins.snapshots).map((s) => [s.name, s]))
      expect(snapshots.get("needs-broken")?.status).toBe("error")
      expect(snapshots.get("needs-broken")?.last_error).toMatch(/^dependency broken failed: .*broken refused/)
      expect(snapshots.get("needs-that")?.last_error).toMatch(/^dependency needs-broken failed: dependency broken failed/)
      expect(snapshots.get("maybe")?.status).toBe("ready")
    })))

  it.scoped("a required start plugin whose dependency failed fails the start; a cycle or a missing one is refused before anything starts", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const failed = yield* Effect.either(Effect.scoped(makeCity({
        plugins: [probe(journal, "broken", [], true), { plugin: probe(journal, "app", ["broken"]), required: true }]
      })))
      expect(Either.isLeft(failed) && failed.left.message).toBe("Plugin app requires broken, which is not ready")
      const cycle = yield* Effect.either(Effect.scoped(makeCity({
        plugins: [probe(journal, "a", ["b"]), probe(journal, "b", ["a"]), probe(journal, "c")]
      })))
      expect(Either.isLeft(cycle) && cycle.left.message).toBe("Plugin dependencies form a cycle: a -> b -> a")
      const missing = yield* Effect.either(Effect.scoped(makeCity({ plugins: [probe(journal, "x", ["nowhere"])] })))
      expect(Either.isLeft(missing) && missing.left).toMatchObject({ _tag: "RegistryError", reason: "PluginDependencyMissing" })
      expect(journal.events.filter((e) => !e.includes("broken"))).toEqual([])
    })))

  it.scoped("a lease that covers a dependent makes a cascade pending; the dependency is disposed only after it", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const city = yield* makeCity()
      yield* city.plugins.add(probe(journal, "store"))
      yield* city.plugins.add(probe(journal, "app", ["store"]))
      const leased = yield* Scope.make()
      const view = yield* Scope.extend(city.leases.acquire, leased)
      expect(view.names).toEqual(["app", "store"])
      const removal = yield* city.plugins.remove("store", { cascade: true })
      expect(Option.map(removal, (r) => r.status)).toEqual(Option.some("pending"))
      // Neither is in the next view, and neither is disposed while the lease holds.
      const next = yield* Effect.scoped(city.leases.acquire)
      expect(next.names).toEqual([])
      expect(journal.events.filter((e) => e.startsWith("dispose"))).toEqual([])
      yield* Scope.close(leased, Exit.void)
      yield* Option.getOrThrow(removal).disposal
      expect(journal.events.filter((e) => e.startsWith("dispose"))).toEqual(["dispose app", "dispose store"])
    })))

  it.scoped("no dependent is admitted on a plugin while it is being removed", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const city = yield* makeCity()
      yield* city.plugins.add(probe(journal, "store"))
      const leased = yield* Scope.make()
      yield* Scope.extend(city.leases.acquire, leased)
      // Held by the lease of another fiber: the removal waits, the store is leaving.
      const removing = yield* Effect.fork(city.plugins.remove("store"))
      yield* Stream.runDrain(Stream.takeUntil(city.plugins.changes, (c) =>
        c._tag === "Updated" && c.snapshot.name === "store" && c.snapshot.status === "disposing")).pipe(
          Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => "the removal never began" })
        )
      const refused = yield* Effect.either(city.plugins.add(probe(journal, "app", ["store"])))
      expect(Either.isLeft(refused) && refused.left).toMatchObject({ _tag: "RegistryError", reason: "PluginDependencyMissing" })
      yield* Scope.close(leased, Exit.void)
      yield* removing
    })))

  it.scoped("no view ever holds a dependent without what it requires, while removals cascade and plugins come back", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const city = yield* makeCity()
      const requires: Record<string, ReadonlyArray<string>> = { base: [], mid: ["base"], top: ["mid", "base"], side: ["base"] }
      const addAll = Effect.forEach(["base", "mid", "side", "top"], (name) => city.plugins.add(probe(journal, name, requires[name])), { discard: true })
      yield* addAll
      let checked = 0
      const watch = Effect.gen(function*() {
        for (let i = 0; i < 400; i++) {
          const names = yield* Effect.scoped(Effect.map(city.leases.acquire, (view) => view.names))
          for (const name of names) for (const dep of requires[name] ?? []) expect(names, `${name} without ${dep}`).toContain(dep)
          checked++
          yield* Effect.yieldNow()
        }
      })
      const churn = Effect.gen(function*() {
        for (let i = 0; i < 20; i++) {
          yield* city.plugins.remove(i % 2 === 0 ? "base" : "mid", { cascade: true })
          yield* Effect.forEach(["base", "mid", "side", "top"], (name) =>
            Effect.ignore(city.plugins.add(probe(journal, name, requires[name]))), { discard: true })
        }
      })
      yield* Effect.all([watch, churn], { concurrency: "unbounded", discard: true })
      expect(checked).toBe(400)
    })))

  it.scoped("independent start plugins initialize concurrently: each waits for the other to have begun", () =>
    provideNode(Effect.gen(function*() {
      const began = { left: yield* Deferred.make<void>(), right: yield* Deferred.make<void>() }
      const waiting = (name: "left" | "right", other: "left" | "right") =>
        Plugin.make({
          name,
          initialize: Effect.as(Effect.zipRight(Deferred.succeed(began[name], undefined), Deferred.await(began[other])), {})
        })
      // One at a time, the first would wait for ever (then fail on the initialize timeout).
      const city = yield* makeCity({ plugins: [waiting("left", "right"), waiting("right", "left")], initializeTimeout: "5 seconds" })
      expect((yield* city.plugins.snapshots).map((s) => s.status)).toEqual(["ready", "ready"])
    })))
})
