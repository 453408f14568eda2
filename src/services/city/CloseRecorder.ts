/**
 * What a close did, recorded as it happens (spec: "city.close() ... aggregates cleanup errors").
 * Each closing service records here what it closed (the Sessions it stopped, the drain, each plugin
 * it disposed, each Workspace it released) and reports its failures instead of failing its
 * finalizer, so one failure never stops the others; close takes it all as one `CloseReport`, which
 * it returns, or carries in `CityCloseError` when something failed. A cleanup runs once: a later
 * `close` returns the same report again and runs nothing twice.
 * @since 0.1.0
 */
import type * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Layer from "effect/Layer"
import type { ClosedPlugin, CloseFailure, CloseReport } from "../../schema/Errors.ts"

/**
 * Where the closing services record what they closed and report their cleanup failures, and close
 * takes the report.
 * @since 0.1.0
 * @category models
 */
export interface CloseRecorderShape {
  /** A cleanup failure: what failed (`plugin <name>`, `workspace <id>`, ...) and its Cause. */
  readonly report: (subject: string, cause: Cause.Cause<unknown>) => void
  /** A Session that close stopped. */
  readonly stopped: (session: string) => void
  /** The drain of running Steps and calls: how long it waited and how many it interrupted. */
  readonly drained: (waited: Duration.Duration, interrupted: number) => void
  /** A plugin that close disposed. */
  readonly disposed: (plugin: ClosedPlugin) => void
  /** A Workspace that close released. */
  readonly released: (workspace: string) => void
  /** The report of what was recorded since the last call, given the whole close's duration. */
  readonly take: (duration: Duration.Duration) => CloseReport
}

/**
 * The close recorder as a service.
 * @since 0.1.0
 * @category tags
 */
export class CloseRecorder extends Context.Tag("effect-city/CloseRecorder")<CloseRecorder, CloseRecorderShape>() {}

/**
 * Makes an empty close recorder.
 * @since 0.1.0
 * @category constructors
 */
export const make = (): CloseRecorderShape => {
  let sessions: Array<string> = []
  let drain = Duration.zero
  let interrupted = 0
  let plugins: Array<ClosedPlugin> = []
  let workspaces: Array<string> = []
  let failures: Array<CloseFailure> = []
  return {
    report: (subject, cause) => {
      failures.push({ subject, cause })
    },
    stopped: (session) => {
      sessions.push(session)
    },
    drained: (waited, count) => {
      drain = waited
      interrupted = count
    },
    disposed: (plugin) => {
      plugins.push(plugin)
    },
    released: (workspace) => {
      workspaces.push(workspace)
    },
    take: (duration) => {
      const report: CloseReport = { sessions, interrupted, drain, plugins, workspaces, failures, duration }
      sessions = []
      drain = Duration.zero
      interrupted = 0
      plugins = []
      workspaces = []
      failures = []
      return report
    }
  }
}

/**
 * An empty close recorder as a Layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.sync(CloseRecorder, make)
