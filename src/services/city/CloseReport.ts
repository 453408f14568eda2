/**
 * Aggregated cleanup errors (spec: "city.close() ... aggregates cleanup errors"). Each closing
 * service reports its failures here instead of failing its finalizer, so one failure never stops
 * the others, and close turns the report into one CityCloseError listing all of them.
 * @since 0.1.0
 */
import type * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import type { CloseFailure } from "../../schema/Errors.ts"

export interface CloseReportShape {
  readonly report: (subject: string, cause: Cause.Cause<unknown>) => void
  readonly failures: () => ReadonlyArray<CloseFailure>
}

export class CloseReport extends Context.Tag("effect-city/CloseReport")<CloseReport, CloseReportShape>() {}

export const make = (): CloseReportShape => {
  const failures: Array<CloseFailure> = []
  return {
    report: (subject, cause) => {
      failures.push({ subject, cause })
    },
    failures: () => failures.slice()
  }
}

export const layer = Layer.sync(CloseReport, make)
