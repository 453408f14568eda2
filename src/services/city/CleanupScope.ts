/**
 * A Scope whose failed finalizers can run again: the Scope of a plugin instance and of a Workspace
 * (issue "The core, reshaped" 7: "after a failed close a second close attempts again the cleanups
 * that failed and are retryable ... not the ones that succeeded").
 *
 * Effect's own Scope runs each finalizer once and keeps no trace of which one failed, so a second
 * close is a no-op. This one keeps the finalizers that failed (with the Exit they were given) and
 * runs exactly those again on `retry`. Each finalizer runs on its own: one that fails, dies or
 * throws synchronously never stops the others (the 3.22 pitfall of a throwing finalizer), and
 * closing never fails: the failures come back as one Cause.
 *
 * It keeps its finalizers in the same shape as Effect's scope (`state.finalizers`) because
 * `Effect.forkIn`/`forkScoped` register a fiber's interruption there directly; a child Scope made
 * with `fork` is closed as one finalizer. The strategy is sequential, in reverse order of addition.
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import { pipeArguments } from "effect/Pipeable"
import * as Scope from "effect/Scope"

/**
 * A closeable Scope whose failed finalizers a later close runs again.
 * @since 0.1.0
 * @category models
 */
export interface CleanupScope {
  /** The Scope to hand to the code that acquires (initialize, a workspace's resources). */
  readonly scope: Scope.Scope
  /**
   * The first call runs every finalizer (reverse order, each on its own); later calls run again
   * only those that failed. Succeeds with the failures of this run as one Cause, if any.
   */
  readonly close: (exit: Exit.Exit<unknown, unknown>) => Effect.Effect<Cause.Cause<unknown> | undefined>
  /** Whether `close` has run and every finalizer has succeeded since. */
  readonly isClean: () => boolean
}

type State =
  | { readonly _tag: "Open"; readonly finalizers: Map<object, Scope.Scope.Finalizer> }
  | { readonly _tag: "Closed"; readonly exit: Exit.Exit<unknown, unknown> }

interface Failed {
  readonly finalizer: Scope.Scope.Finalizer
  readonly exit: Exit.Exit<unknown, unknown>
}

/**
 * Makes an open CleanupScope.
 * @since 0.1.0
 * @category constructors
 */
export const make = (): CleanupScope => {
  let failed: Array<Failed> = []
  let closedOnce = false

  /** Runs one finalizer, catching a synchronous throw; a failure is kept for the next run. */
  const run = (finalizer: Scope.Scope.Finalizer, exit: Exit.Exit<unknown, unknown>) =>
    Effect.map(Effect.exit(Effect.suspend(() => finalizer(exit))), (result): Cause.Cause<unknown> | undefined => {
      if (Exit.isSuccess(result)) return undefined
      failed.push({ finalizer, exit })
      return result.cause
    })

  const runAll = (items: ReadonlyArray<Failed>) =>
    Effect.map(
      Effect.forEach(items, (item) => run(item.finalizer, item.exit)),
      (causes) => {
        const all = causes.filter((c): c is Cause.Cause<unknown> => c !== undefined)
        return all.length === 0 ? undefined : all.reduce(Cause.sequential)
      }
    )

  const scope = {
    [Scope.ScopeTypeId]: Scope.ScopeTypeId as Scope.ScopeTypeId,
    [Scope.CloseableScopeTypeId]: Scope.CloseableScopeTypeId as Scope.CloseableScopeTypeId,
    strategy: ExecutionStrategy.sequential,
    state: { _tag: "Open", finalizers: new Map() } as State,
    pipe() {
      return pipeArguments(this, arguments)
    },
    addFinalizer(finalizer: Scope.Scope.Finalizer): Effect.Effect<void> {
      return Effect.suspend(() => {
        const state = scope.state
        if (state._tag === "Closed") return Effect.asVoid(run(finalizer, state.exit))
        state.finalizers.set({}, finalizer)
        return Effect.void
      })
    },
    fork(strategy: ExecutionStrategy.ExecutionStrategy): Effect.Effect<Scope.CloseableScope> {
      return Effect.flatMap(Scope.make(strategy), (child) => {
        const state = scope.state
        if (state._tag === "Closed") return Effect.as(Scope.close(child, state.exit), child)
        const key = {}
        state.finalizers.set(key, (exit) => Scope.close(child, exit))
        return Effect.as(
          Scope.addFinalizer(child, Effect.sync(() => scope.state._tag === "Open" && scope.state.finalizers.delete(key))),
          child
        )
      })
    },
    // Closing through `Scope.close` is the owner's `close` without its report.
    close(exit: Exit.Exit<unknown, unknown>): Effect.Effect<void> {
      return Effect.asVoid(close(exit))
    }
  }

  const close: CleanupScope["close"] = (exit) =>
    Effect.suspend(() => {
      const state = scope.state
      if (state._tag === "Open") {
        scope.state = { _tag: "Closed", exit }
        closedOnce = true
        const items = Array.from(state.finalizers.values()).reverse().map((finalizer) => ({ finalizer, exit }))
        return runAll(items)
      }
      const retry = failed
      failed = []
      return runAll(retry)
    })

  const closeable: Scope.CloseableScope = scope
  return { scope: closeable, close, isClean: () => closedOnce && failed.length === 0 }
}
