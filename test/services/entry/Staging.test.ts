/**
 * Staging, the `register(ctx)` adapter (docs/plugin-loader-lifecycle.md: "Each plugin is loaded
 * into a staging registry ... Contributions are merged only after registration completes"), on
 * the module itself with a real City: what `register` records becomes the plugin's contributions
 * once it completed; a `register` that throws halfway contributes nothing and releases what it
 * acquired; `onDispose` callbacks run in reverse order at dispose, one that throws stopping none of
 * the others; a registration after `register` completed is ignored (the staging area is closed);
 * the folder's prompt text goes before the plugin's own system text. Through real plugin folders
 * and the loader: test/acceptance/Loader.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Contributions } from "../../../src/services/Contributions.ts"
import { PluginContext } from "../../../src/services/PluginContext.ts"
import * as Staging from "../../../src/services/entry/Staging.ts"
import type { RegisterContext, RegisterFunction } from "../../../src/services/RegisterContext.ts"
import { makeCity, provideNode } from "../../fixtures.ts"

const noExtras: Staging.Extras = { prompt: undefined, skills: undefined }

const staged = (name: string, register: RegisterFunction, extras: Staging.Extras = noExtras) =>
  Staging.fromRegister({ name, version: "1.0.0", register, extras, invoke: () => Effect.die("no siblings here") })

const setup = Effect.gen(function*() {
  const city = yield* makeCity()
  const agent = yield* city.agents.add({ id: "agent-1" })
  const workspace = yield* city.workspaces.add({ id: "ws-1", path: "/tmp/ws-1" })
  return { city, calls: city.calls({ agent, workspace }) }
})

describe("Staging", () => {
  it.scoped("what register records is the plugin's contributions once it completed", () =>
    provideNode(Effect.gen(function*() {
      const { calls, city } = yield* setup
      yield* city.plugins.add(staged("echo", async (ctx) => {
        await Promise.resolve()
        ctx.registerAction("echo", { handler: (input) => ({ echoed: input }) })
      }))
      expect(yield* calls.invoke("echo", "echo", "hi")).toEqual({ echoed: "hi" })
    })))

  it.scoped("a register that throws halfway contributes nothing and releases what it acquired", () =>
    provideNode(Effect.gen(function*() {
      const { calls, city } = yield* setup
      const released: Array<string> = []
      const failed = yield* Effect.flip(city.plugins.add(staged("halfway", (ctx) => {
        ctx.onDispose(() => void released.push("socket"))
        ctx.registerAction("echo", { handler: (input) => input })
        throw new Error("register gave up halfway")
      })))
      expect(String(failed.message)).toContain("register gave up halfway")
      expect(released).toEqual(["socket"])
      expect(Option.map(yield* city.plugins.get("halfway"), (s) => s.status)).toEqual(Option.some("error"))
      expect(yield* Effect.flip(calls.invoke("halfway", "echo", "hi"))).toMatchObject({ _tag: "ActionRejected", reason: "PluginNotReady" })
    })))

  it.scoped("onDispose callbacks run in reverse order at dispose; one that throws stops none of the others", () =>
    provideNode(Effect.gen(function*() {
      const { city } = yield* setup
      const released: Array<string> = []
      yield* city.plugins.add(staged("three", (ctx) => {
        ctx.onDispose(() => void released.push("first"))
        ctx.onDispose(() => {
          released.push("second")
          throw new Error("second cannot let go")
        })
        ctx.onDispose(() => void released.push("third"))
      }))
      yield* Effect.exit(city.plugins.remove("three"))
      expect(released).toEqual(["third", "second", "first"])
    })))

  it.scoped("a registration after register completed is ignored: the staging area is closed", () =>
    provideNode(Effect.gen(function*() {
      const { calls, city } = yield* setup
      let late: RegisterContext | undefined
      yield* city.plugins.add(staged("late", (ctx) => {
        late = ctx
        ctx.registerAction("early", { handler: () => "early" })
      }))
      late!.registerAction("late", { handler: () => "late" })
      expect(yield* calls.invoke("late", "early", {})).toBe("early")
      const refused = yield* Effect.flip(calls.invoke("late", "late", {}))
      expect(refused).toMatchObject({ _tag: "ActionRejected", reason: "ActionNotFound" })
    })))

  /** The system text, run outside a call: neither system here reads its context. */
  const systemText = (contributions: Contributions) =>
    Effect.provideService(contributions.system!(undefined as never), PluginContext, undefined as never)

  it.effect("the folder's prompt text goes before the plugin's own system text; the manifest's skills only when it has none", () =>
    Effect.gen(function*() {
      const own: Contributions = { system: () => Effect.succeed("own text"), skills: [{ name: "own" }] }
      const extras: Staging.Extras = { prompt: "prompt text", skills: [{ name: "manifest" }] }
      const both = Staging.withExtras(own, extras)
      expect(yield* systemText(both)).toBe("prompt text\n\nown text")
      expect(both.skills).toEqual([{ name: "own" }])
      const none = Staging.withExtras({}, extras)
      expect(yield* systemText(none)).toBe("prompt text")
      expect(none.skills).toEqual([{ name: "manifest" }])
    }))
})
