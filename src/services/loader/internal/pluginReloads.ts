/**
 * A loaded plugin's `requestReload`, bound to its name and generation
 * (docs/plugin-loader-lifecycle.md: "a plugin change is applied by restarting, never by swapping
 * the plugin in place (requestReload). The one exception is a plugin's skill set").
 *
 * - `{ mode: "reload", skills }` replaces that plugin's skill set in the running City
 *   (`registry.replaceSkills`); a plugin can only replace its own: the method is bound to its
 *   context. Each reload is logged (`code=plugin.skills_reloaded`).
 * - `{ mode: "restart", reason }` queues a restart. Called inside a plugin call (a handler: a Step
 *   of a Turn or a City scope call), it returns once the restart is queued, without waiting: the
 *   restart waits for that very Turn, and for the lease that call holds. A failure is then logged
 *   (`code=plugin.restart_failed`). Called outside any call, it waits for the new generation.
 * - a request of a plugin instance of an older generation is refused.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type { ReloadRejected } from "../../../schema/Errors.ts"
import type { LoadReport } from "../../../schema/LoadReport.ts"
import { PluginChange, type Skill } from "../../../schema/PluginChange.ts"
import type { PluginRegistry } from "../../city/internal/pluginRegistry.ts"
import { PluginContext } from "../../PluginContext.ts"
import type { RequestReloadFor } from "../PluginLoader.ts"
import { rejected } from "./restartQueue.ts"

const decodeChange = Schema.decodeUnknownEither(PluginChange)

/**
 * Replaces `name`'s skill set in the running City, and says so in the host's log.
 * @since 0.1.0
 * @category internals
 */
export const reloadSkills = (registry: PluginRegistry["Type"], name: string, skills: ReadonlyArray<Skill>) =>
  registry.replaceSkills(name, skills).pipe(
    Effect.mapError(() => rejected(name, "reload", "the plugin is not ready in this City")),
    // Said in the host's log (the daemon's), so an operator sees a live change happen.
    Effect.zipRight(
      Effect.logInfo(`plugin ${name}: skills reloaded (${skills.length}): ${skills.map((s) => s.name).join(", ")}`).pipe(
        Effect.annotateLogs({ code: "plugin.skills_reloaded", plugin: name })
      )
    )
  )

/**
 * The `requestReload` of each plugin the next generation loads. `serving` is the generation
 * serving now (`undefined` while generation 1 loads).
 * @since 0.1.0
 * @category internals
 */
export const requestReloadFor = (options: {
  readonly registry: PluginRegistry["Type"]
  readonly workers: FiberSet.FiberSet<void, never>
  readonly serving: () => LoadReport | undefined
  readonly isOpen: () => boolean
  readonly restart: (reason: string, requestedBy: string) => Effect.Effect<LoadReport, ReloadRejected>
}): RequestReloadFor =>
(name) => {
  const serving = options.serving()
  const generation = serving === undefined ? 1 : serving.generation + 1
  return (change) =>
    Effect.suspend(() => {
      const decoded = decodeChange(change)
      if (decoded._tag === "Left") {
        return Effect.fail(rejected(name, "reload", `invalid change: ${ParseResult.TreeFormatter.formatErrorSync(decoded.left)}`))
      }
      const valid = decoded.right
      if (!options.isOpen()) return Effect.fail(rejected(name, valid.mode, "the City is closing"))
      const now = options.serving()
      if (now !== undefined && now.generation !== generation) {
        return Effect.fail(rejected(name, valid.mode, `this instance belongs to generation ${generation}, now ${now.generation}`))
      }
      if (valid.mode === "reload") return reloadSkills(options.registry, name, valid.skills)
      return Effect.flatMap(Effect.serviceOption(PluginContext), (ctx) => {
        const request = options.restart(valid.reason, name)
        if (Option.isSome(ctx)) {
          // Inside a call (a Step of a Turn, or a City scope call): the restart waits for that
          // Turn, and for the lease the call holds; do not wait for it here.
          return Effect.asVoid(FiberSet.run(options.workers, request.pipe(
            Effect.catchAll((error) => Effect.logWarning(error.message).pipe(Effect.annotateLogs({ code: "plugin.restart_failed" }))),
            Effect.asVoid
          )))
        }
        return Effect.asVoid(request)
      })
    })
}
