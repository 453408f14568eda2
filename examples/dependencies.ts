/**
 * Two plugins sharing a typed service (docs/library.md, "Plugin dependencies"; the part between
 * the region markers is the guide's snippet, which the tests check): `store` provides a
 * `Store` service under its Tag, `greeter` requires `store` and reaches the service through a
 * typed handle resolved at each call.
 */
// #region readme
import { Context, Effect, Schema } from "effect"
import { City } from "effect-city"
import { Contributions, Plugin, Siblings } from "effect-city/plugin"

export class Store extends Context.Tag("example/Store")<Store, {
  readonly nameOf: (id: string) => Effect.Effect<string>
}>() {}

// `provides`: its initialize must return the service.
export const store = Plugin.make({
  name: "store",
  provides: [Store],
  initialize: Effect.succeed({ services: Context.make(Store, { nameOf: (id) => Effect.succeed(id === "g" ? "Grace" : id) }) })
})

// Started after `store`, disposed before it; each call resolves the current provider.
export const greeter = Plugin.make({
  name: "greeter",
  requires: ["store"],
  initialize: Effect.gen(function*() {
    const names = yield* Siblings.service(Store)
    const greet = Contributions.action({
      input: Schema.Struct({ id: Schema.String }),
      // A handle's call fails with SiblingUnavailable when no ready plugin provides Store then.
      handler: ({ id }) =>
        names.use((s) => Effect.map(s.nameOf(id), (name) => `Hello ${name}`)).pipe(
          Effect.catchTag("SiblingUnavailable", () => Effect.succeed(`Hello ${id}`))
        )
    })
    return { actions: { greet } }
  })
})

export const main = (root: string) =>
  Effect.flatMap(City.City, (city) =>
    city.calls({ agent: { id: "ada" }, workspace: { id: "notes", path: root } }).invoke("greeter", "greet", { id: "g" })
  ).pipe(Effect.provide(City.layer({ root, plugins: [greeter, store] })))
// #endregion readme
