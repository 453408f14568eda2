/**
 * The plugin author's types: a handler may require `PluginContext` and nothing else (one that
 * requires another service does not compile, and the error names the rule: a property called
 * "a handler may require only PluginContext; …" carrying the extra services), and a plugin's own
 * typed initialize error is what `add` fails with. An action reference's `error` and `output`
 * Schemas type what `invoke(ref, input)` fails and succeeds with, and bind the handler `implement`
 * takes.
 */
import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import * as path from "node:path"
import { compileVirtual } from "../support/compileVirtual.ts"
import * as Context from "effect/Context"
import * as Option from "effect/Option"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type {
  CityClosed,
  RegistryError,
  ActionRejected
} from "../../src/schema/Errors.ts"
import type { CityCalls } from "../../src/services/city/CityService.ts"
import type { StepView } from "../../src/services/city/Session.ts"
import * as Contributions from "../../src/services/Contributions.ts"
import { action, type AnyAction, type HandlerRequiresOnlyPluginContext } from "../../src/services/Contributions.ts"
import * as Plugin from "../../src/services/Plugin.ts"
import { PluginContext } from "../../src/services/PluginContext.ts"
import { makeCity, provideNode } from "../fixtures.ts"

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

it.scoped("add fails with a plugin's own typed initialize error itself, so catchTag reaches it", () =>
  Effect.gen(function*() {
    class QuotaExceeded extends Schema.TaggedError<QuotaExceeded>()("QuotaExceeded", { limit: Schema.Number }) {}
    const city = yield* makeCity()
    const quota = Plugin.make({ name: "quota", initialize: Effect.fail(new QuotaExceeded({ limit: 3 })) })
    const added = city.plugins.add(quota)
    expectTypeOf<Effect.Effect.Error<typeof added>>().toEqualTypeOf<
      QuotaExceeded | RegistryError | CityClosed
    >()
    const limit = yield* added.pipe(
      Effect.as(0),
      Effect.catchTag("QuotaExceeded", (error) => Effect.succeed(error.limit))
    )
    expect(limit).toBe(3)
    const snapshot = Option.getOrThrow(yield* city.plugins.get("quota"))
    expect(snapshot.status).toBe("error")
    expect(snapshot.last_error).toContain("QuotaExceeded")
    // A plugin that cannot fail adds as before; a defect (or a timeout) carries no typed failure.
    const dying = Plugin.make({ name: "dying", initialize: Effect.dieMessage("boom") })
    const adding = city.plugins.add(dying)
    expectTypeOf<Effect.Effect.Error<typeof adding>>().toEqualTypeOf<
      RegistryError | CityClosed
    >()
    const died = yield* Effect.flip(adding)
    expect(died._tag === "RegistryError" && died.reason === "PluginInitializeFailed" && died.outcome).toBe("died")
  }).pipe(provideNode))

describe("an action reference's error and output Schemas", () => {
  class UnknownUser extends Schema.TaggedError<UnknownUser>()("UnknownUser", { user: Schema.String }) {}
  class Other extends Schema.TaggedError<Other>()("Other", {}) {}
  const User = Schema.Struct({ name: Schema.String, since: Schema.DateFromString })
  const Find = Contributions.reference({ plugin: "users", action: "find", input: Schema.String, output: User, error: UnknownUser })
  type CallErrors = ActionRejected

  it("invoke's result is the output Schema's Type, its failure the action's own error beside the call's", () => {
    expectTypeOf(Find).toEqualTypeOf<Contributions.ActionRef<string, string, typeof User.Type, UnknownUser>>()
    const call = (scope: CityCalls) => scope.invoke(Find, "ada")
    expectTypeOf<Effect.Effect.Success<ReturnType<typeof call>>>().toEqualTypeOf<{ readonly name: string; readonly since: Date }>()
    expectTypeOf<Effect.Effect.Error<ReturnType<typeof call>>>().toEqualTypeOf<
      UnknownUser | ActionRejected | CallErrors | CityClosed
    >()
    // In a Step, the same.
    const inStep = (view: StepView) => view.invoke(Find, "ada")
    expectTypeOf<Effect.Effect.Error<ReturnType<typeof inStep>>>().toEqualTypeOf<UnknownUser | ActionRejected | CallErrors>()
    // The input is the input Schema's encoded form.
    // @ts-expect-error the input is a string
    const wrong = (scope: CityCalls) => scope.invoke(Find, 42)
    expect(typeof wrong).toBe("function")
  })

  it("Effect.catchTag on the action's own error compiles and takes it off the failure channel", () => {
    const caught = (scope: CityCalls) =>
      scope.invoke(Find, "ada").pipe(Effect.catchTag("UnknownUser", (e) => Effect.succeed({ name: e.user, since: new Date(0) })))
    expectTypeOf<Effect.Effect.Error<ReturnType<typeof caught>>>().toEqualTypeOf<ActionRejected | CallErrors | CityClosed>()
    // A tag the action does not declare is not on the channel.
    const stranger = (scope: CityCalls) =>
      // @ts-expect-error "Other" is not a failure of this call
      scope.invoke(Find, "ada").pipe(Effect.catchTag("Other", () => Effect.void))
    expect([typeof caught, typeof stranger]).toEqual(["function", "function"])
  })

  it("implement takes a handler failing with the declared error only; without one, any error as before", () => {
    const ok = Contributions.implement(Find, (user) => Effect.fail(new UnknownUser({ user })))
    expectTypeOf(ok).toEqualTypeOf<AnyAction>()
    // @ts-expect-error the handler may fail only with UnknownUser, the reference's error
    Contributions.implement(Find, () => Effect.fail(new Other()))
    // @ts-expect-error the handler must return the output Schema's Type (a Date, not its encoded string)
    Contributions.implement(Find, () => Effect.succeed({ name: "Grace", since: "1970-01-01" }))
    const Say = Contributions.reference<string>()({ plugin: "greeter", action: "say", input: Schema.String })
    expectTypeOf(Say).toEqualTypeOf<Contributions.ActionRef<string, string, string, never>>()
    const anyError = Contributions.implement(Say, () => Effect.fail(new Other()))
    expect([ok.error, ok.output, anyError.error]).toEqual([UnknownUser, User, undefined])
  })

  it("the curried form takes an error Schema too, and a reference without output types its result unknown", () => {
    const Say = Contributions.reference<string>()({ plugin: "greeter", action: "say", input: Schema.String, error: UnknownUser })
    expectTypeOf(Say).toEqualTypeOf<Contributions.ActionRef<string, string, string, UnknownUser>>()
    const Untyped = Contributions.reference({ plugin: "greeter", action: "say", input: Schema.String })
    expectTypeOf(Untyped).toEqualTypeOf<Contributions.ActionRef<string, string, unknown, never>>()
    // @ts-expect-error in the curried form, an output Schema must have the given result type
    Contributions.reference<string>()({ plugin: "greeter", action: "say", input: Schema.String, output: Schema.Number })
    expect(Contributions.isActionRef(Say) && Contributions.isActionRef(Untyped)).toBe(true)
  })
})

it("a handler that lets a sibling handle's SiblingUnavailable through: the compiler's message names SiblingUnavailable and the rule, not exactOptionalPropertyTypes", () => {
  // One small program, in memory, beside this file so that its imports resolve as here.
  const file = path.join(import.meta.dirname, "sibling-unhandled.virtual.ts")
  const text = [
    `import { Context, Effect, Schema } from "effect"`,
    `import * as Contributions from "../../src/services/Contributions.ts"`,
    `import * as Plugin from "../../src/services/Plugin.ts"`,
    `import * as Siblings from "../../src/services/Siblings.ts"`,
    `class UnknownAccount extends Schema.TaggedError<UnknownAccount>()("UnknownAccount", { id: Schema.String }) {}`,
    `class Accounts extends Context.Tag("app/Accounts")<Accounts, { readonly balance: (id: string) => Effect.Effect<number, UnknownAccount> }>() {}`,
    `const Balance = Contributions.reference({ plugin: "bank", action: "balance", input: Schema.String, output: Schema.Number, error: UnknownAccount })`,
    `export const teller = Plugin.make({`,
    `  name: "teller",`,
    `  requires: ["bank"],`,
    `  initialize: Effect.gen(function*() {`,
    `    const accounts = yield* Siblings.service(Accounts)`,
    `    return { actions: { balance: Contributions.implement(Balance, (id) => accounts.use((a) => a.balance(id))) } }`,
    `  })`,
    `})`
  ].join("\n")
  const messages = compileVirtual(file, text)
  expect(messages).toHaveLength(1)
  expect(messages[0]).not.toContain("exactOptionalPropertyTypes")
  const first = messages[0]!.split("\n")[0]!
  expect(first).toContain("a handler may fail only with its reference's error")
  expect(first).toMatch(/": SiblingUnavailable; \}'\.$/)
}, 120_000)
