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
import * as FileSystem from "@effect/platform/FileSystem"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { describeCause, ReloadRejected } from "../../schema/Errors.ts"
import type { LoadReport } from "../../schema/LoadReport.ts"
import { PluginChange, type Skill } from "../../schema/PluginChange.ts"
import { ClosingPhase } from "../city/ClosingPhase.ts"
import { heldViews } from "../city/LeaseTable.ts"
import { PluginRegistry } from "../city/PluginRegistry.ts"
import { Sessions } from "../city/Sessions.ts"
import { PluginContext } from "../PluginContext.ts"
import type { PluginLifecycleContextShape } from "../PluginLifecycleContext.ts"
import { listRoot } from "./Discovery.ts"
import { PluginLoader } from "./PluginLoader.ts"

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

interface Batch {
  readonly done: Deferred.Deferred<LoadReport, ReloadRejected>
  readonly reasons: Array<string>
}

const decodeChange = Schema.decodeUnknownEither(PluginChange)

/**
 * Loads generation 1, then serves skills reloads and restarts; its finalizer refuses further restarts.
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const loader = yield* PluginLoader
  const fs = yield* FileSystem.FileSystem
  const registry = yield* PluginRegistry
  const sessions = yield* Sessions
  const state = yield* ClosingPhase
  const workers = yield* FiberSet.make<void, never>()
  let closed = false
  let queued: Batch | undefined
  let working = false

  const rejected = (plugin: string, mode: "reload" | "restart", reason: string) =>
    new ReloadRejected({ plugin, mode, reason })

  const reload = (name: string, skills: ReadonlyArray<Skill>) =>
    registry.replaceSkills(name, skills).pipe(
      Effect.mapError(() => rejected(name, "reload", "the plugin is not ready in this City")),
      // Said in the host's log (the daemon's), so an operator sees a live change happen.
      Effect.zipRight(
        Effect.logInfo(`plugin ${name}: skills reloaded (${skills.length}): ${skills.map((s) => s.name).join(", ")}`).pipe(
          Effect.annotateLogs({ code: "plugin.skills_reloaded", plugin: name })
        )
      )
    )

  /** Every plugin of the serving generation, removed in reverse load order; failures collected. */
  const disposeGeneration = (previous: LoadReport) =>
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

  let report: LoadReport | undefined
  const current = Effect.sync(() => report ?? first)
  const rebuild = (batch: Batch) =>
    Effect.gen(function*() {
      for (const root of loader.roots) {
        const listed = yield* Effect.either(Effect.provideService(listRoot(root), FileSystem.FileSystem, fs))
        if (listed._tag === "Left") {
          return yield* Effect.fail(rejected("", "restart", `the new generation cannot be built: ${listed.left.message}`))
        }
      }
      const previous = yield* current
      const disposeFailures = yield* disposeGeneration(previous)
      const next = yield* loader.load({ generation: previous.generation + 1, requestReload: requestReloadFor }).pipe(
        Effect.mapError((error) => rejected("", "restart", `the new generation cannot be built: ${error.message}`))
      )
      report = disposeFailures.length === 0 ? next : { ...next, disposeFailures }
      yield* Effect.logInfo(
        `plugin generation ${report.generation}: ${report.loaded.length} loaded, ${report.skipped.length} skipped (${batch.reasons.join("; ")})`
      )
      return report
    })

  const work: Effect.Effect<void> = Effect.gen(function*() {
    for (;;) {
      const batch = queued
      if (batch === undefined) {
        working = false
        return
      }
      yield* Effect.logInfo(`plugin restart: pausing Turns (${batch.reasons.join("; ")})`)
      const exit = yield* Effect.exit(
        sessions.quiesce(Effect.suspend(() => {
          // From here on, a new request is for a later restart: this one may have read disk already.
          if (queued === batch) queued = undefined
          return rebuild(batch)
        })).pipe(Effect.catchTag("CityClosed", () => Effect.fail(rejected("", "restart", "the City is closing"))))
      )
      if (queued === batch) queued = undefined
      yield* Deferred.done(
        batch.done,
        Exit.isSuccess(exit) ? exit : Exit.mapError(exit, (e) => (e._tag === "ReloadRejected" ? e : rejected("", "restart", e.message)))
      )
    }
  })

  const restart: GenerationsShape["restart"] = (reason, requestedBy = "host") =>
    // Uninterruptible up to the fork, so a `working` flag set here always has its worker.
    Effect.uninterruptibleMask((restore) => Effect.suspend(() => {
      if (closed || state.phase()._tag !== "Open") return Effect.fail(rejected(requestedBy, "restart", "the City is closing"))
      let batch = queued
      if (batch === undefined) {
        // unsafe: the batch is made and queued in one synchronous step, so two requests cannot both make one.
        batch = { done: Deferred.unsafeMake<LoadReport, ReloadRejected>(FiberId.none), reasons: [] }
        queued = batch
      }
      batch.reasons.push(`${requestedBy}: ${reason}`)
      // The worker holds no view, whoever asked: a request made inside a call must not make its
      // removals look like the caller's own (they would be left pending on the caller's lease).
      const start = working
        ? Effect.void
        : Effect.asVoid(FiberSet.run(workers, Effect.interruptible(Effect.locally(work, heldViews, undefined))))
      working = true
      const done = batch.done
      return Effect.zipRight(
        start,
        restore(Deferred.await(done)).pipe(
          Effect.mapError((e) => (e.plugin === "" ? rejected(requestedBy, "restart", e.reason) : e))
        )
      )
    }))

  function requestReloadFor(name: string): PluginLifecycleContextShape["requestReload"] {
    const generation = report === undefined ? 1 : report.generation + 1
    return (change) =>
      Effect.suspend(() => {
        const decoded = decodeChange(change)
        if (decoded._tag === "Left") {
          return Effect.fail(rejected(name, "reload", `invalid change: ${ParseResult.TreeFormatter.formatErrorSync(decoded.left)}`))
        }
        const valid = decoded.right
        if (closed || state.phase()._tag !== "Open") return Effect.fail(rejected(name, valid.mode, "the City is closing"))
        if (report !== undefined && report.generation !== generation) {
          return Effect.fail(rejected(name, valid.mode, `this instance belongs to generation ${generation}, now ${report.generation}`))
        }
        if (valid.mode === "reload") return reload(name, valid.skills)
        return Effect.flatMap(Effect.serviceOption(PluginContext), (ctx) => {
          const request = restart(valid.reason, name)
          if (Option.isSome(ctx)) {
            // Inside a call (a Step of a Turn, or a City scope call): the restart waits for that
            // Turn, and for the lease the call holds; do not wait for it here.
            return Effect.asVoid(FiberSet.run(workers, request.pipe(
              Effect.catchAll((error) => Effect.logWarning(error.message).pipe(Effect.annotateLogs({ code: "plugin.restart_failed" }))),
              Effect.asVoid
            )))
          }
          return Effect.asVoid(request)
        })
      })
  }

  report = yield* loader.load({ generation: 1, requestReload: requestReloadFor })
  const first = report

  yield* Effect.addFinalizer(() =>
    Effect.gen(function*() {
      closed = true
      const batch = queued
      queued = undefined
      yield* FiberSet.clear(workers)
      if (batch !== undefined) yield* Deferred.fail(batch.done, rejected("", "restart", "the City is closing"))
    })
  )

  const service: GenerationsShape = { current, restart }
  return service
})

/**
 * Generations as a scoped Layer over the loader and the City core.
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.scoped(Generations, make)
