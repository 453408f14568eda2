/**
 * A Scope whose failed finalizers can run again: the Scope of a plugin instance and of a Workspace
 * (a decision of an earlier reshape: "after a failed close a second close attempts again the cleanups
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
  /** Whether a finalizer was ever added (whether closing has anything to run). */
  readonly acquired: () => boolean
}

/**
 * An open Scope's finalizers, by key, in the shape `Effect.forkIn` writes to. The Map is made when
 * the first finalizer is added: most plugins acquire nothing.
 */
class Open {
  readonly _tag = "Open"
  #finalizers: Map<object, Scope.Scope.Finalizer> | undefined
  get finalizers(): Map<object, Scope.Scope.Finalizer> {
    return this.#finalizers ??= new Map()
  }
  get acquired(): boolean {
    return this.#finalizers !== undefined
  }
  /** The finalizers in reverse order of addition. */
  reversed(): Array<Scope.Scope.Finalizer> {
    return this.#finalizers === undefined ? [] : Array.from(this.#finalizers.values()).reverse()
  }
}

type State = Open | { readonly _tag: "Closed"; readonly exit: Exit.Exit<unknown, unknown> }

interface Failed {
  readonly finalizer: Scope.Scope.Finalizer
  readonly exit: Exit.Exit<unknown, unknown>
}

/**
 * The Scope itself. A class, so that a plugin instance's Scope costs one object and a Map (a
 * plugin's add + remove is a measured path: bench/registry.bench.ts), its methods on the prototype.
 */
class Cleanup implements Scope.CloseableScope {
  readonly [Scope.ScopeTypeId]: Scope.ScopeTypeId = Scope.ScopeTypeId
  readonly [Scope.CloseableScopeTypeId]: Scope.CloseableScopeTypeId = Scope.CloseableScopeTypeId
  readonly strategy: ExecutionStrategy.ExecutionStrategy = ExecutionStrategy.sequential
  /** Read and written by `Effect.forkIn` / `forkScoped` directly, as on Effect's own scope. */
  state: State = new Open()
  /** The finalizers that failed in the last run, with their Exit. */
  failed: Array<Failed> = []
  closedOnce = false
  acquiredAny = false

  pipe() {
    return pipeArguments(this, arguments)
  }

  addFinalizer(finalizer: Scope.Scope.Finalizer): Effect.Effect<void> {
    return Effect.suspend(() => {
      const state = this.state
      if (state._tag === "Closed") return Effect.asVoid(this.run(finalizer, state.exit))
      state.finalizers.set({}, finalizer)
      return Effect.void
    })
  }

  fork(strategy: ExecutionStrategy.ExecutionStrategy): Effect.Effect<Scope.CloseableScope> {
    return Effect.flatMap(Scope.make(strategy), (child) => {
      const state = this.state
      if (state._tag === "Closed") return Effect.as(Scope.close(child, state.exit), child)
      const key = {}
      state.finalizers.set(key, (exit) => Scope.close(child, exit))
      return Effect.as(
        Scope.addFinalizer(child, Effect.sync(() => this.state._tag === "Open" && this.state.finalizers.delete(key))),
        child
      )
    })
  }

  /** Closing through `Scope.close` is the owner's `close` without its report. */
  close(exit: Exit.Exit<unknown, unknown>): Effect.Effect<void> {
    return Effect.asVoid(this.closeReporting(exit))
  }

  closeReporting(exit: Exit.Exit<unknown, unknown>): Effect.Effect<Cause.Cause<unknown> | undefined> {
    return Effect.suspend(() => {
      const state = this.state
      if (state._tag === "Open") {
        this.acquiredAny = state.acquired
        this.state = { _tag: "Closed", exit }
        this.closedOnce = true
        const finalizers = state.reversed()
        // Nothing acquired (a plugin without resources): nothing to run.
        if (finalizers.length === 0) return Effect.succeed(undefined)
        return this.runAll(finalizers.map((finalizer) => ({ finalizer, exit })))
      }
      if (this.failed.length === 0) return Effect.succeed(undefined)
      const retry = this.failed
      this.failed = []
      return this.runAll(retry)
    })
  }

  /** Runs one finalizer, catching a synchronous throw; a failure is kept for the next run. */
  run(finalizer: Scope.Scope.Finalizer, exit: Exit.Exit<unknown, unknown>) {
    return Effect.map(Effect.exit(Effect.suspend(() => finalizer(exit))), (result): Cause.Cause<unknown> | undefined => {
      if (Exit.isSuccess(result)) return undefined
      this.failed.push({ finalizer, exit })
      return result.cause
    })
  }

  /**
   * Runs `items` one after the other; the failures as one Cause. A fold rather than
   * `Effect.forEach`, which under a caller's parallel Scope forks a child Scope for every call.
   */
  runAll(items: ReadonlyArray<Failed>): Effect.Effect<Cause.Cause<unknown> | undefined> {
    return items.reduce(
      (acc: Effect.Effect<Cause.Cause<unknown> | undefined>, item) =>
        Effect.flatMap(acc, (failures) =>
          Effect.map(this.run(item.finalizer, item.exit), (cause) =>
            cause === undefined ? failures : failures === undefined ? cause : Cause.sequential(failures, cause))),
      Effect.succeed(undefined)
    )
  }
}

/** The owner's handle on a {@link Cleanup}. */
class Handle implements CleanupScope {
  readonly scope: Cleanup
  constructor() {
    this.scope = new Cleanup()
  }
  close(exit: Exit.Exit<unknown, unknown>) {
    return this.scope.closeReporting(exit)
  }
  acquired() {
    const state = this.scope.state
    return state._tag === "Open" ? state.acquired : this.scope.acquiredAny
  }
  isClean() {
    return this.scope.closedOnce && this.scope.failed.length === 0
  }
}

/**
 * Makes an open CleanupScope.
 * @since 0.1.0
 * @category constructors
 */
export const make = (): CleanupScope => new Handle()
