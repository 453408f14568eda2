/**
 * The restart queue of Generations (docs/plugin-loader-lifecycle.md: "A plugin change of any kind
 * other than a skill set costs one daemon restart, which pauses running turns first").
 *
 * Concurrent restart requests coalesce: every request made before a restart starts its work (while
 * Turns are draining) is served by that restart; a request made during the work queues exactly one
 * more restart, so a change written meanwhile is never missed. One worker fiber, holding no view,
 * runs the queued restarts one after the other, each inside `sessions.quiesce`.
 * @since 0.1.0
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as FiberSet from "effect/FiberSet"
import { ReloadRejected } from "../../../schema/Errors.ts"
import type { LoadReport } from "../../../schema/LoadReport.ts"
import { heldViews } from "../../city/internal/leaseTable.ts"
import type { Sessions } from "../../city/Sessions.ts"

/**
 * The requests one restart serves: their reasons, and the result they all wait for.
 * @since 0.1.0
 * @category internals
 */
export interface Batch {
  /** Done when the restart serving this batch ends. */
  readonly done: Deferred.Deferred<LoadReport, ReloadRejected>
  /** `<requestedBy>: <reason>`, one per request. */
  readonly reasons: Array<string>
}

/**
 * A refusal of a reload or restart, for messages.
 * @since 0.1.0
 * @category internals
 */
export const rejected = (plugin: string, mode: "reload" | "restart", reason: string) =>
  new ReloadRejected({ plugin, mode, reason })

/**
 * The queue over `rebuild` (the work of one restart, run inside `sessions.quiesce`): `restart`
 * queues a request and waits for the restart serving it; `close` refuses further requests and
 * fails the one queued. `isOpen` says whether the City still accepts restarts.
 * @since 0.1.0
 * @category internals
 */
export const makeRestartQueue = (options: {
  readonly sessions: Sessions["Type"]
  readonly workers: FiberSet.FiberSet<void, never>
  readonly isOpen: () => boolean
  readonly rebuild: (batch: Batch) => Effect.Effect<LoadReport, ReloadRejected>
}) => {
  const { sessions, workers } = options
  let queued: Batch | undefined
  let working = false

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
          return options.rebuild(batch)
        })).pipe(Effect.catchTag("CityClosed", () => Effect.fail(rejected("", "restart", "the City is closing"))))
      )
      if (queued === batch) queued = undefined
      yield* Deferred.done(
        batch.done,
        Exit.isSuccess(exit) ? exit : Exit.mapError(exit, (e) => (e._tag === "ReloadRejected" ? e : rejected("", "restart", e.message)))
      )
    }
  })

  const restart = (reason: string, requestedBy = "host"): Effect.Effect<LoadReport, ReloadRejected> =>
    // Uninterruptible up to the fork, so a `working` flag set here always has its worker.
    Effect.uninterruptibleMask((restore) => Effect.suspend(() => {
      if (!options.isOpen()) return Effect.fail(rejected(requestedBy, "restart", "the City is closing"))
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

  /** Takes the queued batch out, to fail it once the worker is stopped. */
  const takeQueued = () => {
    const batch = queued
    queued = undefined
    return batch
  }

  return { restart, takeQueued }
}
