/**
 * Generations of the loaded plugin set (docs/plugin-loader-lifecycle.md: "Every daemon start
 * builds the registry generation from disk, and a plugin change is applied by restarting, never
 * by swapping the plugin in place (requestReload). The one exception is a plugin's skill set").
 *
 * - Generation 1 is loaded when the service starts. Each plugin it loads gets a `requestReload`
 *   bound to its own name and generation.
 * - `{ mode: "reload", skills }` replaces that plugin's skill set in the running City
 *   (`registry.replaceSkills`): the next Turn sees it, a running Turn keeps the set it started
 *   with. A plugin can only replace its own: the method is bound to its context. Each reload is
 *   logged (`plugin <name>: skills reloaded (<n>): ...`, `code=plugin.skills_reloaded`).
 * - `{ mode: "restart", reason }` builds a new generation: `sessions.quiesce` holds new Turns at
 *   their boundary and lets running ones finish (bounded by `drainTimeout`, then interrupted);
 *   inside it, every plugin of the old generation is removed from the registry in reverse load
 *   order (dispose failures are collected, logged, reported, and do not stop the others), the new
 *   generation loads from disk, and Turns resume. Sessions, Agents and Workspaces are untouched.
 * - Concurrent restart requests coalesce: every request made before a restart starts its work
 *   (while Turns are draining) is served by that restart; a request made during the work queues
 *   exactly one more restart, so a change written meanwhile is never missed.
 *
 * Decisions where the spec is silent:
 * - a new generation in which some plugins fail is served anyway, with those plugins skipped and
 *   reported (never half-registered): one bad plugin must not take the others down with it;
 * - a restart is refused (ReloadRejected) when the City is closing, or when a root cannot be
 *   read; roots are checked before the old generation is touched, so a refused restart leaves
 *   the old generation serving;
 * - plugins added by code (`city.plugins.add`) are not part of a generation and survive restarts;
 * - `requestReload` of a plugin instance of an older generation is refused;
 * - `requestReload({ mode: "restart" })` called inside a plugin call (a handler: a Step of a Turn
 *   or a City scope call) returns once the restart is queued, without waiting: the restart waits
 *   for that very Turn, and for the lease that call holds, so waiting inside it could only end in
 *   the Turn's interruption. A failure is then logged (`code=plugin.restart_failed`). Called
 *   outside any call (a plugin's background fiber, the host), it waits for the new generation and
 *   fails if it could not be built.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { ReloadRejected } from "../../schema/Errors.ts"
import type { LoadReport } from "../../schema/LoadReport.ts"
import * as internal from "./internal/generations.ts"

/**
 * The generations of the loaded plugin set: the serving generation's report, and restart.
 * @since 0.1.0
 * @category models
 */
export interface GenerationsShape {
  /** The report of the generation serving now. */
  readonly current: Effect.Effect<LoadReport>
  /**
   * Builds a new generation from disk (see the module comment); coalesces with concurrent
   * requests. `requestedBy` names the plugin asking, for messages.
   */
  readonly restart: (reason: string, requestedBy?: string) => Effect.Effect<LoadReport, ReloadRejected>
}

/**
 * The Generations service (see the module comment).
 * @since 0.1.0
 * @category tags
 */
export class Generations extends Context.Tag("effect-city/Generations")<Generations, GenerationsShape>() {}

/**
 * Generations as a scoped Layer over the loader and the City core.
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.scoped(Generations, internal.make)
