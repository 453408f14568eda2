/**
 * The endpoints the launch-file watch (LaunchFileWatch.ts) has marked since the last take, and the
 * signal that some are.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type { EndpointRef } from "../EndpointHost.ts"

/**
 * Marks over the endpoints watched now (`endpoints`, by identity): `mark` ignores an identity not
 * among them; `take` waits for a mark, then takes every endpoint marked since the last take.
 * @since 0.1.0
 * @category constructors
 */
export const makeMarks = (endpoints: ReadonlyMap<string, EndpointRef>) =>
  Effect.map(Queue.dropping<void>(1), (marked) => {
    const dirty = new Set<string>()
    const mark = (identities: Iterable<string>): Effect.Effect<void> => {
      let any = false
      for (const identity of identities) {
        if (!endpoints.has(identity)) continue
        dirty.add(identity)
        any = true
      }
      return any ? Effect.asVoid(Queue.offer(marked, undefined)) : Effect.void
    }
    const take = Effect.zipRight(
      Queue.take(marked),
      Effect.sync(() => {
        const refs = [...dirty].flatMap((identity) => {
          const ref = endpoints.get(identity)
          return ref === undefined ? [] : [ref]
        })
        dirty.clear()
        return refs
      })
    )
    return { mark, take }
  })
