/**
 * The plugin harness (src/layers/PluginHarness.ts): one plugin in a City of its own, its actions
 * (by name and by reference), hooks, system text, availability and skills called as the City calls
 * them for a made-up caller, its lifecycle context's settings and reload requests, its siblings,
 * a failing initialize reported typed, and its dispose reported (once, when the Scope closes or
 * when asked).
 * (tsc checks this file with the tests: the `expectTypeOf` lines are assertions too.)
 */
import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { existsSync } from "node:fs"
import { Errors } from "../../src/index.ts"
import { Contributions, Plugin, PluginContext, PluginLifecycleContext, Siblings } from "../../src/plugin.ts"
import { PluginHarness } from "../../src/testing.ts"

const Greet = Contributions.reference<string>()({ plugin: "greeter", action: "greet", input: Schema.Struct({ name: Schema.String }) })

/** A plugin with one of everything, and a count of its disposes. */
const greeterWith = (disposes: { count: number }) =>
  Plugin.make({
    name: "greeter",
    version: "1.2.0",
    initialize: Effect.gen(function*() {
      const lifecycle = yield* PluginLifecycleContext.PluginLifecycleContext
      yield* Effect.addFinalizer(() => Effect.sync(() => void disposes.count++))
      return {
        actions: {
          [Greet.action]: Contributions.implement(Greet, ({ name }) =>
            Effect.map(PluginContext.PluginContext, (ctx) => `Hello ${name}, from ${ctx.agent.id} in ${ctx.workspace.id}`)),
          fail: Contributions.action({ input: Schema.Struct({}), handler: () => Effect.fail("no luck") }),
          settings: Contributions.action({ input: Schema.Struct({}), handler: () => Effect.succeed(lifecycle.config) }),
          reload: Contributions.action({
            input: Schema.Struct({ mode: Schema.Literal("reload", "restart") }),
            handler: ({ mode }) =>
              Effect.either(
                lifecycle.requestReload(mode === "reload" ? { mode, skills: [{ name: "new-skill" }] } : { mode, reason: "settings" })
              )
          })
        },
        hooks: {
          "message.out": [(value) => Effect.succeed(`${value}!`), (value) => Effect.succeed(`${value}?`)]
        },
        system: (ctx) => Effect.succeed(ctx.agent.id === "quiet" ? "" : `Greet ${ctx.agent.id}.`),
        availability: (ctx) =>
          Effect.succeed(ctx.agent.id === "blocked" ? { available: false, reasons: ["blocked agent"] } : { available: true, reasons: [] }),
        skills: [{ name: "greeting" }]
      }
    })
  })

describe("PluginHarness", () => {
  it.scoped("calls the plugin's actions by name and by reference, for a made-up caller, with the City's errors", () =>
    Effect.gen(function*() {
      const harness = yield* PluginHarness.make(greeterWith({ count: 0 }))
      expect(harness.context.agent).toEqual({ id: "test-agent" })
      expect(existsSync(harness.context.workspace.path)).toBe(true)
      expect(yield* harness.invoke("greet", { name: "Grace" })).toBe("Hello Grace, from test-agent in test-workspace")
      const typed = harness.invoke(Greet, { name: "Lin" })
      expectTypeOf(typed).toEqualTypeOf<Effect.Effect<string, PluginHarness.InvokeError | Errors.ActionRejected>>()
      expect(yield* typed).toBe("Hello Lin, from test-agent in test-workspace")
      expect(yield* Effect.flip(harness.invoke("greet", { name: 1 }))).toMatchObject({ _tag: "ActionRejected", reason: "ActionInputRejected", action: "greet" })
      expect(yield* Effect.flip(harness.invoke("nope", {}))).toMatchObject({ _tag: "ActionRejected", reason: "ActionNotFound", plugin: "greeter" })
      expect(yield* Effect.flip(harness.invoke("fail", {}))).toMatchObject({ _tag: "ActionRejected", reason: "ActionFailed", action: "fail" })
      // A reference to another plugin's action names a plugin this harness does not hold.
      const Other = Contributions.reference<string>()({ plugin: "other", action: "greet", input: Schema.Struct({}) })
      expect(yield* Effect.flip(harness.invoke(Other, {}))).toMatchObject({ _tag: "ActionRejected", reason: "PluginNotFound", plugin: "other" })
      // Another caller.
      const bob = harness.withContext({ agent: { id: "bob" }, session: { id: "s1" }, turn: { number: 3 } })
      expect(bob.context).toMatchObject({ agent: { id: "bob" }, workspace: { id: "test-workspace" }, session: { id: "s1" }, turn: { number: 3 } })
      expect(yield* bob.invoke("greet", { name: "Grace" })).toBe("Hello Grace, from bob in test-workspace")
    }))

  it.scoped("runs its hooks as a waterfall, gives its system text and availability as the City does", () =>
    Effect.gen(function*() {
      const harness = yield* PluginHarness.make(greeterWith({ count: 0 }), { context: { agent: { id: "ada" } } })
      expect(yield* harness.hook("message.out", "hi")).toBe("hi!?")
      expect(yield* harness.hook("no.such.point", "hi")).toBe("hi")
      expect(yield* harness.system()).toEqual(Option.some("Greet ada."))
      expect(yield* harness.availability()).toEqual({ available: true, reasons: [] })
      const blocked = harness.withContext({ agent: { id: "blocked" } })
      expect(yield* blocked.availability()).toEqual({ available: false, reasons: ["blocked agent"] })
      // An unavailable plugin, or an empty text, puts no system text in.
      expect(yield* blocked.system()).toEqual(Option.none())
      expect(yield* harness.withContext({ agent: { id: "quiet" } }).system()).toEqual(Option.none())
    }))

  it.scoped("a failing hook is the City's HookFailed", () =>
    Effect.gen(function*() {
      const failing = Plugin.make({ name: "failing", initialize: Effect.succeed({ hooks: { p: () => Effect.fail("bad") } }) })
      const harness = yield* PluginHarness.make(failing)
      expect(yield* Effect.flip(harness.hook("p", 1))).toMatchObject({ _tag: "HookFailed", plugin: "failing", point: "p" })
    }))

  it.scoped("gives the plugin its settings; records its reload requests, applies a skills reload, refuses a restart", () =>
    Effect.gen(function*() {
      const harness = yield* PluginHarness.make(greeterWith({ count: 0 }), { config: { greeting: "Hi" } })
      expect(yield* harness.invoke("settings", {})).toEqual({ greeting: "Hi" })
      expect(yield* harness.skills).toEqual([{ name: "greeting" }])
      expect(yield* harness.invoke("reload", { mode: "reload" })).toMatchObject({ _tag: "Right" })
      expect(yield* harness.skills).toEqual([{ name: "new-skill" }])
      const restart = yield* harness.invoke("reload", { mode: "restart" })
      expect(restart).toMatchObject({ _tag: "Left", left: { _tag: "ReloadRejected", mode: "restart" } })
      expect(yield* harness.reloads).toEqual([
        { mode: "reload", skills: [{ name: "new-skill" }] },
        { mode: "restart", reason: "settings" }
      ])
      expect(Option.map(yield* harness.snapshot, (s) => [s.status, s.version, s.source])).toEqual(Option.some(["ready", "1.2.0", "harness"]))
    }))

  it.effect("disposes the plugin exactly once when its Scope closes, and reports it", () =>
    Effect.gen(function*() {
      const disposes = { count: 0 }
      const harness = yield* Effect.scoped(Effect.tap(PluginHarness.make(greeterWith(disposes)), (h) => h.invoke("greet", { name: "x" })))
      expect(disposes.count).toBe(1)
      expect(yield* harness.disposal).toEqual(Option.some(Exit.void))
      // The temporary root is gone with the Scope.
      expect(existsSync(harness.root)).toBe(false)
    }))

  it.effect("dispose disposes now, once: calls then fail with PluginNotFound, and the Scope's close runs nothing again", () =>
    Effect.gen(function*() {
      const disposes = { count: 0 }
      const harness = yield* Effect.scoped(Effect.gen(function*() {
        const harness = yield* PluginHarness.make(greeterWith(disposes))
        expect(yield* harness.disposal).toEqual(Option.none())
        yield* harness.dispose
        yield* harness.dispose
        expect(disposes.count).toBe(1)
        expect(yield* harness.disposal).toEqual(Option.some(Exit.void))
        expect(yield* Effect.flip(harness.invoke("greet", { name: "x" }))).toMatchObject({ _tag: "ActionRejected", reason: "PluginNotFound" })
        expect(yield* harness.snapshot).toEqual(Option.none())
        return harness
      }))
      expect(disposes.count).toBe(1)
      expect(yield* harness.disposal).toEqual(Option.some(Exit.void))
    }))

  it.effect("a dispose that fails is reported with its PluginDisposeFailed", () =>
    Effect.gen(function*() {
      const leaky = Plugin.make({
        name: "leaky",
        initialize: Effect.as(Effect.addFinalizer(() => Effect.die("socket stuck")), {})
      })
      const harness = yield* Effect.scoped(PluginHarness.make(leaky))
      const disposal = yield* harness.disposal
      expect(Option.isSome(disposal) && Exit.isFailure(disposal.value)).toBe(true)
      const error = yield* Effect.flip(harness.dispose)
      expect(error).toMatchObject({ _tag: "RegistryError", reason: "PluginDisposeFailed", plugin: "leaky", outcome: "failed" })
      expect(error.message).toContain("socket stuck")
    }))

  it.scoped("a failing initialize fails make with the plugin's own typed error, as add does", () =>
    Effect.gen(function*() {
      class NoDatabase extends Data.TaggedError("NoDatabase")<{ readonly url: string }> {}
      const released: Array<string> = []
      const broken = Plugin.make({
        name: "broken",
        initialize: Effect.gen(function*() {
          yield* Effect.addFinalizer(() => Effect.sync(() => void released.push("half-open connection")))
          return yield* Effect.fail(new NoDatabase({ url: "db://x" }))
        })
      })
      const made = PluginHarness.make(broken)
      expectTypeOf<Effect.Effect.Error<typeof made>>().toEqualTypeOf<PluginHarness.HarnessError<NoDatabase>>()
      const url = yield* made.pipe(Effect.as("made"), Effect.catchTag("NoDatabase", (error) => Effect.succeed(error.url)))
      expect(url).toBe("db://x")
      expect(released).toEqual(["half-open connection"])
    }))

  // Live: `make` does real I/O (the temporary root) before the deadline starts, so a TestClock
  // moved meanwhile could move before it. Half a second of real time, nothing measured.
  it.live("an initialize that does not end fails with timed-out, on the test deadline (500 ms)", () =>
    Effect.scoped(Effect.gen(function*() {
      const error = yield* Effect.flip(PluginHarness.make(Plugin.make({ name: "stuck", initialize: Effect.never })))
      expect(error).toMatchObject({ _tag: "RegistryError", reason: "PluginInitializeFailed", outcome: "timed-out" })
      expect(error.message).toContain("within 500ms")
    })))

  it.scoped("a Promise-style plugin: its throwing initialize is a PluginCallbackFailed, typed", () =>
    Effect.gen(function*() {
      const thrower = Plugin.fromPromise({
        name: "thrower",
        initialize() {
          throw new Error("boom")
        }
      })
      const error = yield* Effect.flip(PluginHarness.make(thrower))
      if (error._tag !== "PluginCallbackFailed") return expect.fail(error.message)
      expect(error.callback).toBe("initialize")
    }))

  it.scoped("a plugin that needs a sibling gets it from `siblings`; without it, PluginDependencyMissing", () =>
    Effect.gen(function*() {
      class Names extends Context.Tag("test/Names")<Names, { readonly of: (id: string) => Effect.Effect<string> }>() {}
      const names = Plugin.make({
        name: "names",
        provides: [Names],
        initialize: Effect.succeed({
          services: Context.make(Names, { of: (id) => Effect.succeed(id.toUpperCase()) }),
          hooks: { p: (v: unknown) => Effect.succeed(`${v} via names`) }
        })
      })
      const caller = Plugin.make({
        name: "caller",
        requires: ["names"],
        initialize: Effect.gen(function*() {
          const handle = yield* Siblings.service(Names)
          return {
            actions: { name: Contributions.action({ input: Schema.String, handler: (id) => handle.use((n) => n.of(id)) }) },
            hooks: { p: (v) => Effect.succeed(`${v} via caller`) }
          }
        })
      })
      const harness = yield* PluginHarness.make(caller, { siblings: [names] })
      expect(yield* harness.invoke("name", "ada")).toBe("ADA")
      // The harness calls the plugin under test alone: the sibling's handler of the point does not run.
      expect(yield* harness.hook("p", "v")).toBe("v via caller")
      expect(yield* Effect.flip(PluginHarness.make(caller))).toMatchObject({ _tag: "RegistryError", reason: "PluginDependencyMissing", missing: ["names"] })
    }))
})
