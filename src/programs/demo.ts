/**
 * `npm start`: the demo. Builds a City on a project-local state root (`./.city-demo`, or
 * `$CITY_DEMO_ROOT`), and walks through the lifecycle, printing each step: plugins start (one
 * optional plugin fails and is isolated), a Session runs a Turn of Steps, a plugin is removed while
 * a Step holds it and is disposed only after that Step, a retry replaces an error snapshot, and
 * close disposes the rest in reverse name order. Then the loader: the plugin folders of
 * `examples/plugins/` load from two roots (one is skipped, with its reason), a Turn uses them, a
 * plugin reloads its skills, and a restart builds a new generation while the Session survives.
 */
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as City from "../City.ts"
import * as LoaderCore from "../layers/internal/loaderCore.ts"
import type { Turn } from "../services/city/Session.ts"
import { Sessions } from "../services/city/Sessions.ts"
import { Workspaces } from "../services/city/Workspaces.ts"
import { Generations } from "../services/loader/Generations.ts"
import { action } from "../services/Contributions.ts"
import * as Plugin from "../services/Plugin.ts"
import type { PluginSnapshot } from "../schema/PluginSnapshot.ts"
import { PluginContext } from "../services/PluginContext.ts"

const say = (line: string) => Console.log(line)

const lifecycle = (name: string) =>
  Effect.acquireRelease(say(`  [${name}] initialize`), () => say(`  [${name}] dispose`))

const clock = Plugin.make({
  name: "clock",
  version: "1.0.0",
  initialize: Effect.gen(function*() {
    yield* lifecycle("clock")
    return {
      actions: {
        now: action({
          input: Schema.Void,
          handler: () => Effect.map(PluginContext, (ctx) => `12:00 for ${ctx.agent.id} (turn ${ctx.turn?.number})`)
        })
      },
      system: () => Effect.succeed("The time is always 12:00.")
    }
  })
})

const notes = (release: Deferred.Deferred<void>, entered: Deferred.Deferred<void>) =>
  Plugin.make({
    name: "notes",
    initialize: Effect.gen(function*() {
      yield* lifecycle("notes")
      return {
        actions: {
          write: action({
            input: Schema.Struct({ text: Schema.String }),
            handler: ({ text }) =>
              Deferred.succeed(entered, undefined).pipe(
                Effect.zipRight(Deferred.await(release)),
                Effect.as(`saved ${JSON.stringify(text)}`)
              )
          })
        }
      }
    })
  })

const flaky = (attempt: number) =>
  Plugin.make({
    name: "weather",
    initialize: Effect.gen(function*() {
      yield* lifecycle(`weather#${attempt}`)
      if (attempt === 1) return yield* Effect.fail("weather service unreachable")
      return { system: () => Effect.succeed("Sunny.") }
    })
  })

const table = (snapshots: ReadonlyArray<PluginSnapshot>) =>
  snapshots.map((s) => `    ${s.name.padEnd(8)} ${s.status.padEnd(12)} attempts=${s.attempts}${s.last_error ? ` last_error=${s.last_error}` : ""}`)
    .join("\n")

/** The demo as one Effect (run by demoMain.ts, and traced by scripts/demo-traced.ts). */
export const program = Effect.gen(function*() {
  const root = path.resolve(process.env["CITY_DEMO_ROOT"] ?? ".city-demo")
  yield* say(`effect-city demo — state root ${root}`)
  const release = yield* Deferred.make<void>()
  const entered = yield* Deferred.make<void>()

  yield* say("\n1. The City starts three plugins concurrently; weather is optional and fails:")
  const city = yield* City.make({ root, plugins: [clock, notes(release, entered), flaky(1)] })
  yield* say(table(yield* city.plugins.snapshots))

  yield* say("\n2. An Agent runs a Turn in a Session; each Step captures the execution view:")
  const agent = yield* city.agents.add({ id: "ada" })
  const workspace = yield* city.workspaces.add({ id: "demo", path: root })
  const session = yield* agent.sessions.create({ workspace })
  yield* session.turn((turn) =>
    Effect.gen(function*() {
      const system = yield* turn.step((view) => view.system())
      yield* say(`  step 1 system: ${system.map((b) => `${b.name}: ${b.content}`).join(" | ")}`)
      const now = yield* turn.step((view) => view.invoke("clock", "now", undefined))
      yield* say(`  step 2 clock.now -> ${String(now)}`)
    })
  )

  yield* say("\n3. notes is removed while a Step is using it; dispose waits for that Step:")
  const writing = yield* Effect.fork(
    session.turn((turn) => turn.step((view) => view.invoke("notes", "write", { text: "remember the milk" })))
  )
  yield* Deferred.await(entered)
  const removing = yield* Effect.fork(city.plugins.remove("notes"))
  yield* city.plugins.get("notes").pipe(
    Effect.repeat({ until: (s) => s._tag === "Some" && s.value.status === "disposing", times: 10_000 })
  )
  yield* say(`  during the Step: ${(yield* city.plugins.snapshots).map((s) => `${s.name}=${s.status}`).join(", ")}`)
  yield* say("  the Step finishes ...")
  yield* Deferred.succeed(release, undefined)
  yield* say(`  step result: ${String(yield* Fiber.join(writing))}`)
  const removal = yield* Fiber.join(removing)
  yield* say(`  remove returned ${Option.isNone(removal) ? "None (unknown name)" : removal.value.status}`)

  yield* say("\n4. Retrying weather replaces its error snapshot with ready:")
  yield* city.plugins.add(flaky(2))
  yield* say(table(yield* city.plugins.snapshots))

  yield* say("\n5. close: Sessions stop, plugins are disposed in reverse name order, then Workspaces:")
  yield* city.close
  yield* say(`  snapshots after close: ${(yield* city.plugins.snapshots).length}`)

  yield* Effect.scoped(loaderDemo(root))
  yield* say("\ndone.")
})

/** Sections 6 to 8: plugin folders on disk (examples/plugins), loaded from two roots. */
const loaderDemo = (root: string) =>
  Effect.gen(function*() {
    const examples = fileURLToPath(new URL("../../examples/plugins/", import.meta.url))
    const bundledRoot = path.join(examples, "bundled")
    const instanceRoot = path.join(examples, "instance")
    yield* say(`\n6. The loader: plugin folders from two roots (bundled ${bundledRoot}, instance ${instanceRoot}):`)
    const context = yield* Layer.build(
      LoaderCore.withCore({ root }, {
        bundledRoot,
        instanceRoot,
        enabled: ["clock", "greeter", "broken", "weather"],
        licensed: ["greeter", "broken"]
      })
    )
    const generations = Context.get(context, Generations)
    const sessions = Context.get(context, Sessions)
    const workspaces = Context.get(context, Workspaces)
    const report = yield* generations.current
    for (const p of report.loaded) yield* say(`  loaded  ${p.name.padEnd(8)} ${p.version.padEnd(6)} from the ${p.root} root`)
    for (const s of report.skipped) yield* say(`  skipped ${s.name.padEnd(8)} ${s.reason}`)
    yield* say(`  enabled but missing: ${report.missing.join(", ")}`)

    yield* say("\n7. A Turn uses them; greeter reaches clock through its call context, then reloads its skills:")
    const agent = yield* sessions.agents.add({ id: "grace" })
    const session = yield* agent.sessions.create({ workspace: yield* workspaces.add({ id: "loader-demo", path: root }) })
    const skillNames = (turn: Turn) => turn.skills.map((s) => `${s.plugin}: ${s.skills.map((k) => k.name).join(", ")}`).join(" | ")
    yield* session.turn((turn) =>
      Effect.gen(function*() {
        const system = yield* turn.step((view) => view.system())
        for (const block of system) yield* say(`  system ${block.name}: ${block.content.replace(/\n+/g, " / ")}`)
        yield* say(`  greeter.greet -> ${String(yield* turn.step((view) => view.invoke("greeter", "greet", "Ada")))}`)
        yield* say(`  greeter.learn -> ${String(yield* turn.step((view) => view.invoke("greeter", "learn", "farewell")))}`)
        yield* say(`  skills in this Turn (resolved at its start): ${skillNames(turn)}`)
      })
    )
    yield* session.turn((turn) => say(`  skills in the next Turn: ${skillNames(turn)}`))

    yield* say("\n8. A restart builds generation 2 from disk; the Session survives:")
    const next = yield* generations.restart("demo: settings changed")
    yield* say(`  generation ${next.generation}: ${next.loaded.map((p) => p.name).join(", ")} loaded, ${next.skipped.length} skipped`)
    const again = yield* session.turn((turn) => turn.step((view) => view.invoke("greeter", "greet", "Ada")))
    yield* say(`  same Session, new generation: ${String(again)}`)
  })

