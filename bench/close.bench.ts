/**
 * Close benchmark: `city.close` of 1,000 plugins whose dispose
 * sleeps 5 ms, `disposeConcurrency: "unbounded"`, against the Effect floor for the same work:
 * 1,000 bare Scopes whose finalizers sleep 5 ms, closed with unbounded concurrency. Setup (the
 * City and its plugins, the Scopes) is not timed; rounds alternate. Goal: ≤ 2x the floor.
 *
 * Printed for reference, no goal: the same City whose plugins register the same finalizer with
 * `Scope.addFinalizer` on their Scope (`Effect.scope`) instead of `Effect.addFinalizer`. The
 * latter runs the finalizer with the FiberRefs of the fiber that added it (Effect's documented
 * behaviour), a diff and a patch of the initialize fiber's refs against the disposing fiber's at
 * every dispose, which the floor's bare Scopes do not do: the two lines together say how much of
 * a close is the City's and how much is that restoration.
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

/** The same finalizer, registered on the plugin's Scope directly (no FiberRefs restored when it runs). */
const sleepyOnScope = (name: string) =>
  Plugin.make({
    name,
    initialize: Effect.flatMap(Effect.scope, (scope) => Effect.as(Scope.addFinalizer(scope, Effect.sleep("5 millis")), {}))
  })

const main = Effect.gen(function*() {
  const runtime = yield* Effect.runtime<never>()
  const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(Effect.provide(effect, runtime))

  let city: City.CityShape | undefined
  let citySetup: Scope.CloseableScope | undefined
  const cityOf = (plugin: (name: string) => Plugin.Plugin) => ({
    setup: () =>
      run(Effect.gen(function*() {
        citySetup = yield* Scope.make()
        city = yield* City.make({ root, disposeConcurrency: "unbounded" }).pipe(Scope.extend(citySetup))
        for (let i = 0; i < PLUGINS; i++) yield* city.plugins.add(plugin(`p${i}`))
      })),
    run: () =>
      run(Effect.gen(function*() {
        yield* city!.close
        yield* Scope.close(citySetup!, Exit.void)
      }))
  })
  const subject = cityOf(sleepy)

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
  const onScope = yield* Effect.promise(() =>
    compare({
      label: `  reference: the same, each finalizer added with Scope.addFinalizer`,
      baseline: "bare Scopes",
      ops: PLUGINS,
      rounds: 9,
      warmup: 2,
      subjectRound: cityOf(sleepyOnScope),
      baselineRound: baseline
    })
  )
  console.log(line(onScope))
  goal("close ≤ 2x the Effect floor for the same work", c.median <= 2, `median ${c.median.toFixed(2)}x`)
})

Effect.runPromise(main).then(finish, (error) => {
  console.error(error)
  process.exit(1)
})
