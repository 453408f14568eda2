/**
 * Typed sibling services (docs/library.md, "Plugin dependencies"; src/services/Siblings.ts): a
 * plugin provides a service under a Tag, a sibling reaches it through a stable typed handle that
 * resolves the provider at each call under a lease.
 */
import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import type * as Layer from "effect/Layer"
import * as City from "../../src/City.ts"
import type { SiblingUnavailable } from "../../src/schema/Errors.ts"
import * as Plugin from "../../src/services/Plugin.ts"
import * as Siblings from "../../src/services/Siblings.ts"
import { Journal, makeCity, provideNode } from "../fixtures.ts"

class NoSuchKey extends Data.TaggedError("NoSuchKey")<{ readonly key: string }> {}

interface StoreShape {
  readonly get: (key: string) => Effect.Effect<string, NoSuchKey>
  readonly version: string
}
class Store extends Context.Tag("test/Store")<Store, StoreShape>() {}

/** A store plugin of `version` holding `entries`, disposing into `journal`. */
const store = (journal: Journal, version: string, entries: Record<string, string> = { greeting: "hello" }) =>
  Plugin.make({
    name: "store",
    version,
    provides: [Store],
    initialize: Effect.gen(function*() {
      yield* Effect.addFinalizer(() => journal.push(`dispose store ${version}`))
      return {
        services: Context.make(Store, {
          version,
          get: (key) => key in entries ? Effect.succeed(entries[key]!) : Effect.fail(new NoSuchKey({ key }))
        })
      }
    })
  })

/** A plugin that takes a handle on the Store in its initialize and hands it out. */
const user = (got: (handle: Siblings.SiblingService<StoreShape>) => void, optional = false) =>
  Plugin.make({
    name: "app",
    requires: [{ name: "store", optional }],
    initialize: Effect.gen(function*() {
      got(yield* Siblings.service(Store))
      return {}
    })
  })

describe("typed sibling services", () => {
  it.scoped("a sibling's service through a typed handle: its values and its typed errors reach the caller", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      let handle: Siblings.SiblingService<StoreShape> | undefined
      const city = yield* makeCity({ plugins: [store(journal, "1"), user((h) => (handle = h))] })
      expect((yield* city.plugins.snapshots).map((s) => s.status)).toEqual(["ready", "ready"])
      const greeting = handle!.use((s) => s.get("greeting"))
      expectTypeOf(greeting).toEqualTypeOf<Effect.Effect<string, NoSuchKey | SiblingUnavailable>>()
      expect(yield* greeting).toBe("hello")
      const missing = yield* Effect.either(handle!.use((s) => s.get("nope")))
      expect(Either.isLeft(missing) && missing.left).toEqual(new NoSuchKey({ key: "nope" }))
      // @ts-expect-error the service has no `put`: the compiler checks the calls
      handle!.use((s) => s.put("k", "v"))
    })))

  it.scoped("the handle resolves at each call: absent provider is SiblingUnavailable, a new instance is reached, never a disposed one", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      let handle: Siblings.SiblingService<StoreShape> | undefined
      const city = yield* makeCity({ plugins: [store(journal, "1"), user((h) => (handle = h), true)] })
      expect(yield* handle!.use((s) => Effect.succeed(s.version))).toBe("1")
      yield* city.plugins.remove("store")
      expect(journal.events).toEqual(["dispose store 1"])
      const absent = yield* Effect.either(handle!.use((s) => Effect.succeed(s.version)))
      expect(Either.isLeft(absent) && absent.left._tag).toBe("SiblingUnavailable")
      expect(Either.isLeft(absent) && absent.left.message).toBe("No ready plugin provides the service test/Store")
      yield* city.plugins.add(store(journal, "2"))
      expect(yield* handle!.use((s) => Effect.succeed(s.version))).toBe("2")
    })))

  it.scoped("a provider removed during a call is disposed after the call, which completes with it", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      let handle: Siblings.SiblingService<StoreShape> | undefined
      const city = yield* makeCity({ plugins: [store(journal, "1"), user((h) => (handle = h), true)] })
      const inCall = yield* Deferred.make<void>()
      const finish = yield* Deferred.make<void>()
      const call = yield* Effect.fork(handle!.use((s) =>
        Effect.zipRight(Effect.zipRight(Deferred.succeed(inCall, undefined), Deferred.await(finish)), s.get("greeting"))
      ))
      yield* Deferred.await(inCall)
      const removing = yield* Effect.fork(city.plugins.remove("store"))
      yield* journal.push("call still running")
      yield* Deferred.succeed(finish, undefined)
      expect(yield* Fiber.join(call)).toBe("hello")
      yield* Fiber.join(removing)
      expect(journal.events).toEqual(["call still running", "dispose store 1"])
    })))

  // (tsc checks these with the tests; the assertions are types.)
  it("a plugin that provides a Tag must return its service; one that takes a handle needs a provider", () => {
    expectTypeOf(store(new Journal(), "1")).toEqualTypeOf<Plugin.Plugin<never, never, Store>>()
    expectTypeOf(user(() => {})).toEqualTypeOf<Plugin.Plugin<never, Siblings.SiblingNeed<Store>, never>>()
    Plugin.make({
      name: "store",
      provides: [Store],
      // @ts-expect-error initialize returns no `services` for Store
      initialize: Effect.succeed({})
    })
  })

  it("among start plugins, a missing provider is a compile-time error at the plugin, naming the service; a present one meets the need", () => {
    const journal = new Journal()
    type RequirementsOf<L> = L extends Layer.Layer<infer _A, infer _E, infer R> ? R : never
    const met = City.layer({ plugins: [user(() => {}), store(journal, "1")] })
    expectTypeOf<RequirementsOf<typeof met>>().toEqualTypeOf<never>()
    // @ts-expect-error no start plugin provides this sibling service: Store
    const unmet = City.layer({ plugins: [user(() => {})] })
    expectTypeOf<City.CheckedStartPlugins<readonly [ReturnType<typeof user>]>>().toEqualTypeOf<
      readonly [City.NoStartPluginProvides<Store>]
    >()
    expectTypeOf<City.CheckedStartPlugins<readonly [ReturnType<typeof user>, ReturnType<typeof store>]>>().toEqualTypeOf<
      readonly [ReturnType<typeof user>, ReturnType<typeof store>]
    >()
    expectTypeOf(Effect.provide(City.City, met)).toEqualTypeOf<Effect.Effect<City.CityShape, City.CityBuildError>>()
    void unmet
  })

  it.scoped("city.plugins.add takes a plugin with sibling needs: its provider is checked at the call, by requires", () =>
    provideNode(Effect.gen(function*() {
      const city = yield* makeCity({})
      const added = city.plugins.add(user(() => {}))
      expectTypeOf<Effect.Effect.Context<typeof added>>().toEqualTypeOf<never>()
      const refused = yield* Effect.either(added)
      expect(Either.isLeft(refused) && refused.left).toMatchObject({ _tag: "RegistryError", reason: "PluginDependencyMissing" })
    })))
})
