/**
 * The Generations service's constructor (docs/plugin-loader-lifecycle.md; the behaviour and the
 * decisions are in the Generations module's comment): generation 1 loads when it starts, then it
 * serves skills reloads (pluginReloads.ts) and restarts (restartQueue.ts, nextGeneration.ts).
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Pretty from "effect/Pretty"
import { LoadReport } from "../../../schema/LoadReport.ts"
import { Closing } from "../../city/internal/close.ts"
import { PluginRegistry } from "../../city/internal/pluginRegistry.ts"
import { Sessions } from "../../city/Sessions.ts"
import { PluginLoader } from "../PluginLoader.ts"
import { logGeneration, nextGeneration } from "./nextGeneration.ts"
import { requestReloadFor } from "./pluginReloads.ts"
import { makeRestartQueue, rejected } from "./restartQueue.ts"

/**
 * Loads generation 1, then serves skills reloads and restarts; its finalizer refuses further restarts.
 * @since 0.1.0
 * @category internals
 */
export const make = Effect.gen(function*() {
  const loader = yield* PluginLoader
  const fs = yield* FileSystem.FileSystem
  const registry = yield* PluginRegistry
  const sessions = yield* Sessions
  const closing = yield* Closing
  const workers = yield* FiberSet.make<void, never>()
  let closed = false
  let report: LoadReport | undefined
  const isOpen = () => !closed && closing.phase()._tag === "Open"

  const requestReload = requestReloadFor({
    registry,
    workers,
    serving: () => report,
    isOpen,
    restart: (reason, requestedBy) => queue.restart(reason, requestedBy)
  })
  const build = nextGeneration({ loader, fs, registry, requestReload })
  const queue = makeRestartQueue({
    sessions,
    workers,
    isOpen,
    rebuild: (batch) =>
      Effect.flatMap(Effect.suspend(() => build(report ?? first)), (next) => {
        report = next
        return Effect.as(logGeneration(next, batch), next)
      })
  })

  report = yield* loader.load({ generation: 1, requestReload })
  const first = report
  // At debug level: a daemon says it at info once the generation is published (RestartRequests.ts).
  yield* Effect.logDebug(`plugin ${Pretty.make(LoadReport)(first)}`)

  yield* Effect.addFinalizer(() =>
    Effect.gen(function*() {
      closed = true
      const batch = queue.takeQueued()
      yield* FiberSet.clear(workers)
      if (batch !== undefined) yield* Deferred.fail(batch.done, rejected("", "restart", "the City is closing"))
    })
  )

  return { current: Effect.sync(() => report ?? first), restart: queue.restart }
})
