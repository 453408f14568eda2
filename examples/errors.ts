/**
 * Catching a failure of the library (docs/library.md, "Errors"; the part between the region
 * markers is the guide's snippet, which the tests check and run): a family's tag, then its reason.
 */
// #region readme
import { Effect } from "effect"
import { City } from "effect-city"
import { Plugin } from "effect-city/plugin"

const notes = Plugin.make({ name: "notes", initialize: Effect.succeed({}) })

// `RegistryError` is every failure of add, remove and the start; `reason` says which. Its
// `name` is the reason, so a message or a log line reads as it did before the family.
export const addTwice = (root: string) =>
  Effect.flatMap(City.City, (city) =>
    city.plugins.add(notes).pipe(
      Effect.as("added"),
      Effect.catchTag("RegistryError", (error) =>
        error.reason === "PluginAlreadyRegistered"
          ? Effect.succeed(`${error.name}: ${error.message}`)
          : Effect.fail(error))
    )).pipe(Effect.provide(City.layer({ root, plugins: [notes] })))

// A call by name: `ActionRejected`, whose reasons are the call's endings.
export const callMissing = (root: string) =>
  Effect.flatMap(City.City, (city) =>
    city.calls({ agent: { id: "ada" }, workspace: { id: "w", path: root } }).invoke("nobody", "greet", {}).pipe(
      Effect.catchTag("ActionRejected", (error) =>
        error.reason === "PluginNotFound" ? Effect.succeed(`no plugin ${error.plugin}`) : Effect.fail(error))
    )).pipe(Effect.provide(City.layer({ root })))
// #endregion readme
