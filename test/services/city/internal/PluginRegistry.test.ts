/**
 * The registry on its own (src/services/city/internal/pluginRegistry.ts), built from its layer and the
 * services it reads (the start list's side of the case rule: StartPlugins.test.ts): one instance per name (docs/city-plugin-lifecycle.md, "Plugin Lifecycle"),
 * and the plugin-name rule's one decision about case (src/schema/PluginName.ts): names keep their
 * case, but a name that equals a registered one ignoring case is refused, since both would be one
 * folder on a case-insensitive file system.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as CityConfig from "../../../../src/services/city/CityConfig.ts"
import * as Close from "../../../../src/services/city/internal/close.ts"
import * as LeaseTable from "../../../../src/services/city/internal/leaseTable.ts"
import * as PluginLifecycle from "../../../../src/services/city/internal/pluginLifecycle.ts"
import * as PluginRegistry from "../../../../src/services/city/internal/pluginRegistry.ts"
import { failureOf, Journal, probe, provideNode } from "../../../fixtures.ts"

/** The registry on a temporary root, with only the services it reads, built in the test's Scope. */
const registry = Effect.gen(function*() {
  const root = yield* (yield* FileSystem.FileSystem).makeTempDirectoryScoped({ prefix: "city-test-" })
  const layer = PluginRegistry.layer.pipe(
    Layer.provideMerge(PluginLifecycle.layer.pipe(Layer.provideMerge(LeaseTable.layer))),
    Layer.provideMerge(Layer.merge(Close.layer, CityConfig.layer({ root })))
  )
  return Context.get(yield* Layer.build(layer), PluginRegistry.PluginRegistry)
})

const names = (registry: PluginRegistry.PluginRegistryShape) =>
  Effect.map(registry.snapshots, (all) => all.map((s) => `${s.name}:${s.status}`))

describe("PluginRegistry", () => {
  it.scoped("add, get and remove one plugin: ready, then gone", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const plugins = yield* registry
      expect((yield* plugins.add(probe("alpha", { journal }))).status).toBe("ready")
      expect(Option.map(yield* plugins.get("alpha"), (s) => s.status)).toEqual(Option.some("ready"))
      expect(Option.map(yield* plugins.remove("alpha"), (r) => r.status)).toEqual(Option.some("disposed"))
      expect(yield* plugins.get("alpha")).toEqual(Option.none())
      expect(journal.events).toEqual(["init:alpha", "dispose:alpha", "release:alpha"])
    })))

  it.scoped("a second add of the same name keeps its message, with no other name in it", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const plugins = yield* registry
      yield* plugins.add(probe("foo", { journal }))
      const error = failureOf(yield* Effect.exit(plugins.add(probe("foo", { journal }))))
      expect(error).toMatchObject({ _tag: "RegistryError", reason: "PluginAlreadyRegistered", plugin: "foo" })
      expect(error.message).toBe("Plugin already exists in City: foo")
    })))
})

describe("names differ only in case: one folder, so one plugin", () => {
  it.scoped("add \"foo\" then \"Foo\": the second fails, naming the registered one, and never initializes", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const plugins = yield* registry
      yield* plugins.add(probe("foo", { journal }))
      const error = failureOf(yield* Effect.exit(plugins.add(probe("Foo", { journal }))))
      expect(error).toMatchObject({ _tag: "RegistryError", reason: "PluginAlreadyRegistered", plugin: "Foo", registered: "foo" })
      expect(error.message).toBe(
        "Plugin already exists in City: Foo (registered as \"foo\"; names differ only in case)"
      )
      expect(journal.events).toEqual(["init:foo"])
      expect(yield* names(plugins)).toEqual(["foo:ready"])
    })))

  it.scoped("an add still initializing holds its name against another case", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const gate = yield* Deferred.make<void>()
      const plugins = yield* registry
      const first = yield* Effect.fork(plugins.add(probe("foo", { journal, initialize: Deferred.await(gate) })))
      yield* Effect.yieldNow()
      const error = failureOf(yield* Effect.exit(plugins.add(probe("FOO", { journal }))))
      expect(error).toMatchObject({ _tag: "RegistryError", reason: "PluginAlreadyRegistered", plugin: "FOO", registered: "foo" })
      yield* Deferred.succeed(gate, undefined)
      expect((yield* Fiber.join(first)).status).toBe("ready")
      expect(journal.count("init:FOO")).toBe(0)
    })))

  it.scoped("an error snapshot holds its name: the retry is by the same name", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const plugins = yield* registry
      yield* Effect.exit(plugins.add(probe("foo", { journal, initialize: Effect.fail("no") })))
      const error = failureOf(yield* Effect.exit(plugins.add(probe("Foo", { journal }))))
      expect(error).toMatchObject({ _tag: "RegistryError", reason: "PluginAlreadyRegistered", registered: "foo" })
      expect((yield* plugins.add(probe("foo", { journal }))).status).toBe("ready")
    })))

  it.scoped("remove \"foo\" then add \"Foo\": the name is free again", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const plugins = yield* registry
      yield* plugins.add(probe("foo", { journal }))
      yield* plugins.remove("foo")
      expect((yield* plugins.add(probe("Foo", { journal }))).status).toBe("ready")
      expect(yield* names(plugins)).toEqual(["Foo:ready"])
    })))
})
