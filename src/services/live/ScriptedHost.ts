/**
 * The "Scripted" endpoint host, for tests (docs/design.md, "Capabilities": tests use a scripted one): the test sets each
 * endpoint's state, begins and ends its Turns, and may hold a reload in the middle (to send a
 * request during it) or make one fail. It follows the EndpointHost contract: a reload of a busy
 * endpoint waits for `endTurn`; asleep and stopped endpoints are never reloaded; `retire` waits
 * for the boundary.
 * @since 0.1.0
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { EndpointError, type EndpointState } from "../../schema/Live.ts"
import type { EndpointHostShape, EndpointRef } from "./EndpointHost.ts"

/**
 * The Scripted host and the controls a test drives it with.
 * @since 0.1.0
 * @category models
 */
export interface ScriptedShape {
  /** The EndpointHost the code under test uses. */
  readonly host: EndpointHostShape
  /** Sets an endpoint's state. */
  readonly set: (identity: string, state: EndpointState) => Effect.Effect<void>
  /** Begins a Turn: the endpoint is busy. */
  readonly beginTurn: (identity: string) => Effect.Effect<void>
  /** Ends the Turn: the endpoint is idle and what waited for the boundary runs. */
  readonly endTurn: (identity: string) => Effect.Effect<void>
  /** Completed reloads. */
  readonly reloads: (identity: string) => number
  /** Operations in order: `reload`, `retire`, `kill`, each with the state it saw. */
  readonly journal: ReadonlyArray<string>
  /** The next reload of `identity` signals `started` and waits for `release`. */
  readonly holdNextReload: (identity: string) => Effect.Effect<{
    readonly started: Deferred.Deferred<void>
    readonly release: Deferred.Deferred<void>
  }>
  /** The next reload of `identity` fails with this detail. */
  readonly failNextReload: (identity: string, detail: string) => Effect.Effect<void>
}

interface Endpoint {
  state: EndpointState
  reloads: number
  boundary: Array<Deferred.Deferred<void>>
  hold: { readonly started: Deferred.Deferred<void>; readonly release: Deferred.Deferred<void> } | undefined
  fail: string | undefined
}

/**
 * Builds a Scripted host; every endpoint starts asleep.
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<ScriptedShape> = Effect.sync(() => {
  const endpoints = new Map<string, Endpoint>()
  const journal: Array<string> = []
  const get = (identity: string): Endpoint => {
    let e = endpoints.get(identity)
    if (e === undefined) {
      e = { state: "asleep", reloads: 0, boundary: [], hold: undefined, fail: undefined }
      endpoints.set(identity, e)
    }
    return e
  }
  const boundary = (e: Endpoint): Effect.Effect<void> =>
    Effect.suspend(() =>
      e.state !== "busy" ? Effect.void : Effect.flatMap(Deferred.make<void>(), (d) => {
        e.boundary.push(d)
        return Effect.zipRight(Deferred.await(d), boundary(e))
      })
    )

  const reload = <A, E>(ref: EndpointRef, claim: Effect.Effect<Option.Option<A>, E>) =>
    Effect.gen(function*() {
      const e = get(ref.identity)
      yield* boundary(e)
      if (e.state !== "idle") return Option.none<A>()
      const claimed = yield* claim
      if (Option.isNone(claimed)) return claimed
      journal.push(`reload ${ref.identity}`)
      const hold = e.hold
      e.hold = undefined
      if (hold !== undefined) {
        yield* Deferred.succeed(hold.started, undefined)
        yield* Deferred.await(hold.release)
      }
      const fail = e.fail
      e.fail = undefined
      if (fail !== undefined) {
        return yield* new EndpointError({ reason: "EndpointHostFailed", identity: ref.identity, operation: "reload", detail: fail })
      }
      e.reloads++
      return claimed
    })

  const host: EndpointHostShape = {
    status: (ref) => Effect.sync(() => get(ref.identity).state),
    reload,
    retire: (ref) =>
      Effect.gen(function*() {
        const e = get(ref.identity)
        yield* boundary(e)
        journal.push(`retire ${ref.identity}`)
        e.state = "asleep"
      }),
    kill: (ref) =>
      Effect.sync(() => {
        journal.push(`kill ${ref.identity} (${get(ref.identity).state})`)
        get(ref.identity).state = "asleep"
      })
  }

  return {
    host,
    set: (identity, state) => Effect.sync(() => void (get(identity).state = state)),
    beginTurn: (identity) => Effect.sync(() => void (get(identity).state = "busy")),
    endTurn: (identity) =>
      Effect.suspend(() => {
        const e = get(identity)
        e.state = "idle"
        const waiting = e.boundary
        e.boundary = []
        return Effect.forEach(waiting, (d) => Deferred.succeed(d, undefined), { discard: true })
      }),
    reloads: (identity) => get(identity).reloads,
    journal,
    holdNextReload: (identity) =>
      Effect.gen(function*() {
        const hold = { started: yield* Deferred.make<void>(), release: yield* Deferred.make<void>() }
        get(identity).hold = hold
        return hold
      }),
    failNextReload: (identity, detail) => Effect.sync(() => void (get(identity).fail = detail))
  }
})
