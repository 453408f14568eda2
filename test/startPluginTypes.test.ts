/**
 * Start plugins with different requirements infer together: `City.layer({ plugins: [a, b] })`
 * requires what `a` and `b` require, and a program that provides only one of them does not
 * compile. The layer fails with the typed failures of its `required` start plugins, unwrapped.
 * (tsc checks this file with the tests; the assertions are types.)
 */
import { expectTypeOf, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as City from "../src/City.ts"
import type { ConfigError } from "effect/ConfigError"
import * as Plugin from "../src/services/Plugin.ts"

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
