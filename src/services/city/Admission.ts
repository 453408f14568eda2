/**
 * Admission: the first step of close ("stop admission: a new add or call fails with CityClosed").
 * Every entry point of the City asks it synchronously; `close` flips it once, for good.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { CityClosed } from "../../schema/Errors.ts"

export interface AdmissionShape {
  /** Whether close has begun. */
  readonly isClosed: () => boolean
  /** Stops admission; returns whether this call was the one that closed it. */
  readonly close: () => boolean
  /** Fails with CityClosed naming the operation once close has begun. */
  readonly check: (operation: string) => Effect.Effect<void, CityClosed>
}

export class Admission extends Context.Tag("effect-city/Admission")<Admission, AdmissionShape>() {}

export const make = (): AdmissionShape => {
  let closed = false
  return {
    isClosed: () => closed,
    close: () => {
      const first = !closed
      closed = true
      return first
    },
    check: (operation) => (closed ? Effect.fail(new CityClosed({ operation })) : Effect.void)
  }
}

export const layer = Layer.sync(Admission, make)
