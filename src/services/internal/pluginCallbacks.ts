/**
 * The house's helpers behind `Plugin.make` and `Plugin.fromPromise` (docs/library.md): a plugin's
 * requirements written out, and a Promise-style callback run as an Effect.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import { PluginCallbackFailed } from "../../schema/Errors.ts"

type Awaitable<A> = A | PromiseLike<A>

/**
 * The requirements a plugin was made with, each written out.
 * @since 0.1.0
 * @category internals
 */
export const requirements = (
  inputs: ReadonlyArray<string | { readonly name: string; readonly optional?: boolean | undefined }> | undefined
): ReadonlyArray<{ readonly name: string; readonly optional: boolean }> =>
  inputs === undefined
    ? []
    : inputs.map((r) => (typeof r === "string" ? { name: r, optional: false } : { name: r.name, optional: r.optional === true }))

/**
 * Calls a plugin's own callback, catching a synchronous throw and a rejection alike as a
 * {@link PluginCallbackFailed} that names the plugin and the callback.
 * @since 0.1.0
 * @category internals
 */
export const callback = <A>(
  plugin: string,
  name: string,
  f: () => Awaitable<A>
): Effect.Effect<A, PluginCallbackFailed> =>
  Effect.suspend(() => {
    let result: Awaitable<A>
    try {
      result = f()
    } catch (error) {
      return Effect.fail(new PluginCallbackFailed({ plugin, callback: name, error }))
    }
    if (isThenable(result)) {
      const promise = result
      return Effect.tryPromise({
        try: () => Promise.resolve(promise),
        catch: (error) => new PluginCallbackFailed({ plugin, callback: name, error })
      })
    }
    return Effect.succeed(result)
  })

const isThenable = <A>(u: Awaitable<A>): u is PromiseLike<A> =>
  typeof u === "object" && u !== null && typeof (u as { then?: unknown }).then === "function"
