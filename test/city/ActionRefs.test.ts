/**
 * Typed actions (docs/library.md, "Plugin dependencies"; Contributions.reference): an action
 * declared by reference is implemented by its plugin and called through the reference, the input
 * and the result typed; the string form stays for plugins called by name.
 * (tsc checks this file with the tests: the `@ts-expect-error` lines are assertions too.)
 */
import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Contributions from "../../src/services/Contributions.ts"
import * as Plugin from "../../src/services/Plugin.ts"
import { makeCity, provideNode } from "../fixtures.ts"

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
      const scope = city.scope(caller)
      const once = scope.invoke(Say, { name: "Grace" })
      expectTypeOf(once).toMatchTypeOf<Effect.Effect<string, unknown>>()
      expect(yield* once).toBe("Hello Grace")
      // The encoded input: `times` is a string the Schema decodes.
      expect(yield* scope.invoke(Say, { name: "Ada", times: "2" })).toBe("Hello AdaHello Ada")
      // @ts-expect-error `name` must be a string
      const wrong = scope.invoke(Say, { name: 1 })
      // At run time the Schema still decides (a caller that casts its way past the compiler).
      const refused = yield* Effect.either(wrong)
      expect(Either.isLeft(refused) && refused.left._tag).toBe("ActionInputRejected")
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
})
