/**
 * Lease benchmark (issue "Execution leases"): the cost of a Step's lease (acquire + release)
 * with 10, 1,000 and 10,000 plugins registered, beside, in the same run:
 * - the bare Effect floor: `Scope.make + addFinalizer + close`;
 * - a plain-JS lease that copies the plugin map and counts each plugin (the O(plugins) approach).
 * Goal: within 1.5x the bare Scope at every size, and faster than the plain-JS copy at 1,000.
 * For reference it also prints a whole empty `turn.step` (lease + tracked fiber + fresh calls).
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as City from "../src/city.ts"
import * as Plugin from "../src/services/Plugin.ts"
import { line, measure } from "./harness.ts"

const STEPS = 20_000

const bareScope = Effect.gen(function*() {
  for (let i = 0; i < STEPS; i++) {
    const scope = yield* Scope.make()
    yield* Scope.addFinalizer(scope, Effect.void)
    yield* Scope.close(scope, Exit.void)
  }
})

/** The O(plugins) lease: copy the registry map and count a lease on every plugin, then undo. */
const plainCopy = (registry: Map<string, { leases: number }>, steps: number) => () => {
  for (let i = 0; i < steps; i++) {
    const view = new Map(registry)
    for (const plugin of view.values()) plugin.leases++
    for (const plugin of view.values()) plugin.leases--
  }
  return Promise.resolve()
}

const main = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const root = yield* fs.makeTempDirectoryScoped({ prefix: "city-bench-" })
  const city = yield* City.make({ root })
  const agent = yield* city.agents.add({ id: "bench" })
  const workspace = yield* city.workspaces.add({ id: "bench", path: root })
  const session = yield* agent.sessions.create({ workspace })
  const runtime = yield* Effect.runtime<never>()
  const run = <A, E>(effect: Effect.Effect<A, E>) =>
    Effect.runPromiseExit(Effect.provide(effect, runtime)).then(() => undefined)

  // A Step's lease: the Step's own Scope, the view leased into it, the Scope closed at the end.
  const leases = Effect.gen(function*() {
    for (let i = 0; i < STEPS; i++) {
      const scope = yield* Scope.make()
      yield* city.leases.acquireIn(scope)
      yield* Scope.close(scope, Exit.void)
    }
  })
  const steps = session.turn((turn) =>
    Effect.gen(function*() {
      for (let i = 0; i < STEPS / 10; i++) yield* turn.step(() => Effect.void)
    })
  )

  console.log(`per-Step lease acquire+release (median of 15 rounds of ${STEPS} Steps)`)
  let registered = 0
  const plain = new Map<string, { leases: number }>()
  for (const size of [10, 1_000, 10_000]) {
    for (; registered < size; registered++) {
      const name = `p${String(registered).padStart(5, "0")}`
      yield* city.plugins.add(Plugin.make({ name, initialize: Effect.succeed({}) }))
      plain.set(name, { leases: 0 })
    }
    const floor = yield* Effect.promise(() => measure(`bare Scope.make+addFinalizer+close`, STEPS, () => run(bareScope)))
    const ours = yield* Effect.promise(() => measure(`ExecutionLeases lease, ${size} plugins`, STEPS, () => run(leases)))
    // The O(plugins) copy gets fewer Steps per round at large sizes, so a round stays short.
    const copySteps = Math.max(100, Math.floor(STEPS * 10 / size))
    const copy = yield* Effect.promise(() =>
      measure(`plain-JS copy-and-count lease, ${size} plugins`, copySteps, plainCopy(plain, copySteps))
    )
    const step = yield* Effect.promise(() => measure(`whole empty turn.step, ${size} plugins`, STEPS / 10, () => run(steps)))
    console.log(`-- ${size} plugins`)
    console.log(line(floor))
    console.log(line(ours, floor))
    console.log(line(copy, floor))
    console.log(`${"ExecutionLeases lease vs plain-JS copy".padEnd(58)} ratio ${(ours.nsPerOp / copy.nsPerOp).toFixed(3)}x`)
    console.log(line(step, floor))
  }
})

Effect.runPromise(Effect.scoped(main).pipe(Effect.provide(NodeContext.layer))).catch((error) => {
  console.error(error)
  process.exit(1)
})
