/**
 * The City's one closing state (docs/city-plugin-lifecycle.md: "city.close() stops Sessions before
 * releasing Plugins and Workspaces"). Every service of the City asks it before admitting work, and
 * waits on it where a wait must end when close begins (a queued add, a removal waiting for a lease):
 * one state, `Open` then `Closing`, instead of a flag per service.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import { CityClosed } from "../../schema/Errors.ts"

/**
 * The City's phase: `Open`, then `Closing` once close has begun (never back).
 * @since 0.1.0
 * @category models
 */
export type Phase = { readonly _tag: "Open" } | { readonly _tag: "Closing" }

/**
 * The closing state every service of the City consults before admitting work.
 * @since 0.1.0
 * @category models
 */
export interface ClosingPhaseShape {
  /** The current phase; a synchronous read for the hot paths. */
  readonly phase: () => Phase
  /** `CityClosed` naming the operation once close has begun, else undefined. */
  readonly refuse: (operation: string) => CityClosed | undefined
  /** Fails with CityClosed naming the operation once close has begun. */
  readonly check: (operation: string) => Effect.Effect<void, CityClosed>
  /** Completes when close begins (at once if it has). */
  readonly closing: Effect.Effect<void>
  /** Fails with CityClosed when close begins: race a wait against it to cancel the wait. */
  readonly cancelled: (operation: string) => Effect.Effect<never, CityClosed>
  /** Begins closing; `true` for the call that did it. */
  readonly close: () => boolean
}

/**
 * The City's closing state as a service.
 * @since 0.1.0
 * @category tags
 */
export class ClosingPhase extends Context.Tag("effect-city/ClosingPhase")<ClosingPhase, ClosingPhaseShape>() {}

const open: Phase = { _tag: "Open" }
const closingPhase: Phase = { _tag: "Closing" }

/**
 * Makes an `Open` closing state.
 * @since 0.1.0
 * @category constructors
 */
export const make = (): ClosingPhaseShape => {
  let phase: Phase = open
  // unsafe: `close()` below is a plain function, called from synchronous close bookkeeping.
  const signal = Deferred.unsafeMake<void>(FiberId.none)
  const refuse = (operation: string) => (phase === open ? undefined : new CityClosed({ operation }))
  return {
    phase: () => phase,
    refuse,
    check: (operation) =>
      Effect.suspend(() => {
        const refused = refuse(operation)
        return refused === undefined ? Effect.void : Effect.fail(refused)
      }),
    closing: Deferred.await(signal),
    cancelled: (operation) => Effect.zipRight(Deferred.await(signal), Effect.failSync(() => new CityClosed({ operation }))),
    close: () => {
      if (phase !== open) return false
      phase = closingPhase
      // unsafe: see where the signal is made.
      Deferred.unsafeDone(signal, Exit.void)
      return true
    }
  }
}

/**
 * A fresh closing state as a Layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.sync(ClosingPhase, make)
