/**
 * A plugin lost on its own starts again with backoff (docs/plugin-loader.md, "Liveness";
 * src/services/city/internal/pluginRecovery.ts): 1 s, 2 s, 4 s … after each crash; after 5 crashes within
 * 10 minutes it stays `error` until it is added again; an explicit add or remove forgets its
 * crashes. The plugin here is lost through its PluginLost service, as an isolated plugin's worker
 * reports it; time is the TestClock's.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { PluginLost } from "../../../../src/services/city/internal/pluginLifecycle.ts"
import * as Plugin from "../../../../src/services/Plugin.ts"
import { makeCity, provideNode } from "../../../fixtures.ts"

/** A plugin that hands out its PluginLost at each initialize, to be lost at the test's word. */
const losable = (starts: Array<PluginLost["Type"]>) =>
  Plugin.make({
    name: "fragile",
    initialize: Effect.gen(function*() {
      const lost = yield* Effect.serviceOption(PluginLost)
      if (Option.isSome(lost)) starts.push(lost.value)
      return {}
    })
  })

/** The snapshot's status and last error. */
const stateOf = (city: Effect.Effect.Success<ReturnType<typeof makeCity>>) =>
  Effect.map(city.plugins.get("fragile"), Option.map((s) => ({ status: s.status, last_error: s.last_error })))

/** Lets the registry's fibers run what the clock made due. */
const settle = Effect.repeatN(Effect.yieldNow(), 50)

describe("PluginRecovery", () => {
  it.scoped("a lost plugin starts again after 1 s, 2 s, 4 s, 8 s; the fifth crash within 10 minutes leaves it `error` until it is added again", () =>
    provideNode(Effect.gen(function*() {
      const city = yield* makeCity()
      const starts: Array<PluginLost["Type"]> = []
      const plugin = losable(starts)
      yield* city.plugins.add(plugin)
      for (const [crash, wait] of [[1, 1], [2, 2], [3, 4], [4, 8]] as const) {
        yield* starts.at(-1)!.lost(`crash ${crash}`, crash === 2 ? "unresponsive" : "error")
        yield* settle
        expect(yield* stateOf(city)).toEqual(Option.some({ status: crash === 2 ? "unresponsive" : "error", last_error: `crash ${crash}` }))
        yield* TestClock.adjust(`${wait * 1000 - 1} millis`)
        yield* settle
        expect(starts.length).toBe(crash)
        yield* TestClock.adjust("1 millis")
        yield* settle
        expect(starts.length).toBe(crash + 1)
        expect(Option.map(yield* stateOf(city), (s) => s.status)).toEqual(Option.some("ready"))
      }
      yield* starts.at(-1)!.lost("crash 5")
      yield* settle
      expect(yield* stateOf(city)).toEqual(Option.some({ status: "error", last_error: "crash 5 (5 crashes within 10m: not started again until it is added again)" }))
      yield* TestClock.adjust("10 minutes")
      yield* settle
      expect(starts.length).toBe(5)
      // Added again by someone (a new generation, say): the count starts over.
      yield* city.plugins.add(plugin)
      expect(starts.length).toBe(6)
      yield* starts.at(-1)!.lost("crash 1 again")
      yield* settle
      yield* TestClock.adjust("1 second")
      yield* settle
      expect(starts.length).toBe(7)
    })))

  it.scoped("a remove while the restart waits cancels it; crashes older than 10 minutes are not counted", () =>
    provideNode(Effect.gen(function*() {
      const city = yield* makeCity()
      const starts: Array<PluginLost["Type"]> = []
      const plugin = losable(starts)
      yield* city.plugins.add(plugin)
      yield* starts.at(-1)!.lost("gone")
      yield* settle
      yield* city.plugins.remove("fragile")
      yield* TestClock.adjust("1 minute")
      yield* settle
      expect(starts.length).toBe(1)
      expect(yield* stateOf(city)).toEqual(Option.none())
      // Four crashes, then eleven minutes of quiet: the next crash is the first of a new window.
      yield* city.plugins.add(plugin)
      for (let i = 0; i < 4; i++) {
        yield* starts.at(-1)!.lost(`crash ${i + 1}`)
        yield* settle
        yield* TestClock.adjust("1 minute")
        yield* settle
      }
      expect(starts.length).toBe(6)
      yield* TestClock.adjust("11 minutes")
      yield* starts.at(-1)!.lost("after the quiet")
      yield* settle
      yield* TestClock.adjust("1 second")
      yield* settle
      expect(starts.length).toBe(7)
      expect(Option.map(yield* stateOf(city), (s) => s.status)).toEqual(Option.some("ready"))
    })))

  it.effect("a lost plugin that is not ready (closing, removed) is not started again", () =>
    provideNode(Effect.gen(function*() {
      const starts: Array<PluginLost["Type"]> = []
      yield* Effect.scoped(Effect.gen(function*() {
        const city = yield* makeCity()
        yield* city.plugins.add(losable(starts))
        yield* city.close
      }))
      yield* starts[0]!.lost("after close")
      yield* TestClock.adjust("1 minute")
      expect(starts.length).toBe(1)
    })))
})
