/**
 * Dependencies benchmark (docs/library.md, "Plugin dependencies"): `City.make` with 1,000 start
 * plugins whose `requires` form a random DAG (each plugin requires up to three earlier ones, one
 * in four optionally; the same seeded graph every run), then its close, against the same 1,000
 * plugins with no edges. Each plugin's initialize acquires one resource (released at dispose).
 * The make and the close are timed together; rounds alternate. Goal: ≤ 1.2x.
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

const PLUGINS = 1_000
const root = mkdtempSync(join(tmpdir(), "city-bench-"))

/** A small seeded generator (mulberry32): the same graph on every run. */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const plugins = (edges: boolean) => {
  const next = random(42)
  return Array.from({ length: PLUGINS }, (_, i) => {
    const requires: Array<Plugin.RequirementInput> = []
    if (edges && i > 0) {
      const count = Math.floor(next() * 4)
      for (let k = 0; k < count; k++) {
        const target = `p${String(Math.floor(next() * i)).padStart(4, "0")}`
        requires.push(next() < 0.25 ? { name: target, optional: true } : target)
      }
    }
    return Plugin.make({
      name: `p${String(i).padStart(4, "0")}`,
      requires,
      initialize: Effect.as(Effect.addFinalizer(() => Effect.void), {})
    })
  })
}

const main = Effect.gen(function*() {
  const runtime = yield* Effect.runtime<never>()
  const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(Effect.provide(effect, runtime))
  const round = (list: ReturnType<typeof plugins>) => ({
    run: () =>
      run(Effect.gen(function*() {
        const scope = yield* Scope.make()
        const city = yield* City.make({ root, plugins: list }).pipe(Scope.extend(scope))
        yield* city.close
        yield* Scope.close(scope, Exit.void)
      }))
  })
  const c = yield* Effect.promise(() =>
    compare({
      label: `City.make + close, ${PLUGINS} start plugins in a random DAG`,
      baseline: "the same plugins, no edges",
      ops: PLUGINS,
      rounds: 11,
      warmup: 3,
      subjectRound: round(plugins(true)),
      baselineRound: round(plugins(false))
    })
  )
  console.log(line(c))
  goal("initialize and close 1,000 plugins in a random DAG ≤ 1.2x the same with no edges", c.median <= 1.2, `median ${c.median.toFixed(2)}x`)
})

Effect.runPromise(main).then(finish, (error) => {
  console.error(error)
  process.exit(1)
})
