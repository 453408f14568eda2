/**
 * Registry benchmark (issue "The core, reshaped", Speed), alternating rounds with their baseline:
 * - add + remove of a no-op plugin, N = 100, 1,000, 10,000 per round (fresh names every round, so
 *   nothing is warm), against N bare `Scope.make + addFinalizer + close`. Goal: ≤ 30x per plugin,
 *   linear in N (the per-plugin ratio at 10,000 ≤ 1.5x the one at 100).
 * - the same add + remove with one `changes` subscriber draining the stream, with 10,000 plugins
 *   registered, against the same with 100 registered. Goal: O(1) or O(log P) per change (≤ 1.5x).
 * Every add and remove must succeed: a failure fails the benchmark.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as City from "../src/City.ts"
import * as Plugin from "../src/services/Plugin.ts"
import { compare, finish, goal, line } from "./harness.ts"

const bareScopes = (n: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < n; i++) {
      const scope = yield* Scope.make()
      yield* Scope.addFinalizer(scope, Effect.void)
      yield* Scope.close(scope, Exit.void)
    }
  })

let unique = 0
/** Adds n fresh plugins, then removes them, `times` times. */
const addRemove = (city: City.CityShape, n: number, times = 1) =>
  Effect.gen(function*() {
    for (let t = 0; t < times; t++) yield* addRemoveOnce(city, n)
  })

const addRemoveOnce = (city: City.CityShape, n: number) =>
  Effect.gen(function*() {
    const round = unique++
    const names: Array<string> = []
    for (let i = 0; i < n; i++) {
      const name = `r${round}-${i}`
      names.push(name)
      yield* city.plugins.add(Plugin.make({ name, initialize: Effect.succeed({}) }))
    }
    for (const name of names) {
      const removed = yield* city.plugins.remove(name)
      if (Option.isNone(removed) || removed.value.status !== "disposed") return yield* Effect.dieMessage(`remove ${name}: ${String(removed)}`)
    }
  })

const cityWith = (plugins: number) =>
  Effect.gen(function*() {
    const city = yield* City.make({ root: mkdtempSync(join(tmpdir(), "city-bench-")) })
    for (let i = 0; i < plugins; i++) {
      yield* city.plugins.add(Plugin.make({ name: `base-${i}`, initialize: Effect.succeed({}) }))
    }
    yield* Effect.forkScoped(Stream.runDrain(city.plugins.changes))
    return city
  })

const main = Effect.gen(function*() {
  const runtime = yield* Effect.runtime<never>()
  const run = <A, E>(effect: Effect.Effect<A, E>) => () => Effect.runPromise(Effect.provide(effect, runtime)).then(() => undefined)
  const city = yield* City.make({ root: mkdtempSync(join(tmpdir(), "city-bench-")) })

  const ratios: Array<number> = []
  for (const n of [100, 1_000, 10_000]) {
    // Every round does at least 10,000 plugins (N at a time), so a round is long enough to time.
    const times = Math.max(1, Math.floor(10_000 / n))
    const c = yield* Effect.promise(() =>
      compare({
        label: `add + remove of a no-op plugin, N = ${n}`,
        baseline: "bare Scope",
        ops: n * times,
        rounds: 5,
        // The first block also warms up the bare loop's JIT: two rounds of each go unmeasured.
        warmup: 2,
        subjectRound: { run: run(addRemove(city, n, times)) },
        baselineRound: { run: run(bareScopes(n * times)) }
      })
    )
    console.log(line(c))
    ratios.push(c.median)
  }
  goal("add + remove ≤ 30x a bare Scope op per plugin, N = 100 … 10,000", Math.max(...ratios) <= 30, `worst median ${Math.max(...ratios).toFixed(1)}x`)
  goal("add + remove linear in N (per-plugin ratio at 10,000 ≤ 1.5x the one at 100)", ratios[2]! / ratios[0]! <= 1.5, `${(ratios[2]! / ratios[0]!).toFixed(2)}x`)

  const small = yield* cityWith(100)
  const large = yield* cityWith(10_000)
  const watched = yield* Effect.promise(() =>
    compare({
      label: "add + remove, one changes subscriber, P = 10,000",
      baseline: "same at P = 100",
      ops: 1_000,
      rounds: 9,
      warmup: 1,
      subjectRound: { run: run(addRemove(large, 1_000)) },
      baselineRound: { run: run(addRemove(small, 1_000)) }
    })
  )
  console.log(line(watched))
  goal("a change with one changes subscriber costs O(1)/O(log P): P = 10,000 ≤ 1.5x P = 100", watched.median <= 1.5, `median ${watched.median.toFixed(2)}x`)
})

Effect.runPromise(Effect.scoped(main)).then(finish, (error) => {
  console.error(error)
  process.exit(1)
})
