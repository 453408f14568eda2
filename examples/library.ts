/**
 * The README's library example (the part between the region markers is the README's snippet,
 * which the tests check): a plugin with a resource, an action and system text, started
 * with `City.layer`, used from a Session's Turn, and closed with the layer's Scope.
 */
// #region readme
import { Effect, Schema } from "effect"
import { City } from "effect-city"
import { Contributions, Plugin, PluginContext } from "effect-city/plugin"

// A plugin: what initialize acquires is released at dispose.
export const greeter = Plugin.make({
  name: "greeter",
  version: "1.0.0",
  initialize: Effect.gen(function*() {
    const greetings = yield* Effect.acquireRelease(
      Effect.succeed(new Map<string, number>()),
      (map) => Effect.log(`greeter: served ${map.size} agent(s)`)
    )
    return {
      actions: {
        greet: Contributions.action({
          input: Schema.Struct({ name: Schema.String }),
          handler: ({ name }) =>
            Effect.gen(function*() {
              const ctx = yield* PluginContext.PluginContext
              greetings.set(ctx.agent.id, (greetings.get(ctx.agent.id) ?? 0) + 1)
              return `Hello ${name}, from ${ctx.agent.id} in ${ctx.workspace.id}`
            })
        })
      },
      system: () => Effect.succeed("Greet people by name.")
    }
  })
})

// A program: one Agent, one Workspace, one Session, a Turn of two Steps.
export const program = Effect.gen(function*() {
  const city = yield* City.City
  const agent = yield* city.agents.add({ id: "ada" })
  const workspace = yield* city.workspaces.add({ id: "notes", path: process.cwd() })
  const session = yield* agent.sessions.create({ workspace })
  return yield* session.turn((turn) =>
    Effect.gen(function*() {
      const system = yield* turn.step((view) => view.system())
      const reply = yield* turn.step((view) => view.invoke("greeter", "greet", { name: "Grace" }))
      return { system, reply }
    })
  )
})

// The City as a Layer (the capability services, for provisioning, are CapabilityServices.layer).
export const main = (root: string) => program.pipe(Effect.provide(City.layer({ root, plugins: [greeter] })))
// #endregion readme
