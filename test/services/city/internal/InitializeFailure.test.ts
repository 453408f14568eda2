/**
 * A failed initialize as its caller meets it (docs/library.md, "Decisions where the specification
 * is silent", initialize; src/services/city/internal/initializeFailure.ts): the plugin's own typed failure
 * itself, as a Layer fails with its own error, from `city.plugins.add` and, for a `required`
 * start plugin, from `City.layer` / `City.make` / `City.layerConfig`; a failed release stays in
 * the Cause after it. What has no typed failure (a defect) stays a `PluginInitializeFailed`.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as City from "../../../../src/City.ts"
import * as Plugin from "../../../../src/services/Plugin.ts"
import { Journal, makeCity, probe, provideNode } from "../../../fixtures.ts"

class ApiKeyMissing extends Schema.TaggedError<ApiKeyMissing>()("ApiKeyMissing", { key: Schema.String }) {}

/** A plugin whose initialize acquires a resource, then fails with ApiKeyMissing. */
const weather = (journal: Journal, release: Effect.Effect<void> = Effect.void) =>
  Plugin.make({
    name: "weather",
    initialize: Effect.gen(function*() {
      yield* Effect.addFinalizer(() => Effect.zipRight(journal.push("release:weather"), release))
      return yield* Effect.fail(new ApiKeyMissing({ key: "WEATHER_KEY" }))
    })
  })

const tempRoot = Effect.flatMap(FileSystem.FileSystem, (fs) => fs.makeTempDirectoryScoped({ prefix: "city-test-" }))

describe("a plugin's typed initialize failure reaches its caller as itself", () => {
  it.scoped("add fails with it: catchTag reaches it, what initialize acquired is released, the snapshot records it", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const city = yield* makeCity()
      const key = yield* city.plugins.add(weather(journal)).pipe(
        Effect.as("added"),
        Effect.catchTag("ApiKeyMissing", (error) => Effect.succeed(error.key))
      )
      expect(key).toBe("WEATHER_KEY")
      expect(journal.events).toEqual(["release:weather"])
      const snapshot = Option.getOrThrow(yield* city.plugins.get("weather"))
      expect(snapshot.status).toBe("error")
      expect(snapshot.last_error).toContain("WEATHER_KEY")
    })))

  it.scoped("when releasing what it acquired fails too, the release's failure follows it in add's Cause", () =>
    provideNode(Effect.gen(function*() {
      const city = yield* makeCity()
      const exit = yield* Effect.exit(city.plugins.add(weather(new Journal(), Effect.dieMessage("socket stuck"))))
      if (Exit.isSuccess(exit)) return expect.unreachable("weather was added")
      expect([...Cause.failures(exit.cause)]).toEqual([new ApiKeyMissing({ key: "WEATHER_KEY" })])
      expect([...Cause.defects(exit.cause)].map((defect) => (defect as Error).message)).toEqual(["socket stuck"])
      expect(Cause.isSequentialType(exit.cause)).toBe(true)
      // The snapshot keeps both, as before.
      const snapshot = Option.getOrThrow(yield* city.plugins.get("weather"))
      expect(snapshot.last_error).toContain("WEATHER_KEY")
      expect(snapshot.last_error).toContain("socket stuck")
    })))

  it.scoped("a required start plugin's failure fails City.layer with it, caught by its tag", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const root = yield* tempRoot
      const layer = City.layer({ root, plugins: [probe("good", { journal }), { plugin: weather(journal), required: true }] })
      const outcome = yield* Effect.provide(Effect.as(City.City, "built"), layer).pipe(
        Effect.catchTag("ApiKeyMissing", (error) => Effect.succeed(`missing ${error.key}`))
      )
      expect(outcome).toBe("missing WEATHER_KEY")
      // The partial City was closed: the good plugin was disposed.
      expect(journal.count("dispose:good")).toBe(1)
    })))

  it.scoped("City.make and City.layerConfig fail the same way, the release's failure kept after it", () =>
    provideNode(Effect.gen(function*() {
      const root = yield* tempRoot
      const made = yield* Effect.exit(Effect.scoped(City.make({
        root,
        plugins: [{ plugin: weather(new Journal(), Effect.dieMessage("socket stuck")), required: true }]
      })))
      if (Exit.isSuccess(made)) return expect.unreachable("the City was built")
      expect([...Cause.failures(made.cause)]).toEqual([new ApiKeyMissing({ key: "WEATHER_KEY" })])
      expect([...Cause.defects(made.cause)].map((defect) => (defect as Error).message)).toEqual(["socket stuck"])
      const configured = yield* Effect.provide(Effect.as(City.City, "built"), City.layerConfig({
        root,
        plugins: [{ plugin: weather(new Journal()), required: true }]
      })).pipe(Effect.catchTag("ApiKeyMissing", (error) => Effect.succeed(error.key)))
      expect(configured).toBe("WEATHER_KEY")
    })))

  it.scoped("an optional start plugin's failure does not fail the layer; a defect stays PluginInitializeFailed", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const city = yield* makeCity({ plugins: [weather(journal)] })
      expect(Option.map(yield* city.plugins.get("weather"), (s) => s.status)).toEqual(Option.some("error"))
      const dying = Plugin.make({ name: "dying", initialize: Effect.dieMessage("boom") })
      const built = yield* Effect.exit(Effect.scoped(makeCity({ plugins: [{ plugin: dying, required: true }] })))
      if (Exit.isSuccess(built)) return expect.unreachable("the City was built")
      const error = Option.getOrThrow(Cause.failureOption(built.cause))
      expect(error._tag === "RegistryError" && error.reason === "PluginInitializeFailed" && error.outcome).toBe("died")
    })))
})
