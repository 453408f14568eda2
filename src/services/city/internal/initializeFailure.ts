/**
 * A failed initialize as its caller meets it (docs/library.md, "Decisions where the specification
 * is silent", initialize): as with a Layer's own error, an initialize that failed with the
 * plugin's typed failure `E` fails `city.plugins.add` (and `City.layer` for a `required` start
 * plugin) with that `E` itself, so `Effect.catchTag` reaches it. Only what has no typed failure
 * (died, timed out, interrupted) stays a `PluginInitializeFailed`.
 *
 * Inside the City the registry keeps producing `PluginInitializeFailed` for every reason (the
 * loader adds plugins whose `E` is `unknown` and needs a precise type); the public surface maps
 * it here, once.
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type { RegistryError } from "../../../schema/Errors.ts"

/**
 * Fails with the plugin's own failure when `error` carries one (reason `failed`): the
 * initialize's Cause, followed by the release's when releasing what it had acquired failed too
 * (`Cause.sequential`, as `Effect.acquireUseRelease` keeps a failed release beside the use's
 * failure). Else fails with `error` as it is.
 * @since 0.1.0
 * @category errors
 */
export const unwrap = <E>(error: RegistryError): Effect.Effect<never, E | RegistryError> => {
  if (error.outcome !== "failed") return Effect.fail(error)
  // A `failed` PluginInitializeFailed carries the Cause of the plugin's initialize, whose failures
  // are its `E`; a release fails only with defects or interruptions (finalizers cannot fail).
  const cause = error.cause as Cause.Cause<E>
  return Effect.failCause(error.release === undefined ? cause : Cause.sequential(cause, error.release as Cause.Cause<never>))
}
