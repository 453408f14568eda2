/**
 * What an action that ran in a worker hands back beside a plain value (docs/plugin-loader.md,
 * "Isolation"): a result or a typed failure in its Schema's encoded form (the Schema stays in the
 * worker; the caller's reference holds the same one and decodes it), or the worker's own refusal
 * of a result its output Schema would not encode. The host's proxy wraps what crossed in these, so
 * that `invoke` tells them from the plain values of an action in the host's thread; no user sees
 * them: `invoke(ref)` decodes them, `invoke` by name unwraps them.
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Option from "effect/Option"
import type { ActionRejected } from "../../schema/Errors.ts"

/**
 * A result (success channel) or a typed failure (failure channel) in the encoded form of the
 * action's `output` or `error` Schema.
 * @since 0.1.0
 * @category models
 */
export class Encoded {
  constructor(readonly value: unknown) {}
}

/**
 * A result the action's output Schema refused where the action ran (failure channel).
 * @since 0.1.0
 * @category models
 */
export class Refused {
  constructor(readonly error: ActionRejected) {}
}

/**
 * A value as a caller by name sees it: what an {@link Encoded} holds, the error a
 * {@link Refused} carries, anything else as it is.
 * @since 0.1.0
 * @category utils
 */
export const unwrap = (value: unknown): unknown =>
  value instanceof Encoded ? value.value : value instanceof Refused ? value.error : value

/**
 * A handler's Cause as a caller by name sees it (see {@link unwrap}).
 * @since 0.1.0
 * @category utils
 */
export const unwrapCause = (cause: Cause.Cause<unknown>): Cause.Cause<unknown> =>
  // A proxy fails with the marker itself, so it is the first failure when there is one: the
  // Cause of an action in the host's thread is left as it is.
  Option.exists(Cause.failureOption(cause), (e) => e instanceof Encoded || e instanceof Refused) ? Cause.map(cause, unwrap) : cause
