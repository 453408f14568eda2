/**
 * The start plugins (src/services/city/StartPlugins.ts). Start plugins with different requirements infer together: `City.layer({ plugins: [a, b] })`
 * requires what `a` and `b` require, and a program that provides only one of them does not
 * compile. The layer fails with the typed failures of its `required` start plugins, unwrapped. A
 * start plugin that needs a sibling service no start plugin provides does not compile, and the
 * compiler's message names the service in its first line. (tsc checks this file with the tests;
 * most assertions are types.) The list is checked before anything starts: two names that
 * differ only in case are one name (the plugin-name rule, src/schema/PluginName.ts).
 */
import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as path from "node:path"
import { compileVirtual } from "../../support/compileVirtual.ts"
import * as City from "../../../src/City.ts"
import type { ConfigError } from "effect/ConfigError"
import * as Plugin from "../../../src/services/Plugin.ts"
import * as Siblings from "../../../src/services/Siblings.ts"
import * as StartPlugins from "../../../src/services/city/StartPlugins.ts"
import { Journal, probe } from "../../fixtures.ts"

class Greeting extends Context.Tag("test/Greeting")<Greeting, { readonly hello: string }>() {}
class Ticker extends Context.Tag("test/Ticker")<Ticker, { readonly now: number }>() {}
const greeter = Plugin.make({ name: "greeter", initialize: Effect.map(Greeting, () => ({})) })
const ticker = Plugin.make({ name: "ticker", initialize: Effect.map(Ticker, () => ({})) })

type RequirementsOf<L> = L extends Layer.Layer<infer _A, infer _E, infer R> ? R : never

it("the layer requires the union of its start plugins' requirements, required or not", () => {
  const both = City.layer({ plugins: [greeter, { plugin: ticker, required: true }] })
  expectTypeOf<RequirementsOf<typeof both>>().toEqualTypeOf<Greeting | Ticker>()
  const none = City.layer({ root: "/tmp/city" })
  expectTypeOf<RequirementsOf<typeof none>>().toEqualTypeOf<never>()
  const made = City.make({ plugins: [greeter, ticker] })
  expectTypeOf<Effect.Effect.Context<typeof made>>().toEqualTypeOf<import("effect/Scope").Scope | Greeting | Ticker>()
})

it("a program providing only one plugin's requirement does not compile", () => {
  const program = Effect.provide(City.City, City.layer({ plugins: [greeter, ticker] }))
  const onlyGreeting = Effect.provideService(program, Greeting, { hello: "hi" })
  // @ts-expect-error Ticker is still required
  const runnable: Effect.Effect<City.CityShape, unknown, never> = onlyGreeting
  expectTypeOf(runnable).not.toBeNever()
})

class ApiKeyMissing extends Schema.TaggedError<ApiKeyMissing>()("ApiKeyMissing", { key: Schema.String }) {}
class QuotaExceeded extends Schema.TaggedError<QuotaExceeded>()("QuotaExceeded", { limit: Schema.Number }) {}
const weather = Plugin.make({ name: "weather", initialize: Effect.fail(new ApiKeyMissing({ key: "WEATHER_KEY" })) })
const quota = Plugin.make({ name: "quota", initialize: Effect.fail(new QuotaExceeded({ limit: 3 })) })

type ErrorOf<L> = L extends Layer.Layer<infer _A, infer E, infer _R> ? E : never

it("the layer fails with the typed failures of its required start plugins, not of its optional ones", () => {
  const layer = City.layer({ plugins: [{ plugin: weather, required: true }, quota] })
  expectTypeOf<ErrorOf<typeof layer>>().toEqualTypeOf<City.CityBuildError | ApiKeyMissing>()
  const made = City.make({ plugins: [quota, { plugin: weather, required: true }, { plugin: quota, required: false }] })
  expectTypeOf<Effect.Effect.Error<typeof made>>().toEqualTypeOf<City.CityBuildError | ApiKeyMissing>()
  const configured = City.layerConfig({ plugins: [{ plugin: quota, required: true }] })
  expectTypeOf<ErrorOf<typeof configured>>().toEqualTypeOf<City.CityBuildError | QuotaExceeded | ConfigError>()
  // `required` known only as a boolean counts as required.
  const maybe: boolean = Math.random() > 2
  const dynamic = City.layer({ plugins: [{ plugin: quota, required: maybe }] })
  expectTypeOf<ErrorOf<typeof dynamic>>().toEqualTypeOf<City.CityBuildError | QuotaExceeded>()
  // So `catchTag` reaches a required plugin's failure through the layer.
  const program = Effect.provide(City.City, layer).pipe(
    Effect.catchTag("ApiKeyMissing", (error) => Effect.fail(`set ${error.key}`))
  )
  expectTypeOf<Effect.Effect.Error<typeof program>>().toEqualTypeOf<City.CityBuildError | string>()
})

class Users extends Context.Tag("test/Users")<Users, { readonly find: (id: string) => Effect.Effect<string> }>() {}
const usersClient = Plugin.make({
  name: "users-client",
  initialize: Effect.map(Siblings.service(Users), () => ({}))
})

const usersProvider = Plugin.make({
  name: "users",
  provides: [Users],
  initialize: Effect.succeed({ services: Context.make(Users, { find: (id) => Effect.succeed(id) }) })
})

it("a start plugin needing a sibling service that no start plugin provides does not compile", () => {
  // @ts-expect-error no start plugin provides this sibling service: Users
  const unmet = City.layer({ root: "/tmp/city", plugins: [usersClient] })
  expectTypeOf<City.CheckedStartPlugins<readonly [typeof usersClient]>>().toEqualTypeOf<
    readonly [City.NoStartPluginProvides<Users>]
  >()
  // Among several needs and other requirements, only the unmet one is named; `any` names none.
  class Store extends Context.Tag("test/Store")<Store, { readonly get: Effect.Effect<string> }>() {}
  const store = Plugin.make({ name: "store", provides: [Store], initialize: Effect.succeed({ services: Context.make(Store, { get: Effect.succeed("") }) }) })
  const both = Plugin.make({
    name: "both",
    initialize: Effect.zipRight(Effect.zip(Siblings.service(Users), Siblings.service(Store)), Effect.map(Greeting, () => ({})))
  })
  expectTypeOf<City.CheckedStartPlugins<readonly [typeof both, typeof store]>>().toEqualTypeOf<
    readonly [City.NoStartPluginProvides<Users>, typeof store]
  >()
  expectTypeOf<City.CheckedStartPlugins<readonly [Plugin.Plugin<never, any>]>>().toEqualTypeOf<readonly [Plugin.Plugin<never, any>]>()
  const met = City.layer({ plugins: [{ plugin: both, required: true }, store, usersProvider] })
  expectTypeOf<RequirementsOf<typeof met>>().toEqualTypeOf<Greeting>()
  expect(unmet).toBeDefined()
})

it("the compiler's message for a missing sibling provider names the service in its first line, briefly", () => {
  // One small program, in memory, beside this file so that its import resolves as here.
  const file = path.join(import.meta.dirname, "missing-provider.virtual.ts")
  const text = [
    `import { Context, Effect } from "effect"`,
    `import * as City from "../../../src/City.ts"`,
    `import * as Plugin from "../../../src/services/Plugin.ts"`,
    `import * as Siblings from "../../../src/services/Siblings.ts"`,
    `class Users extends Context.Tag("app/Users")<Users, { readonly find: (id: string) => Effect.Effect<string> }>() {}`,
    `const greeter = Plugin.make({ name: "greeter", initialize: Effect.map(Siblings.service(Users), () => ({})) })`,
    `const program = Effect.flatMap(City.City, (city) => city.plugins.snapshots)`,
    `export const run = () => Effect.runPromise(program.pipe(Effect.provide(City.layer({ root: "/tmp/x", plugins: [greeter] }))))`
  ].join("\n")
  const messages = compileVirtual(file, text)
  expect(messages).toHaveLength(1)
  const first = messages[0]!.split("\n")[0]!
  expect(first).toContain("no start plugin provides this sibling service")
  expect(first).toContain("NoStartPluginProvides<Users>")
  expect(first.length).toBeLessThan(200)
}, 120_000)

describe("the start list's names differ only in case: one folder, so one plugin", () => {
  it.effect("a start list with both \"foo\" and \"Foo\" is refused before anything starts", () =>
    Effect.gen(function*() {
      const journal = new Journal()
      const error = yield* Effect.flip(StartPlugins.check([probe("foo", { journal }), probe("Foo", { journal })]))
      expect(error).toMatchObject({ _tag: "RegistryError", reason: "PluginAlreadyRegistered", plugin: "Foo", registered: "foo" })
      expect(journal.events).toEqual([])
    }))

  it.effect("a start plugin requiring another case of a listed name misses it", () =>
    Effect.gen(function*() {
      const journal = new Journal()
      const needy = { ...probe("needy", { journal }), requires: [{ name: "Foo", optional: false }] }
      const error = yield* Effect.flip(StartPlugins.check([probe("foo", { journal }), needy]))
      expect(error).toMatchObject({ _tag: "RegistryError", reason: "PluginDependencyMissing", plugin: "needy", missing: ["Foo"] })
    }))
})
