/**
 * The work of one restart (docs/plugin-loader-lifecycle.md: "Every daemon start builds the
 * registry generation from disk, and a plugin change is applied by restarting"): the roots are
 * checked before the serving generation is touched (a refused restart leaves it serving), every
 * plugin of it is removed in reverse load order (dispose failures are collected, logged and
 * reported, and do not stop the others), and the new generation loads from disk.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Pretty from "effect/Pretty"
import { describeCause } from "../../../schema/Errors.ts"
import { LoadReport } from "../../../schema/LoadReport.ts"
import type { PluginRegistry } from "../../city/internal/pluginRegistry.ts"
import { listRoot } from "../Discovery.ts"
import type { PluginLoaderShape, RequestReloadFor } from "../PluginLoader.ts"
import { type Batch, rejected } from "./restartQueue.ts"

/**
 * Every plugin of the serving generation, removed in reverse load order; failures collected.
 * @since 0.1.0
 * @category internals
 */
export const disposeGeneration = (registry: PluginRegistry["Type"], previous: LoadReport) =>
  Effect.gen(function*() {
    const failures: Array<{ name: string; reason: string }> = []
    const names = [
      ...previous.loaded.map((p) => p.name).reverse(),
      // Error snapshots left by this generation's failed initializations go too.
      ...previous.skipped.filter((s) => s.kind === "RegistrationFailed").map((s) => s.name)
    ]
    for (const name of names) {
      const exit = yield* Effect.exit(
        Effect.flatMap(registry.remove(name), (removal) => (Option.isNone(removal) ? Effect.void : removal.value.disposal))
      )
      if (Exit.isFailure(exit)) {
        const reason = describeCause(exit.cause)
        failures.push({ name, reason })
        yield* Effect.logWarning(`plugin ${name} of generation ${previous.generation} failed to dispose: ${reason}`).pipe(
          Effect.annotateLogs({ code: "plugin.dispose_failed" })
        )
      }
    }
    return failures
  })

/**
 * The next generation in place of `previous`.
 * @since 0.1.0
 * @category internals
 */
export const nextGeneration = (options: {
  readonly loader: PluginLoaderShape
  readonly fs: FileSystem.FileSystem
  readonly registry: PluginRegistry["Type"]
  readonly requestReload: RequestReloadFor
}) =>
(previous: LoadReport): Effect.Effect<LoadReport, ReturnType<typeof rejected>> =>
  Effect.gen(function*() {
    const { loader } = options
    for (const root of loader.roots) {
      const listed = yield* Effect.either(Effect.provideService(listRoot(root), FileSystem.FileSystem, options.fs))
      if (listed._tag === "Left") {
        return yield* Effect.fail(rejected("", "restart", `the new generation cannot be built: ${listed.left.message}`))
      }
    }
    const disposeFailures = yield* disposeGeneration(options.registry, previous)
    const next = yield* loader.load({ generation: previous.generation + 1, requestReload: options.requestReload }).pipe(
      Effect.mapError((error) => rejected("", "restart", `the new generation cannot be built: ${error.message}`))
    )
    return disposeFailures.length === 0 ? next : { ...next, disposeFailures }
  })

/**
 * Says in the host's log that `report`'s generation serves now, for the requests of `batch`.
 * @since 0.1.0
 * @category internals
 */
export const logGeneration = (report: LoadReport, batch: Batch) =>
  Effect.logInfo(`plugin ${Pretty.make(LoadReport)(report)} (${batch.reasons.join("; ")})`)
