/**
 * The handler rule as a type: a handler may require `PluginContext` and nothing else. One that
 * requires another service does not compile, and the error names the rule (a property called
 * "a handler may require only PluginContext; …" carrying the extra services).
 */
import { expect, expectTypeOf, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { action, type AnyAction, type HandlerRequiresOnlyPluginContext } from "../src/services/Contributions.ts"
import { PluginContext } from "../src/services/PluginContext.ts"

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
