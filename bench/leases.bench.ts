/**
 * Lease benchmark: the paths a user's code takes, alternating rounds with their Effect floor,
 * with 10, 1,000 and 10,000 plugins registered:
 * - `turn.step(() => Effect.void)` inside a Turn (the Turn opened once per round), against the bare
 *   `Scope.make + addFinalizer + close`. Goal: ≤ 2x, flat in P (the ratio at 10,000 ≤ 1.3x at 10).
 * - `Effect.scoped(city.leases.acquire)`, against the same shape's floor,
 *   `Effect.scoped(Effect.scope + Scope.addFinalizer)` (`Effect.scoped` alone costs about twice the
 *   bare Scope: it provides the Scope through the context; printed first). Goal: ≤ 1.5x, flat in P.
 *   Its ratio to the bare Scope is printed for reference.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as City from "../src/City.ts"
import * as Plugin from "../src/services/Plugin.ts"
import { compare, finish, goal, line } from "./harness.ts"

const STEPS = 10_000

const bareScope = Effect.gen(function*() {
  for (let i = 0; i < STEPS; i++) {
    const scope = yield* Scope.make()
    yield* Scope.addFinalizer(scope, Effect.void)
    yield* Scope.close(scope, Exit.void)
  }
})

const main = Effect.gen(function*() {
  const root = mkdtempSync(join(tmpdir(), "city-bench-"))
  const city = yield* City.make({ root })
  const agent = yield* city.agents.add({ id: "bench" })
  const workspace = yield* city.workspaces.add({ id: "bench", path: root })
  const session = yield* agent.sessions.create({ workspace })
  const runtime = yield* Effect.runtime<never>()
  const run = <A, E>(effect: Effect.Effect<A, E>) => () =>
    Effect.runPromise(Effect.provide(effect, runtime)).then(() => undefined)

  const steps = session.turn((turn) =>
    Effect.gen(function*() {
      for (let i = 0; i < STEPS; i++) yield* turn.step(() => Effect.void)
    })
  )
  const scopedAcquire = Effect.gen(function*() {
    for (let i = 0; i < STEPS; i++) yield* Effect.scoped(city.leases.acquire)
  })

  // The Effect floor for the shape `Effect.scoped(<a resource released with the Scope>)`.
  const scopedFloor = Effect.gen(function*() {
    for (let i = 0; i < STEPS; i++) yield* Effect.scoped(Effect.flatMap(Effect.scope, (scope) => Scope.addFinalizer(scope, Effect.void)))
  })
  // Effect.scoped with nothing inside: what the expression costs before any lease is taken.
  const scopedVoid = Effect.gen(function*() {
    for (let i = 0; i < STEPS; i++) yield* Effect.scoped(Effect.void)
  })
  const floor = { run: run(bareScope) }
  const scopedAlone = yield* Effect.promise(() =>
    compare({ label: "Effect.scoped(Effect.void), nothing leased", baseline: "bare Scope", ops: STEPS, subjectRound: { run: run(scopedVoid) }, baselineRound: floor })
  )
  console.log(line(scopedAlone))
  const stepRatios: Array<number> = []
  const acquireRatios: Array<number> = []
  const scopedRatios: Array<number> = []
  let registered = 0
  for (const size of [10, 1_000, 10_000]) {
    for (; registered < size; registered++) {
      yield* city.plugins.add(Plugin.make({ name: `p${String(registered).padStart(5, "0")}`, initialize: Effect.succeed({}) }))
    }
    const step = yield* Effect.promise(() =>
      compare({ label: `turn.step(() => Effect.void), ${size} plugins`, baseline: "bare Scope", ops: STEPS, subjectRound: { run: run(steps) }, baselineRound: floor })
    )
    const acquire = yield* Effect.promise(() =>
      compare({ label: `Effect.scoped(city.leases.acquire), ${size} plugins`, baseline: "bare Scope", ops: STEPS, subjectRound: { run: run(scopedAcquire) }, baselineRound: floor })
    )
    const acquireVsScoped = yield* Effect.promise(() =>
      compare({ label: `Effect.scoped(city.leases.acquire), ${size} plugins`, baseline: "Effect.scoped(addFinalizer)", ops: STEPS, subjectRound: { run: run(scopedAcquire) }, baselineRound: { run: run(scopedFloor) } })
    )
    console.log(line(step))
    console.log(line(acquire))
    console.log(line(acquireVsScoped))
    scopedRatios.push(acquireVsScoped.median)
    stepRatios.push(step.median)
    acquireRatios.push(acquire.median)
  }
  const worst = (ratios: ReadonlyArray<number>) => Math.max(...ratios)
  const flat = (ratios: ReadonlyArray<number>) => ratios[ratios.length - 1]! / ratios[0]!
  goal("turn.step ≤ 2x a bare Scope at P = 10 / 1,000 / 10,000", worst(stepRatios) <= 2, `worst median ${worst(stepRatios).toFixed(2)}x`)
  goal("turn.step flat in P (ratio at 10,000 ≤ 1.3x the ratio at 10)", flat(stepRatios) <= 1.3, `${flat(stepRatios).toFixed(2)}x`)
  goal("Effect.scoped(city.leases.acquire) ≤ 1.5x the same shape's Effect floor (Effect.scoped + addFinalizer)", worst(scopedRatios) <= 1.5, `worst median ${worst(scopedRatios).toFixed(2)}x`)
  goal("Effect.scoped(city.leases.acquire) flat in P", flat(acquireRatios) <= 1.3, `${flat(acquireRatios).toFixed(2)}x`)
})

Effect.runPromise(Effect.scoped(main)).then(finish, (error) => {
  console.error(error)
  process.exit(1)
})
