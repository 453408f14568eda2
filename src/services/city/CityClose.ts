/**
 * `city.close` (docs/city-plugin-lifecycle.md: "city.close() stops Sessions before releasing
 * Plugins and Workspaces, and aggregates cleanup errors"): closes the Scope the City's core was
 * built in (its layers release in reverse: Sessions, plugins, Workspaces), then takes what the
 * closing services recorded as one `CloseReport`: the value close succeeds with, or the report
 * `CityCloseError` carries when cleanups failed.
 *
 * It runs once (`Effect.cached`): concurrent calls share the one run, and a later call returns its
 * result again, a failure too, without running any cleanup twice. A release that may fail
 * transiently retries inside itself (docs/library.md).
 *
 * The City layer's Scope runs `teardown`: the same close, whose failure it logs only when no caller
 * of `city.close` received it (a host that handled the failure does not see it logged again; a
 * close that only the layer ran is logged), with the report's one-line form (`city closed: 3
 * plugins disposed, 0 cleanup failures, in 12 ms`); a close without failures logs that line at
 * debug level.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Pretty from "effect/Pretty"
import * as Scope from "effect/Scope"
import { CityCloseError, CloseReport } from "../../schema/Errors.ts"
import type { CloseRecorderShape } from "./CloseRecorder.ts"

/** A report's one-line text form (its Schema's `pretty` annotation). */
const summary = Pretty.make(CloseReport)

/**
 * A City's close: `close` for its callers, `teardown` for the Scope that owns the City.
 * @since 0.1.0
 * @category models
 */
export interface CityClose {
  /** `city.close`: runs the close once and returns its report (or fails with it). */
  readonly close: Effect.Effect<CloseReport, CityCloseError>
  /** The owning Scope's finalizer: the same close, its failure logged unless a caller of `close` received it. */
  readonly teardown: Effect.Effect<void>
}

/**
 * The close of a City whose core lives in `scope`: run once, its result shared.
 * @since 0.1.0
 * @category constructors
 */
export const make = (scope: Scope.CloseableScope, recorder: CloseRecorderShape): Effect.Effect<CityClose> =>
  Effect.map(
    Effect.cached(
      Effect.uninterruptible(
        Effect.flatMap(Effect.timed(Scope.close(scope, Exit.void)), ([duration]) => {
          const report = recorder.take(duration)
          return report.failures.length === 0 ? Effect.succeed(report) : Effect.fail(new CityCloseError({ report }))
        })
      )
    ),
    (run) => {
      // Whether a caller of `close` has received its result (an interrupted caller has not).
      let received = false
      return {
        close: Effect.onExit(run, (exit) =>
          Exit.isInterrupted(exit) ? Effect.void : Effect.sync(() => {
            received = true
          })),
        teardown: Effect.matchEffect(run, {
          onSuccess: (report) => Effect.logDebug(`city closed: ${summary(report)}`),
          onFailure: (error) => received ? Effect.void : Effect.logError(`${error.message}\ncity closed: ${summary(error.report)}`)
        })
      }
    }
  )
