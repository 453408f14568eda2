/**
 * The test City (src/layers/CityTest.ts): `City.layer` on a temporary root removed when its Scope
 * closes, never `$HOME` (checked with `HOME` pointed at a fresh folder, against `City.layer`
 * without a root, which does make `~/.city` there), with 500 ms deadlines, and the start plugins'
 * requirements inferred as `City.layer` infers them.
 */
import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { City } from "../../src/index.ts"
import { Contributions, Plugin, PluginLifecycleContext } from "../../src/plugin.ts"
import { CityTest, PluginHarness } from "../../src/testing.ts"

/** A plugin that reads its storage path (so the City makes the folder) and tells it. */
const keeper = (seen: Array<string>) =>
  Plugin.make({
    name: "keeper",
    initialize: Effect.gen(function*() {
      const ctx = yield* PluginLifecycleContext.PluginLifecycleContext
      seen.push(ctx.storage.path)
      return {
        actions: {
          where: Contributions.action({ input: Schema.Struct({}), handler: () => Effect.succeed(ctx.storage.path) })
        }
      }
    })
  })

const caller = { agent: { id: "ada" }, workspace: { id: "w", path: tmpdir() } }

/** `HOME` is a fresh folder and `CITY_ROOT` unset while `effect` runs; both restored after. */
const withHome = <A, E, R>(effect: (home: string) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const saved = { HOME: process.env["HOME"], CITY_ROOT: process.env["CITY_ROOT"] }
      const home = mkdtempSync(join(tmpdir(), "city-home-"))
      process.env["HOME"] = home
      delete process.env["CITY_ROOT"]
      return { saved, home }
    }),
    ({ home }) => effect(home),
    ({ home, saved }) =>
      Effect.sync(() => {
        for (const [key, value] of Object.entries(saved)) {
          if (value === undefined) delete process.env[key]
          else process.env[key] = value
        }
        rmSync(home, { recursive: true, force: true })
      })
  )

describe("CityTest", () => {
  it.effect("a test City never touches $HOME: its root is a temporary folder, removed when the layer's Scope closes", () =>
    withHome((home) =>
      Effect.gen(function*() {
        // The check can fail: City.layer without a root makes ~/.city (here, under the fake HOME).
        const seenByCity: Array<string> = []
        yield* Effect.provide(Effect.void, City.layer({ plugins: [keeper(seenByCity)] }))
        expect(seenByCity[0]).toBe(join(home, ".city", "data", "keeper"))
        expect(existsSync(join(home, ".city"))).toBe(true)
        rmSync(join(home, ".city"), { recursive: true })

        const seen: Array<string> = []
        const where = yield* Effect.flatMap(City.City, (city) => city.calls(caller).invoke("keeper", "where", {})).pipe(
          Effect.tap((path) => Effect.sync(() => expect(existsSync(String(path))).toBe(true))),
          Effect.provide(CityTest.layer({ plugins: [keeper(seen)] }))
        )
        expect(String(where).startsWith(join(tmpdir(), "city-test-"))).toBe(true)
        expect(where).toBe(seen[0])
        // Closed: the temporary root is gone, and nothing was made under HOME.
        expect(existsSync(String(where))).toBe(false)
        expect(readdirSync(home)).toEqual([])

        // The plugin harness is on a temporary root too.
        const harnessed: Array<string> = []
        yield* Effect.scoped(Effect.flatMap(PluginHarness.make(keeper(harnessed)), (h) => h.invoke("where", {})))
        expect(harnessed[0]!.startsWith(join(tmpdir(), "city-test-"))).toBe(true)
        expect(readdirSync(home)).toEqual([])
      })
    ))

  it.scoped("a plugin added, invoked and removed, then the City closed: the City's own behaviour", () =>
    Effect.gen(function*() {
      const released: Array<string> = []
      const counter = Plugin.make({
        name: "counter",
        initialize: Effect.gen(function*() {
          let n = 0
          yield* Effect.addFinalizer(() => Effect.sync(() => void released.push(`counter at ${n}`)))
          return {
            actions: { inc: Contributions.action({ input: Schema.Struct({}), handler: () => Effect.sync(() => ++n) }) }
          }
        })
      })
      const city = yield* CityTest.make()
      expect((yield* city.plugins.add(counter)).status).toBe("ready")
      expect(yield* city.calls(caller).invoke("counter", "inc", {})).toBe(1)
      expect(yield* city.calls(caller).invoke("counter", "inc", {})).toBe(2)
      yield* city.close
      expect(released).toEqual(["counter at 2"])
      expect(yield* Effect.flip(city.calls(caller).invoke("counter", "inc", {}))).toMatchObject({ _tag: "CityClosed" })
    }))

  it.effect("an initialize that does not end fails after 500 ms, not 30 s (the test deadlines)", () =>
    Effect.scoped(Effect.gen(function*() {
      const city = yield* CityTest.make()
      const stuck = Plugin.make({ name: "stuck", initialize: Effect.never })
      const adding = yield* Effect.fork(city.plugins.add(stuck))
      yield* TestClock.adjust("499 millis")
      expect(Option.isNone(yield* Fiber.poll(adding))).toBe(true)
      yield* TestClock.adjust("1 millis")
      const error = yield* Effect.flip(Fiber.join(adding))
      expect(error).toMatchObject({ _tag: "RegistryError", reason: "PluginInitializeFailed", outcome: "timed-out" })
      expect(error.message).toContain("within 500ms")
    })))

  it.effect("a deadline given is the one used", () =>
    Effect.scoped(Effect.gen(function*() {
      const city = yield* CityTest.make({ initializeTimeout: "2 seconds" })
      const adding = yield* Effect.fork(city.plugins.add(Plugin.make({ name: "stuck", initialize: Effect.never })))
      yield* TestClock.adjust("1999 millis")
      expect(Option.isNone(yield* Fiber.poll(adding))).toBe(true)
      yield* TestClock.adjust("1 millis")
      expect(yield* Effect.flip(Fiber.join(adding))).toMatchObject({ _tag: "RegistryError", reason: "PluginInitializeFailed", outcome: "timed-out" })
    })))

  it.effect("an explicit root is used as given and left in place", () =>
    Effect.gen(function*() {
      const root = mkdtempSync(join(tmpdir(), "city-given-"))
      const seen: Array<string> = []
      yield* Effect.provide(Effect.void, CityTest.layer({ root, plugins: [keeper(seen)] }))
      expect(seen).toEqual([join(root, "data", "keeper")])
      expect(existsSync(seen[0]!)).toBe(true)
      // Private, as everything under the root, whatever the umask (0022 here).
      expect(statSync(seen[0]!).mode & 0o777).toBe(0o700)
      expect(statSync(join(root, "data")).mode & 0o777).toBe(0o700)
      rmSync(root, { recursive: true })
    }))

  it("infers the start plugins' requirements as City.layer does", () => {
    class Clock extends Context.Tag("test/Clock")<Clock, { readonly now: number }>() {}
    class Db extends Context.Tag("test/Db")<Db, { readonly url: string }>() {}
    const a = Plugin.make({ name: "a", initialize: Effect.map(Clock, () => ({})) })
    const b = Plugin.make({ name: "b", initialize: Effect.map(Db, () => ({})) })
    const test = CityTest.layer({ plugins: [a, { plugin: b, required: true }] })
    const real = City.layer({ plugins: [a, { plugin: b, required: true }] })
    expectTypeOf<Layer.Layer.Context<typeof test>>().toEqualTypeOf<Clock | Db>()
    expectTypeOf<Layer.Layer.Context<typeof test>>().toEqualTypeOf<Layer.Layer.Context<typeof real>>()
    expectTypeOf<Layer.Layer.Success<typeof test>>().toEqualTypeOf<City.City>()
    // @ts-expect-error: the options are City.layer's
    CityTest.layer({ plugins: [a], initializeTimeout: true })
  })
})
