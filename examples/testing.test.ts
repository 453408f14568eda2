/**
 * The README's test example (the part between the region markers is the README's snippet,
 * checked against the README by the repository's tests, which also run this file): the greeter of
 * examples/library.ts tested alone with `PluginHarness`, and the program with a `CityTest` City.
 */
// #region readme
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Option } from "effect"
import { CityTest, PluginHarness } from "effect-city/testing"
import { greeter, program } from "./library.js"

describe("greeter", () => {
  // The plugin alone, called as a City calls it, for a made-up caller; disposed here or when the Scope closes.
  it.scoped("greets for the calling agent, and releases what it acquired", () =>
    Effect.gen(function*() {
      const harness = yield* PluginHarness.make(greeter, { context: { agent: { id: "ada" } } })
      expect(yield* harness.invoke("greet", { name: "Grace" })).toBe("Hello Grace, from ada in test-workspace")
      expect(yield* harness.system()).toEqual(Option.some("Greet people by name."))
      expect(yield* Effect.flip(harness.invoke("greet", { name: 42 }))).toMatchObject({ _tag: "ActionRejected", reason: "ActionInputRejected" })
      yield* harness.dispose
      expect(yield* harness.disposal).toEqual(Option.some(Exit.void))
    }))

  // The whole program on a test City: a temporary state root (never ~/.city), 500 ms deadlines.
  it.effect("answers in a Turn of two Steps", () =>
    Effect.gen(function*() {
      const { reply, system } = yield* program.pipe(Effect.provide(CityTest.layer({ plugins: [greeter] })))
      expect(system).toEqual([{ name: "greeter", content: "Greet people by name." }])
      expect(reply).toBe("Hello Grace, from ada in notes")
    }))
})
// #endregion readme
