/**
 * What crosses from an isolated plugin's worker to the host (docs/plugin-loader.md, "Isolation"):
 * a failure as data (its tag, message and own plain fields), and a result only if it can be
 * structured-cloned; one that cannot fails the call here, naming what.
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Isolation from "../../../schema/Isolation.ts"

/**
 * A failure of the plugin, as data that crosses (its tag, message and own plain fields).
 * @since 0.1.0
 * @category internals
 */
export const toFailure = (plugin: string, what: string, cause: Cause.Cause<unknown>): Isolation.IsolationError => {
  const error = Option.getOrElse(Cause.failureOption(cause), () => Cause.squash(cause))
  const { reason: detail, ...tag } = Isolation.errorFacts(error)
  const fields: Record<string, unknown> = {}
  if (typeof error === "object" && error !== null) {
    for (const [key, value] of Object.entries(error)) {
      if (key === "_tag" || typeof value === "function") continue
      try {
        fields[key] = structuredClone(value)
      } catch {
        // A field that cannot cross is left out; the message still says what failed.
      }
    }
  }
  return new Isolation.IsolationError({
    reason: "IsolatedFailure",
    plugin,
    what,
    ...tag,
    detail,
    ...(Object.keys(fields).length === 0 ? {} : { fields })
  })
}

/**
 * A value that cannot be structured-cloned fails the call here, naming what, before the runner tries to send it.
 * @since 0.1.0
 * @category internals
 */
export const crossable = (plugin: string, what: string) => (value: unknown): Effect.Effect<unknown, Isolation.IsolationError> => {
  if (value === null || (typeof value !== "object" && typeof value !== "function")) return Effect.succeed(value)
  try {
    structuredClone(value)
    return Effect.succeed(value)
  } catch (error) {
    return Effect.fail(
      new Isolation.IsolationError({
        reason: "IsolatedFailure",
        plugin,
        what,
        detail: `its result cannot cross to the host (${error instanceof Error ? error.message : String(error)})`
      })
    )
  }
}
