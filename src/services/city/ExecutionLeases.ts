/**
 * Execution leases (spec/city-plugin-lifecycle.md, "Execution leases": "New Steps stop seeing a
 * removed Plugin immediately. An existing Step may finish with its captured instance, and City
 * calls dispose only after the final execution lease is released").
 *
 * A lease is on a whole view (one counter), so acquiring and releasing cost O(1) in the number of
 * plugins. `run` is how calls and Steps execute: the body runs under a lease in a fiber this
 * service tracks, so that close can let it finish within `drainTimeout` and then interrupt it;
 * a call interrupted that way fails with CityClosed.
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { CityClosed } from "../../schema/Errors.ts"
import { Admission } from "./Admission.ts"
import { CityConfig } from "./CityConfig.ts"
import type { ExecutionView } from "./ExecutionView.ts"
import { PluginRegistry } from "./PluginRegistry.ts"
import type { Lease } from "./ViewTable.ts"

export interface ExecutionLeasesShape {
  /** The current view, leased for the caller's Scope. O(1) in the number of plugins. */
  readonly acquire: Effect.Effect<ExecutionView, CityClosed, Scope.Scope>
  /** The current view, leased until `scope` closes: the fast path, near the bare Scope floor. */
  readonly acquireIn: (scope: Scope.Scope) => Effect.Effect<ExecutionView, CityClosed>
  /**
   * Leases the current view without a Scope; the caller releases it (idempotent). For callers
   * that hand a lease over, like a Turn that acquires its next Step's view before letting the
   * previous one go.
   */
  readonly lease: (operation: string) => Effect.Effect<Lease, CityClosed>
  /**
   * Runs `body` in a fiber tracked for close: close waits for it up to `drainTimeout`, then
   * interrupts it, and it fails with CityClosed. Interrupting the caller interrupts the body.
   */
  readonly track: <A, E, R>(operation: string, body: Effect.Effect<A, E, R>) => Effect.Effect<A, E | CityClosed, R>
  /** Runs `body` with a lease on the current view, tracked (see `track`); the lease ends with it. */
  readonly run: <A, E, R>(
    operation: string,
    body: (view: ExecutionView) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | CityClosed, R>
  /** How many tracked bodies are running. */
  readonly running: Effect.Effect<number>
}

export class ExecutionLeases extends Context.Tag("effect-city/ExecutionLeases")<
  ExecutionLeases,
  ExecutionLeasesShape
>() {}

export const make = Effect.gen(function*() {
  const admission = yield* Admission
  const registry = yield* PluginRegistry
  const config = yield* CityConfig
  const views = registry.views
  const tracked = yield* FiberSet.make<unknown, unknown>()
  let draining = false

  const lease = (operation: string): Effect.Effect<Lease, CityClosed> =>
    Effect.suspend(() =>
      admission.isClosed() ? Effect.fail(new CityClosed({ operation })) : Effect.succeed(views.acquire())
    )

  // `Scope.addFinalizer` on an explicit Scope: `Effect.addFinalizer` (which captures and restores
  // the fiber's context for the finalizer) or a Scope provided through the context each cost
  // several times the whole lease.
  const acquireIn: ExecutionLeasesShape["acquireIn"] = (scope) =>
    Effect.suspend(() => {
      if (admission.isClosed()) return Effect.fail(new CityClosed({ operation: "lease the execution view" }))
      const held = views.acquire()
      return Effect.as(Scope.addFinalizer(scope, Effect.sync(held.release)), held.view)
    })

  const acquire: ExecutionLeasesShape["acquire"] = Effect.flatMap(Effect.scope, acquireIn)

  const track = <A, E, R>(operation: string, body: Effect.Effect<A, E, R>): Effect.Effect<A, E | CityClosed, R> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(FiberSet.run(tracked, Effect.interruptible(body)), (fiber) =>
        Effect.flatMap(Effect.exit(restore(Fiber.await(fiber))), (awaited): Effect.Effect<A, E | CityClosed> => {
          // The caller was interrupted: interrupt the body too.
          if (Exit.isFailure(awaited)) return Effect.zipRight(Fiber.interrupt(fiber), Effect.failCause(awaited.cause))
          const exit = awaited.value
          if (Exit.isFailure(exit) && draining && Cause.isInterruptedOnly(exit.cause)) {
            return Effect.fail(new CityClosed({ operation: `${operation} (interrupted after drainTimeout)` }))
          }
          return exit
        }))
    )

  const run: ExecutionLeasesShape["run"] = (operation, body) =>
    Effect.flatMap(lease(operation), (held) => track(operation, Effect.ensuring(body(held.view), Effect.sync(held.release))))

  // The drain part of close: running calls and Steps may finish within drainTimeout, then they
  // are interrupted and their leases released. Runs after Sessions stopped admission and before
  // the registry disposes plugins.
  yield* Effect.addFinalizer(() =>
    Effect.gen(function*() {
      // Finalizers run uninterruptibly: the wait must be made interruptible for its timeout to fire.
      const finished = yield* Effect.interruptible(FiberSet.awaitEmpty(tracked)).pipe(
        Effect.timeout(config.drainTimeout),
        Effect.option
      )
      if (finished._tag === "None") {
        draining = true
        const count = yield* FiberSet.size(tracked)
        yield* Effect.logWarning(`close: interrupting ${count} call(s) still running after drainTimeout`)
        yield* FiberSet.clear(tracked)
      }
    })
  )

  const service: ExecutionLeasesShape = {
    acquire,
    acquireIn,
    lease,
    track,
    run,
    running: FiberSet.size(tracked)
  }
  return service
})

export const layer = Layer.scoped(ExecutionLeases, make)
