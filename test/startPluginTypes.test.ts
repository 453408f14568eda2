/**
 * Start plugins with different requirements infer together: `City.layer({ plugins: [a, b] })`
 * requires what `a` and `b` require, and a program that provides only one of them does not
 * compile. (tsc checks this file with the tests; the assertions are types.)
 */
import { expectTypeOf, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as City from "../src/City.ts"
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
