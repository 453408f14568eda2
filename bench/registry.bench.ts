/**
 * Registry benchmark (issue "City core"): add then remove N no-op plugins (N = 100, 1,000), time
 * per plugin, beside the bare Effect floor of a Scope-managed resource, `Scope.make +
 * addFinalizer + close`, measured in the same run.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as City from "../src/city.ts"
import * as Plugin from "../src/services/Plugin.ts"
import { line, measure } from "./harness.ts"

const noop = (name: string) => Plugin.make({ name, initialize: Effect.succeed({}) })

const bareScope = (n: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < n; i++) {
      const scope = yield* Scope.make()
      yield* Scope.addFinalizer(scope, Effect.void)
      yield* Scope.close(scope, Exit.void)
    }
  })

const main = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const root = yield* fs.makeTempDirectoryScoped({ prefix: "city-bench-" })
  const city = yield* City.make({ root })
  const runtime = yield* Effect.runtime<never>()
  const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromiseExit(Effect.provide(effect, runtime)).then(() => undefined)

  console.log("add + remove of N no-op plugins, per plugin (median of 15 rounds)")
  for (const n of [100, 1_000]) {
    const names = Array.from({ length: n }, (_, i) => `p${String(i).padStart(5, "0")}`)
    const plugins = names.map(noop)
    const registry = yield* Effect.promise(() =>
      measure(`registry add+remove, N=${n}`, n, () =>
        run(Effect.gen(function*() {
          for (const plugin of plugins) yield* city.plugins.add(plugin)
          for (const name of names) yield* city.plugins.remove(name)
        })))
    )
    const floor = yield* Effect.promise(() =>
      measure(`bare Scope.make+addFinalizer+close, N=${n}`, n, () => run(bareScope(n)))
    )
    console.log(line(floor))
    console.log(line(registry, floor))
  }
})

Effect.runPromise(Effect.scoped(main).pipe(Effect.provide(NodeContext.layer))).catch((error) => {
  console.error(error)
  process.exit(1)
})
