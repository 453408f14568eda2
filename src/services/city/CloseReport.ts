/**
 * Aggregated cleanup errors (spec: "city.close() ... aggregates cleanup errors"). Each closing
 * service reports its failures here instead of failing its finalizer, so one failure never stops
 * the others, and close turns the report into one CityCloseError listing all of them. A cleanup
 * runs once: a later `close` returns the same failures again and runs nothing twice.
 * @since 0.1.0
 */
import type * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import type { CloseFailure } from "../../schema/Errors.ts"

/**
 * A cleanup failure: what failed, and its Cause.
 * @since 0.1.0
 * @category models
 */
export type Reported = CloseFailure

/**
 * Where the closing services report their cleanup failures, and close takes them.
 * @since 0.1.0
 * @category models
 */
export interface CloseReportShape {
  readonly report: (subject: string, cause: Cause.Cause<unknown>) => void
  /** The failures reported since the last call, in report order. */
  readonly take: () => ReadonlyArray<Reported>
}

/**
 * The close report as a service.
 * @since 0.1.0
 * @category tags
 */
export class CloseReport extends Context.Tag("effect-city/CloseReport")<CloseReport, CloseReportShape>() {}

/**
 * Makes an empty close report.
 * @since 0.1.0
 * @category constructors
 */
export const make = (): CloseReportShape => {
  let failures: Array<Reported> = []
  return {
    report: (subject, cause) => {
      failures.push({ subject, cause })
    },
    take: () => {
      const taken = failures
      failures = []
      return taken
    }
  }
}

/**
 * An empty close report as a Layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.sync(CloseReport, make)
