/**
 * A release that may fail transiently retries inside itself, so the plugin's Scope closes once
 * (docs/library.md, "Close runs once").
 */
// #region readme
import { Effect, Schedule } from "effect"
import { Plugin } from "effect-city/plugin"

interface Connection {
  readonly close: Effect.Effect<void, "busy">
}
declare const openConnection: Effect.Effect<Connection>

export const database = Plugin.make({
  name: "database",
  initialize: Effect.gen(function*() {
    yield* Effect.acquireRelease(openConnection, (connection) =>
      connection.close.pipe(
        Effect.retry(Schedule.exponential("100 millis").pipe(Schedule.intersect(Schedule.recurs(3)))),
        Effect.orDie
      ))
    return {}
  })
})
// #endregion readme
