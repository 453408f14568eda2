/**
 * Typed actions (docs/library.md, "Plugin dependencies"; Contributions.reference): an action
 * declared by reference is implemented by its plugin and called through the reference, the input
 * and the result typed; the string form stays for plugins called by name. A reference with an
 * `error` Schema hands the action's own failure to the caller as itself, and one with an `output`
 * Schema checks the result (ActionOutputRejected).
 * (tsc checks this file with the tests: the `@ts-expect-error` lines are assertions too.)
 */
import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Contributions from "../../../../src/services/Contributions.ts"
import * as Plugin from "../../../../src/services/Plugin.ts"
import { makeCity, provideNode } from "../../../fixtures.ts"

// What the greeter's module exports beside its plugin.
const Say = Contributions.reference<string>()({
  plugin: "greeter",
  action: "say",
  input: Schema.Struct({ name: Schema.String, times: Schema.optional(Schema.NumberFromString) })
})

const greeter = Plugin.make({
  name: "greeter",
  initialize: Effect.succeed({
    actions: {
      [Say.action]: Contributions.implement(Say, ({ name, times }) => Effect.succeed(`Hello ${name}`.repeat(times ?? 1)))
    }
  })
})

const caller = { agent: { id: "ada" }, workspace: { id: "notes", path: "/tmp" } }

describe("typed actions", () => {
  it.scoped("invoke by reference: the input is the Schema's encoded form, the result is the declared type", () =>
    provideNode(Effect.gen(function*() {
      const city = yield* makeCity({ plugins: [greeter] })
      const scope = city.calls(caller)
      const once = scope.invoke(Say, { name: "Grace" })
      expectTypeOf(once).toMatchTypeOf<Effect.Effect<string, unknown>>()
      expect(yield* once).toBe("Hello Grace")
      // The encoded input: `times` is a string the Schema decodes.
      expect(yield* scope.invoke(Say, { name: "Ada", times: "2" })).toBe("Hello AdaHello Ada")
      // @ts-expect-error `name` must be a string
      const wrong = scope.invoke(Say, { name: 1 })
      // At run time the Schema still decides (a caller that casts its way past the compiler).
      const refused = yield* Effect.either(wrong)
      expect(Either.isLeft(refused) && refused.left).toMatchObject({ _tag: "ActionRejected", reason: "ActionInputRejected" })
      // The string form stays, untyped.
      const byName = scope.invoke("greeter", "say", { name: "Grace" })
      expectTypeOf(byName).toMatchTypeOf<Effect.Effect<unknown, unknown>>()
      expect(yield* byName).toBe("Hello Grace")
      // Inside a Step too.
      const agent = yield* city.agents.add({ id: "ada" })
      const workspace = yield* city.workspaces.add({ id: "notes", path: "/tmp" })
      const session = yield* agent.sessions.create({ workspace })
      const reply = yield* session.turn((turn) => turn.step((view) => view.invoke(Say, { name: "Lin" })))
      expectTypeOf(reply).toEqualTypeOf<string>()
      expect(reply).toBe("Hello Lin")
    })))

  it("implement ties the handler to the declared result", () => {
    // @ts-expect-error the handler must return a string
    Contributions.implement(Say, () => Effect.succeed(42))
    expect(Contributions.isActionRef(Say)).toBe(true)
    expect(Contributions.isActionRef({ plugin: "greeter", action: "say" })).toBe(false)
  })

  describe("a reference with error and output Schemas", () => {
    class UnknownUser extends Schema.TaggedError<UnknownUser>()("UnknownUser", { user: Schema.String }) {}
    const User = Schema.Struct({ name: Schema.NonEmptyString, since: Schema.DateFromString })
    // The plain form: the result's type is the output Schema's Type, the failure's the error Schema's.
    const Find = Contributions.reference({ plugin: "users", action: "find", input: Schema.String, output: User, error: UnknownUser })

    const users = Plugin.make({
      name: "users",
      initialize: Effect.succeed({
        actions: {
          [Find.action]: Contributions.implement(Find, (user) => {
            switch (user) {
              case "grace":
                return Effect.succeed({ name: "Grace", since: new Date(0) })
              case "nameless":
                // The Type says string; the Schema says non-empty.
                return Effect.succeed({ name: "", since: new Date(0) })
              case "broken":
                // A failure the error Schema does not accept (past the compiler), and a defect.
                return Effect.fail(new Error("disk on fire") as unknown as UnknownUser)
              case "dying":
                return Effect.die("boom")
              default:
                return Effect.fail(new UnknownUser({ user }))
            }
          })
        }
      })
    })

    it.scoped("the handler's declared failure reaches the caller as itself: Effect.catchTag catches it", () =>
      provideNode(Effect.gen(function*() {
        const city = yield* makeCity({ plugins: [users] })
        const scope = city.calls(caller)
        const failure = yield* Effect.flip(scope.invoke(Find, "ada"))
        expect(failure).toBeInstanceOf(UnknownUser)
        expect(failure).toMatchObject({ _tag: "UnknownUser", user: "ada" })
        const caught = yield* scope.invoke(Find, "ada").pipe(
          Effect.map((user) => user.name),
          Effect.catchTag("UnknownUser", (e) => Effect.succeed(`no user ${e.user}`))
        )
        expect(caught).toBe("no user ada")
        // Inside a Step too.
        const agent = yield* city.agents.add({ id: "ada" })
        const workspace = yield* city.workspaces.add({ id: "notes", path: "/tmp" })
        const session = yield* agent.sessions.create({ workspace })
        const inStep = yield* session.turn((turn) =>
          turn.step((view) => view.invoke(Find, "lin").pipe(Effect.catchTag("UnknownUser", (e) => Effect.succeed(e.user))))
        )
        expect(inStep).toBe("lin")
        // By name the action's failure stays ActionFailed, as it always was.
        const byName = yield* Effect.flip(scope.invoke("users", "find", "ada"))
        expect(byName).toMatchObject({ _tag: "ActionRejected", reason: "ActionFailed" })
      })))

    it.scoped("a failure the error Schema does not accept, and a defect, stay ActionFailed", () =>
      provideNode(Effect.gen(function*() {
        const city = yield* makeCity({ plugins: [users] })
        const scope = city.calls(caller)
        const broken = yield* Effect.flip(scope.invoke(Find, "broken"))
        if (broken._tag !== "ActionRejected" || broken.reason !== "ActionFailed" || broken.cause === undefined) return expect.unreachable(broken._tag)
        expect(Option.map(Cause.failureOption(broken.cause), (e) => (e as Error).message)).toEqual(Option.some("disk on fire"))
        const dying = yield* Effect.flip(scope.invoke(Find, "dying"))
        if (dying._tag !== "ActionRejected" || dying.reason !== "ActionFailed" || dying.cause === undefined) return expect.unreachable(dying._tag)
        expect(Cause.isDie(dying.cause)).toBe(true)
      })))

    it.scoped("a result the output Schema refuses fails with ActionOutputRejected, naming the field and the rule", () =>
      provideNode(Effect.gen(function*() {
        const city = yield* makeCity({ plugins: [users] })
        const rejected = yield* Effect.flip(city.calls(caller).invoke(Find, "nameless"))
        if (rejected._tag !== "ActionRejected" || rejected.reason !== "ActionOutputRejected") return expect.unreachable(rejected._tag)
        expect(rejected.plugin).toBe("users")
        expect(rejected.action).toBe("find")
        expect(rejected.issue).toMatch(/^name: /)
        expect(rejected.message).toMatch(/^Output of users\/find rejected by its output Schema: name: .*\S/)
        expect(rejected.message).not.toContain("\n")
      })))

    it.scoped("a result that matches is the output Schema's Type: the handler's Date arrives as a Date", () =>
      provideNode(Effect.gen(function*() {
        const city = yield* makeCity({ plugins: [users] })
        const grace = yield* city.calls(caller).invoke(Find, "grace")
        expect(grace).toEqual({ name: "Grace", since: new Date(0) })
        expect(grace.since).toBeInstanceOf(Date)
      })))

    it.scoped("a reference without an error Schema keeps every failure ActionFailed", () =>
      provideNode(Effect.gen(function*() {
        const Loose = Contributions.reference<string>()({ plugin: "users", action: "find", input: Schema.String })
        const city = yield* makeCity({ plugins: [users] })
        const failed = yield* Effect.flip(city.calls(caller).invoke(Loose, "ada"))
        expect(failed).toMatchObject({ _tag: "ActionRejected", reason: "ActionFailed" })
      })))
  })
})
