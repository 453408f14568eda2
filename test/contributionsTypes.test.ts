/**
 * The plugin author's types: a handler may require `PluginContext` and nothing else (one that
 * requires another service does not compile, and the error names the rule: a property called
 * "a handler may require only PluginContext; …" carrying the extra services), and a plugin's own
 * typed initialize error comes back typed from `add`.
 */
import { expect, expectTypeOf, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Option from "effect/Option"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { action, type AnyAction, type HandlerRequiresOnlyPluginContext } from "../src/services/Contributions.ts"
import * as Plugin from "../src/services/Plugin.ts"
import { PluginContext } from "../src/services/PluginContext.ts"
import { makeCity, provideNode } from "./fixtures.ts"

class Database extends Context.Tag("test/Database")<Database, { readonly query: (q: string) => string }>() {}

it("a handler requiring only PluginContext (or nothing) is an action", () => {
  const echo = action({ input: Schema.String, handler: (text) => Effect.succeed(text) })
  const whoAsks = action({ input: Schema.Void, handler: () => Effect.map(PluginContext, (ctx) => ctx.agent.id) })
  expectTypeOf(echo).toEqualTypeOf<AnyAction>()
  expectTypeOf(whoAsks).toEqualTypeOf<AnyAction>()
  expect(typeof echo.handler).toBe("function")
})

it("a handler requiring another service does not compile, and the rule is in the error", () => {
  expectTypeOf<HandlerRequiresOnlyPluginContext<PluginContext>>().toEqualTypeOf<unknown>()
  expectTypeOf<HandlerRequiresOnlyPluginContext<PluginContext | Database>>().toEqualTypeOf<{
    readonly "a handler may require only PluginContext; provide these services inside it": Database
  }>()
  const broken = () =>
    // @ts-expect-error a handler may require only PluginContext; provide Database inside it
    action({ input: Schema.String, handler: (q) => Effect.map(Database, (db) => db.query(q)) })
  expect(typeof broken).toBe("function")
})

it.scoped("a plugin's own typed initialize error is reachable, typed, from add's PluginInitializeFailed", () =>
  Effect.gen(function*() {
    class QuotaExceeded extends Schema.TaggedError<QuotaExceeded>()("QuotaExceeded", { limit: Schema.Number }) {}
    const city = yield* makeCity()
    const quota = Plugin.make({ name: "quota", initialize: Effect.fail(new QuotaExceeded({ limit: 3 })) })
    const error = yield* Effect.flip(city.plugins.add(quota))
    if (error._tag !== "PluginInitializeFailed") return expect.unreachable(error._tag)
    expectTypeOf(error.failure).toEqualTypeOf<Option.Option<QuotaExceeded>>()
    expect(Option.map(error.failure, (f) => f.limit)).toEqual(Option.some(3))
    // A timeout or a defect carries no typed failure.
    const dying = Plugin.make({ name: "dying", initialize: Effect.dieMessage("boom") })
    const died = yield* Effect.flip(city.plugins.add(dying))
    expect(died._tag === "PluginInitializeFailed" && Option.isNone(died.failure)).toBe(true)
  }).pipe(provideNode))
