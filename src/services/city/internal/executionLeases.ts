/**
 * Execution leases (docs/city-plugin-lifecycle.md, "Execution leases": "New Steps stop seeing a
 * removed Plugin immediately. An existing Step may finish with its captured instance, and City
 * calls dispose only after the final execution lease is released").
 *
 * A lease is on a whole view (one counter in LeaseTable), so acquiring and releasing cost O(1)
 * in the number of plugins. A Step or a call runs its body **in the caller's fiber** under its
 * lease: nothing is forked. The fiber is registered while the body runs, so that close can let it
 * finish within `drainTimeout` and then interrupt it (the caller's fiber is interrupted, as an
 * outer timeout would).
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import type { CityClosed } from "../../../schema/Errors.ts"
import { CityConfig } from "../CityConfig.ts"
import { Closing } from "./close.ts"
import type { ExecutionView } from "../ExecutionView.ts"
import { acquiredViews, LeaseTable, HeldViews, type Lease, underLease } from "./leaseTable.ts"
import * as Running from "./running.ts"

/**
 * Leases on the current execution view, and bodies run under them, drained by close.
 * @since 0.1.0
 * @category models
 */
export interface ExecutionLeasesShape {
  /** The current view, leased for the caller's Scope. O(1) in the number of plugins. */
  readonly acquire: Effect.Effect<ExecutionView, CityClosed, Scope.Scope>
  /** The current view, leased until `scope` closes. */
  readonly acquireIn: (scope: Scope.Scope) => Effect.Effect<ExecutionView, CityClosed>
  /**
   * Leases the current view without a Scope, for a caller that hands the lease over (a Turn holds
   * its last Step's view until the next Step has its own); `undefined` once close has begun.
   */
  readonly lease: () => Lease | undefined
  /**
   * Runs `body` in the caller's fiber as holding `lease` (a `remove` it issues does not wait for
   * it), drained by close; `done` runs when it ends, whatever the exit.
   */
  readonly runUnder: <A, E, R>(
    lease: Lease,
    body: Effect.Effect<A, E, R>,
    done: (exit: Exit.Exit<A, E>) => void
  ) => Effect.Effect<A, E, R>
  /** Runs `body` with a lease on the current view, released when it ends (see `runUnder`). */
  readonly run: <A, E, R>(
    operation: string,
    body: (view: ExecutionView) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | CityClosed, R>
  /** How many bodies are running. */
  readonly running: () => number
}

/**
 * The execution leases as a service.
 * @since 0.1.0
 * @category tags
 */
export class ExecutionLeases extends Context.Tag("effect-city/ExecutionLeases")<
  ExecutionLeases,
  ExecutionLeasesShape
>() {}

/**
 * Makes the execution leases; its finalizer is the drain part of close.
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const closing = yield* Closing
  const config = yield* CityConfig
  const views = yield* LeaseTable
  /** The bodies running under a lease (a Step may make calls: nested bodies of one fiber). */
  const running = Running.make()

  const lease: ExecutionLeasesShape["lease"] = () => (closing.phase()._tag === "Open" ? views.acquire() : undefined)

  const runUnder: ExecutionLeasesShape["runUnder"] = (held, body, done) =>
    running.track(Effect.withFiberRuntime((fiber) => underLease(fiber, held, body, done)))

  const run: ExecutionLeasesShape["run"] = <A, E, R>(
    operation: string,
    body: (view: ExecutionView) => Effect.Effect<A, E, R>
  ) =>
    Effect.suspend((): Effect.Effect<A, E | CityClosed, R> => {
      const refused = closing.refuse(operation)
      if (refused !== undefined) return Effect.fail(refused)
      const held = views.acquire()
      return runUnder(held, body(held.view), held.release)
    })

  // `Scope.addFinalizer` on an explicit Scope: `Effect.addFinalizer` (which captures and restores
  // the fiber's context for the finalizer) costs several times the whole lease.
  // Every lease the caller holds counts, as inside a Step: the lease joins the fiber's own record
  // of acquired leases (`acquiredViews`, set for the rest of the fiber when it has none), so a
  // `remove` it issues under this lease returns `pending` rather than waiting for itself.
  const acquireIn: ExecutionLeasesShape["acquireIn"] = (scope) =>
    Effect.suspend(() => {
      const refused = closing.refuse("lease the execution view")
      if (refused !== undefined) return Effect.fail(refused)
      const held = views.acquire()
      return Effect.flatMap(FiberRef.get(acquiredViews), (current) => {
        const holder = current ?? new HeldViews(() => undefined, undefined)
        holder.leases.push(held)
        const release = Effect.sync(() => {
          const at = holder.leases.lastIndexOf(held)
          if (at >= 0) holder.leases.splice(at, 1)
          held.release()
        })
        return Effect.as(
          Effect.zipRight(current === undefined ? FiberRef.set(acquiredViews, holder) : Effect.void, Scope.addFinalizer(scope, release)),
          held.view
        )
      })
    })

  // The drain part of close: running bodies may finish within drainTimeout, then their fibers are
  // interrupted (their leases go with them). Runs after Sessions stopped admitting and before the
  // registry disposes plugins.
  yield* Effect.addFinalizer(() =>
    Effect.gen(function*() {
      closing.begin()
      const [waited, interrupted] = yield* Effect.timed(running.drain(config.drainTimeout))
      closing.drained(waited, interrupted)
      if (interrupted > 0) {
        yield* Effect.logWarning(`close: interrupted ${interrupted} Step(s) or call(s) still running after drainTimeout`)
      }
    })
  )

  return {
    acquire: Effect.flatMap(Effect.scope, acquireIn),
    acquireIn,
    lease,
    runUnder,
    run,
    running: running.size
  } satisfies ExecutionLeasesShape
})

/**
 * The execution leases as a scoped Layer: closing it drains the running bodies.
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.scoped(ExecutionLeases, make)
