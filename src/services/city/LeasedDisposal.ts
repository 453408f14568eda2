/**
 * A removed plugin's disposal (docs/city-plugin-lifecycle.md, "Execution leases": "An existing Step
 * may finish with its captured instance, and City calls dispose only after the final execution
 * lease is released").
 *
 * Called once the plugin has left the current view. Nothing holds it: it is disposed now. Leases
 * hold it: the disposal waits for the last one in a fiber of its own (so it completes whatever
 * happens to the caller), and the caller waits too, unless the caller's own lease covers the plugin:
 * waiting would wait for itself, so it gets `pending` at once. Once close has begun, close disposes
 * the plugin after its own bounded wait for the last lease; the disposal waits for that instead.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Inspectable from "effect/Inspectable"
import type { RegistryError } from "../../schema/Errors.ts"
import type { ClosingShape } from "./internal/close.ts"
import { type LeaseTableShape, heldByCaller } from "./internal/leaseTable.ts"
import type { Started } from "./internal/pluginLifecycle.ts"

/**
 * What `remove` did: the plugin left the registry and is disposed, or its disposal is pending on a
 * lease the caller itself holds. `disposal` completes when the disposal has run.
 * @since 0.1.0
 * @category models
 */
export class Removal implements Inspectable.Inspectable {
  /** Tells a Removal apart. */
  readonly _tag = "Removal"
  constructor(
    /** `disposed`: the plugin is disposed; `pending`: its disposal waits for a lease the caller holds. */
    readonly status: "disposed" | "pending",
    /** Completes when the disposal has run, failing with its PluginDisposeFailed. */
    readonly disposal: Effect.Effect<void, RegistryError>
  ) {}
  /** What printing shows: the status (the disposal is an Effect, nothing to print). */
  toJSON(): { readonly _tag: "Removal"; readonly status: "disposed" | "pending" } {
    return { _tag: "Removal", status: this.status }
  }
  /** `Removal(disposed)` or `Removal(pending)`. */
  toString(): string {
    return `Removal(${this.status})`
  }
  /** Node's `util.inspect` (and so `console.log`) shows {@link toJSON}. */
  [Inspectable.NodeInspectSymbol](): unknown {
    return this.toJSON()
  }
}

/**
 * A removal whose disposal has run (or, for an error snapshot, had nothing to run).
 * @since 0.1.0
 * @category constructors
 */
export const disposed = (disposal: Effect.Effect<void, RegistryError>): Removal => new Removal("disposed", disposal)

/**
 * Disposes a plugin that has left the view, after its last lease. `dispose` is its dispose plus the
 * registry's bookkeeping; `restore` makes the caller's wait interruptible (the call runs masked).
 * @since 0.1.0
 * @category constructors
 */
export const disposeAfterLeases = (options: {
  readonly started: Started
  readonly dispose: Effect.Effect<void, RegistryError>
  readonly views: LeaseTableShape
  readonly closing: ClosingShape
  readonly restore: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}): Effect.Effect<Removal, RegistryError> =>
  Effect.suspend(() => {
    const { dispose, started, views } = options
    // Nothing holds it (the common case): disposed in the call.
    if (!views.isLeased(started.instance)) return Effect.as(dispose, disposed(dispose))
    return afterLeases(options)
  })

const afterLeases = (options: Parameters<typeof disposeAfterLeases>[0]): Effect.Effect<Removal, RegistryError> =>
  Effect.gen(function*() {
    const { closing, dispose, started, views } = options
    const instance = started.instance
    const fiber = yield* Effect.forkDaemon(
      Effect.zipRight(
        Effect.interruptible(Effect.raceFirst(views.unleased(instance), closing.begun)),
        Effect.suspend(() => (closing.phase()._tag === "Open" ? dispose : Effect.zipRight(started.disposed, dispose)))
      )
    )
    const disposal = Effect.flatten(fiber.await)
    if (yield* heldByCaller(instance)) return new Removal("pending", disposal)
    yield* options.restore(disposal)
    return disposed(disposal)
  })
