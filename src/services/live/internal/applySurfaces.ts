/**
 * Applying surfaces to a live endpoint (docs/capability-plugin-lifecycle.md, "Applying surfaces
 * to a live endpoint"): `converge` records an owed reload for each live endpoint and applies it at
 * once to the idle ones; `rest` settles what is owed to endpoints known to be asleep. What each
 * status comes to is in the Applier module's comment.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Application } from "../../../schema/Live.ts"
import { identityOf } from "../../../schema/Outcome.ts"
import type { EndpointHostShape, EndpointRef } from "../EndpointHost.ts"
import type { Fingerprints } from "../Fingerprints.ts"
import type { makeOwedWork } from "../OwedWork.ts"
import { type EndpointKey, isOwed, type Reloads } from "../../owed/Reloads.ts"

/**
 * The runtime application of one endpoint.
 * @since 0.1.0
 * @category models
 */
export interface Applied {
  /** The endpoint, as `<runtime>-<personality>`. */
  readonly identity: string
  /** What the runtime application came to: applied, pending, asleep, foreign or failed. */
  readonly application: Application
  /** Why, when the outcome needs a reason (the failure, the foreign owner, the endpoint's state). */
  readonly detail?: string
}

/**
 * `converge` and `rest` over the endpoint host and the owed-work store; `wake` wakes the worker.
 * @since 0.1.0
 * @category internals
 */
export const makeConverge = (deps: {
  readonly endpointHost: EndpointHostShape
  readonly reloads: Reloads["Type"]
  readonly fingerprints: Fingerprints["Type"]
  /** An endpoint's owed reloads applied, serialized with the rest of its work. */
  readonly reloadOwed: ReturnType<typeof makeOwedWork>["reloadOwed"]
  readonly wake: Effect.Effect<void>
}) => {
  const { fingerprints, endpointHost, reloadOwed, reloads, wake } = deps

  /** The endpoints that owe a reload, from one listing of the records; `None` if it failed. */
  const owedKeys = Effect.map(
    reloads.list,
    (records) => new Set(records.filter(isOwed).map((r) => `${r.personality}\u0000${r.runtime}`))
  ).pipe(Effect.option)

  /** Settles a reload owed to an endpoint at rest; only an existing record needs it (no lock otherwise). */
  const settleResting = (key: EndpointKey, owed: Option.Option<ReadonlySet<string>>) =>
    Option.match(owed, {
      // The listing failed: each record is read on its own, as the listing would have.
      onNone: () => Effect.flatMap(reloads.get(key), (r) => Option.isSome(r) && isOwed(r.value) ? reloads.settle(key) : Effect.void),
      onSome: (keys) => keys.has(`${key.personality}\u0000${key.runtime}`) ? reloads.settle(key) : Effect.void
    }).pipe(Effect.ignore)

  const rest = (keys: ReadonlyArray<EndpointKey>) =>
    keys.length === 0
      ? Effect.succeed([])
      : Effect.flatMap(owedKeys, (owed) =>
        Effect.forEach(keys, (key) =>
          Effect.as(settleResting(key, owed), {
            identity: identityOf(key.runtime, key.personality),
            application: "asleep" as const,
            detail: "asleep"
          })))

  const converge = (targets: ReadonlyArray<EndpointRef>, reason: string, capability?: string) =>
    Effect.gen(function*() {
      const states = yield* Effect.forEach(targets, (ref) => Effect.either(endpointHost.status(ref)), { concurrency: 8 })
      const live = targets.filter((_, i) => {
        const s = states[i]
        return s?._tag === "Right" && (s.right === "idle" || s.right === "busy")
      })
      const requested = yield* Effect.either(reloads.request(live, reason, capability))
      // The verb's own writes are what the owed reload will read: no second reload for them.
      const changes = yield* fingerprints.poll(live).pipe(Effect.orElseSucceed(() => []))
      yield* fingerprints.accept(changes).pipe(Effect.ignore)
      // Asleep and stopped endpoints only settle a record that owes a reload: one listing of the
      // records answers for all of them (a sweep has hundreds; usually none owes anything).
      const resting = states.some((s) => s?._tag === "Right" && (s.right === "asleep" || s.right === "stopped"))
      const owed = resting ? yield* owedKeys : Option.some(new Set<string>())
      const results = yield* Effect.forEach(targets, (ref, i): Effect.Effect<Applied> => {
        const s = states[i]
        const identity = ref.identity
        if (s === undefined || s._tag === "Left") {
          return Effect.succeed({ identity, application: "failed", detail: s?._tag === "Left" ? s.left.message : "no status" })
        }
        switch (s.right) {
          case "foreign":
            return Effect.succeed({ identity, application: "foreign", detail: "owned by an outside service manager; not reloaded" })
          case "asleep":
          case "stopped":
            return Effect.as(settleResting(ref, owed), { identity, application: "asleep", detail: s.right })
          case "busy":
            return Effect.succeed(
              requested._tag === "Left"
                ? { identity, application: "failed", detail: `cannot record the owed reload: ${requested.left.message}` }
                : { identity, application: "pending", detail: "reload owed after the current Turn" }
            )
          case "idle":
            if (requested._tag === "Left") {
              return Effect.succeed({ identity, application: "failed", detail: `cannot record the owed reload: ${requested.left.message}` })
            }
            return reloadOwed(ref).pipe(
              // Nothing left to claim: applied (by us, or meanwhile by the worker), or held by another process.
              Effect.flatMap(() => Effect.orElseSucceed(reloads.get(ref), () => Option.none())),
              Effect.map((left): Applied =>
                Option.isSome(left) && isOwed(left.value)
                  ? { identity, application: "pending", detail: "another process is applying it" }
                  : { identity, application: "applied" }
              ),
              Effect.catchAll((e) =>
                Effect.succeed<Applied>({ identity, application: "failed", detail: e._tag === "EndpointError" && e.reason === "OwedWorkFailed" ? e.detail ?? e.message : e.message })
              )
            )
        }
      }, { concurrency: 4 })
      yield* wake
      return results
    })

  return { converge, rest }
}
