/**
 * Close benchmark: `city.close` of 1,000 plugins whose dispose
 * sleeps 5 ms, `disposeConcurrency: "unbounded"`, against the Effect floor for the same work:
 * 1,000 bare Scopes whose finalizers sleep 5 ms, closed with unbounded concurrency. Setup (the
 * City and its plugins, the Scopes) is not timed; rounds alternate. Goal: ≤ 2x the floor.
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

const sleepy = (name: string) =>
  Plugin.make({
    name,
    initialize: Effect.as(Effect.addFinalizer(() => Effect.sleep("5 millis")), {})
  })

const main = Effect.gen(function*() {
  const runtime = yield* Effect.runtime<never>()
  const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(Effect.provide(effect, runtime))

  let city: City.CityShape | undefined
  let citySetup: Scope.CloseableScope | undefined
  const subject = {
    setup: () =>
      run(Effect.gen(function*() {
        citySetup = yield* Scope.make()
        city = yield* City.make({ root, disposeConcurrency: "unbounded" }).pipe(Scope.extend(citySetup))
        for (let i = 0; i < PLUGINS; i++) yield* city.plugins.add(sleepy(`p${i}`))
      })),
    run: () =>
      run(Effect.gen(function*() {
        yield* city!.close
        yield* Scope.close(citySetup!, Exit.void)
      }))
  }

  let scopes: Array<Scope.CloseableScope> = []
  const baseline = {
    setup: () =>
      run(Effect.gen(function*() {
        scopes = []
        for (let i = 0; i < PLUGINS; i++) {
          const scope = yield* Scope.make()
          yield* Scope.addFinalizer(scope, Effect.sleep("5 millis"))
          scopes.push(scope)
        }
      })),
    run: () =>
      run(Effect.forEach(scopes, (scope) => Scope.close(scope, Exit.void), { concurrency: "unbounded", discard: true }))
  }

  const c = yield* Effect.promise(() =>
    compare({
      label: `city.close, ${PLUGINS} plugins, dispose sleeps 5 ms, unbounded`,
      baseline: "bare Scopes",
      ops: PLUGINS,
      rounds: 9,
      warmup: 2,
      subjectRound: subject,
      baselineRound: baseline
    })
  )
  console.log(line(c))
  goal("close ≤ 2x the Effect floor for the same work", c.median <= 2, `median ${c.median.toFixed(2)}x`)
})

Effect.runPromise(main).then(finish, (error) => {
  console.error(error)
  process.exit(1)
})
