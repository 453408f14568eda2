/**
 * `city.close` (docs/city-plugin-lifecycle.md: "city.close() stops Sessions before releasing
 * Plugins and Workspaces, and aggregates cleanup errors"): closes the Scope the City's core was
 * built in (its layers release in reverse: Sessions, plugins, Workspaces), then turns what the
 * closing services reported into one CityCloseError listing every failure.
 *
 * It runs once (`Effect.cached`): concurrent calls share the one run, and a later call returns its
 * result again, a failure too, without running any cleanup twice. A release that may fail
 * transiently retries inside itself (docs/library.md).
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { CityCloseError } from "../../schema/Errors.ts"
import type { CloseReportShape } from "./CloseReport.ts"

/**
 * The close of a City whose core lives in `scope`: run once, its result shared.
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  scope: Scope.CloseableScope,
  report: CloseReportShape
): Effect.Effect<Effect.Effect<void, CityCloseError>> =>
  Effect.cached(
    Effect.uninterruptible(Effect.zipRight(Scope.close(scope, Exit.void), Effect.sync(report.take))).pipe(
      Effect.flatMap((failures) =>
        failures.length === 0
          ? Effect.void
          : Effect.fail(new CityCloseError({ failures: failures.map(({ cause, subject }) => ({ subject, cause })) }))
      )
    )
  )
