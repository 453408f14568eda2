/**
 * The owed-work applier (docs/capability-plugin-lifecycle.md, "Applying surfaces to a live
 * endpoint" and "remove-runtime on a live endpoint"): converges live endpoints after their
 * surfaces were written, and carries out owed reloads and owed removals at Turn boundaries.
 *
 * `converge(refs)`, per endpoint, from its host's status:
 * - idle → an owed reload is recorded, then applied now → `applied`;
 * - busy → an owed reload is recorded → `pending`; the worker (the daemon, or `start` in a
 *   program that hosts endpoints) applies it after the current Turn;
 * - asleep / stopped → nothing owed (an owed reload is settled: the next launch reads the current
 *   surfaces) → `asleep`;
 * - foreign → never reloaded by us → `foreign`;
 * - a status, scheduling or reload failure → `failed` (a failed reload stays owed, `last_error`).
 * The verb's own surface writes become the fingerprint baseline at once, so the watcher does not
 * owe a second reload for them.
 *
 * `remove(ref, force)`: foreign → refused; `force` → kill now; idle → retired now (fence input,
 * prove idle); asleep / stopped → nothing to retire; busy → an owed removal → `pending`. `now`
 * means the caller removes the endpoint in the call. An endpoint hosted by another process (the
 * daemon) always gets an owed removal (forced or not), which that process carries out: `done` if
 * it did within the host's wait, else `pending`.
 *
 * `drain(key)` applies one endpoint's owed work: a removal (retire at the boundary, then the
 * Provisioner's removal), else reloads until nothing is owed, each claimed, applied at the
 * boundary and completed (Reloads.ts). Work per endpoint is serialized in this process; across
 * processes the claim decides. Decision: an owed removal whose runtime can no longer be removed
 * (it became the default meanwhile) is dropped with a log line; the hosting stays retired.
 *
 * A failed attempt (a reload, an owed removal, or the status they need) stays owed with its
 * backoff (RetryBackoff.ts): `pass` skips an endpoint whose next attempt is not due, so the work is
 * tried again on the schedule, not at every pass, and each attempt logs one line (its
 * `OwedWorkFailed` message: the attempt, the next time, the reason on one line).
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberMap from "effect/FiberMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import type { StateError } from "../../schema/CapabilityErrors.ts"
import type { Application, EndpointState, OwedRecord } from "../../schema/Live.ts"
import { oneLine } from "../../schema/OneLine.ts"
import { identityOf } from "../../schema/Outcome.ts"
import { Runtimes } from "../capabilities/Runtimes.ts"
import { Peers } from "../capabilities/Peers.ts"
import { Provisioner } from "../capabilities/Provisioner.ts"
import { StateRoot } from "../capabilities/StateRoot.ts"
import { EndpointHost, type EndpointRef } from "./EndpointHost.ts"
import { makeRefs } from "./Endpoints.ts"
import { Fingerprints } from "./Fingerprints.ts"
import { makeOwedWork } from "./OwedWork.ts"
import { type EndpointKey, isDue, isOwed, Reloads } from "./Reloads.ts"
import * as KeyedMutex from "../city/KeyedMutex.ts"

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
 * What `remove` decided for a live endpoint: removed now by the caller, already done by the daemon, owed, refused, or failed.
 * @since 0.1.0
 * @category models
 */
export type RemovalDecision =
  | { readonly _tag: "now"; readonly state: EndpointState }
  | { readonly _tag: "done" }
  | { readonly _tag: "pending" }
  | { readonly _tag: "foreign" }
  | { readonly _tag: "failed"; readonly detail: string }

/**
 * The owed-work applier: converges endpoints after surfaces were written, and carries out owed reloads and removals at Turn boundaries.
 * @since 0.1.0
 * @category tags
 */
export class Applier extends Context.Tag("effect-city/Applier")<
  Applier,
  {
    readonly converge: (
      refs: ReadonlyArray<EndpointRef>,
      reason: string,
      capability?: string
    ) => Effect.Effect<ReadonlyArray<Applied>>
    /**
     * Endpoints known to be asleep without asking (`EndpointHost.unreachable`): a reload owed to
     * one is settled (its next launch reads the current surfaces); each is `asleep`.
     */
    readonly rest: (keys: ReadonlyArray<EndpointKey>) => Effect.Effect<ReadonlyArray<Applied>>
    readonly remove: (ref: EndpointRef, force: boolean) => Effect.Effect<RemovalDecision>
    readonly drain: (key: EndpointKey) => Effect.Effect<void>
    /**
     * One pass: a drain for every endpoint with owed work whose next attempt is due (in the
     * worker, if one runs; else inline).
     */
    readonly pass: Effect.Effect<void, StateError>
    /** Runs the worker in the caller's Scope: a pass now, every `interval`, and on `wake`. */
    readonly start: (interval: Duration.DurationInput) => Effect.Effect<void, never, Scope.Scope>
    readonly wake: Effect.Effect<void>
    /** The endpoints whose owed work is being carried out right now (for a shutdown report). */
    readonly inFlight: () => ReadonlyArray<string>
  }
>() {}

/**
 * Builds the Applier from the endpoint host, the owed-work store, the fingerprints and the capability services.
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<
  Applier["Type"],
  never,
  EndpointHost | Reloads | Fingerprints | Peers | Runtimes | StateRoot | Provisioner
> = Effect.gen(function*() {
  const host = yield* EndpointHost
  const reloads = yield* Reloads
  const fingerprints = yield* Fingerprints
  const provisioner = yield* Provisioner
  const refs = makeRefs(yield* Runtimes, yield* Peers, yield* StateRoot)
  // One endpoint's work at a time; the table holds only the endpoints in use (docs/design.md,
  // "Uniqueness and ordering").
  const locks = KeyedMutex.make<string>()
  const serialized = (identity: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    locks.withLock(identity, (restore) => restore(effect), Effect.never)
  let worker: { readonly fibers: FiberMap.FiberMap<string>; readonly signal: Queue.Queue<void> } | undefined

  const { failed, finishRemoval, reloadOwed } = makeOwedWork({ host, reloads, fingerprints, provisioner })

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
      const states = yield* Effect.forEach(targets, (ref) => Effect.either(host.status(ref)), { concurrency: 8 })
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
            return serialized(identity)(reloadOwed(ref)).pipe(
              // Nothing left to claim: applied (by us, or meanwhile by the worker), or held by another process.
              Effect.flatMap(() => Effect.orElseSucceed(reloads.get(ref), () => Option.none())),
              Effect.map((left): Applied =>
                Option.isSome(left) && isOwed(left.value)
                  ? { identity, application: "pending", detail: "another process is applying it" }
                  : { identity, application: "applied" }
              ),
              Effect.catchAll((e) =>
                Effect.succeed<Applied>({ identity, application: "failed", detail: e._tag === "OwedWorkFailed" ? e.reason : e.message })
              )
            )
        }
      }, { concurrency: 4 })
      yield* wake
      return results
    })

  const remove = (ref: EndpointRef, force: boolean) =>
    Effect.gen(function*() {
      const s = yield* host.status(ref)
      if (s === "foreign") return { _tag: "foreign" } as const
      if (host.appliedElsewhere?.(ref) === true && (s === "idle" || s === "busy")) {
        // The daemon hosting it retires (or, forced, kills) and removes it; wait for it (bounded).
        yield* reloads.requestRemoval(ref, force)
        yield* host.retire(ref)
        const left = yield* reloads.get(ref)
        return Option.isNone(left) ? { _tag: "done" } as const : { _tag: "pending" } as const
      }
      if (force) {
        yield* host.kill(ref)
        return { _tag: "now", state: s } as const
      }
      if (s === "busy") {
        yield* reloads.requestRemoval(ref)
        yield* wake
        return { _tag: "pending" } as const
      }
      if (s === "idle") yield* host.retire(ref)
      return { _tag: "now", state: s } as const
    }).pipe(Effect.catchAll((e) => Effect.succeed<RemovalDecision>({ _tag: "failed", detail: e.message })))

  const active = new Set<string>()
  /** One endpoint's owed work, per its record. */
  const apply = (key: EndpointKey, record: OwedRecord) =>
    Effect.gen(function*() {
      const ref = yield* refs.resolve(key)
      // The endpoint is gone (peer removed, runtime dropped): nothing is owed to it any more.
      if (Option.isNone(ref)) return yield* reloads.completeRemoval(key)
      if (record.removal !== undefined) return yield* finishRemoval(ref.value, record.removal.force === true)
      if (!isOwed(record)) return
      const s = yield* host.status(ref.value).pipe(Effect.catchAll((e) => failed(ref.value, "reload", e.message)))
      if (s === "asleep" || s === "stopped" || s === "foreign") {
        yield* reloads.settle(ref.value)
        return yield* Effect.logInfo(`owed reload settled: endpoint is ${s}`)
      }
      active.add(ref.value.identity)
      yield* Effect.ensuring(reloadOwed(ref.value), Effect.sync(() => active.delete(ref.value.identity)))
    }).pipe(Effect.annotateLogs(record.capability === undefined ? {} : { capability: record.capability }))

  const drain = (key: EndpointKey): Effect.Effect<void> =>
    serialized(`${key.runtime}-${key.personality}`)(
      Effect.flatMap(reloads.get(key), (record) => Option.isNone(record) ? Effect.void : apply(key, record.value))
    ).pipe(
      // One line per attempt: a failed attempt's message says which, and when the next one is.
      Effect.catchAll((e) =>
        Effect.logWarning(e._tag === "OwedWorkFailed" ? e.message : `owed work not applied: ${oneLine(e.message, 300)}`)
      ),
      Effect.annotateLogs({ endpoint: `${key.runtime}-${key.personality}` })
    )

  const pass = Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const owed = (yield* reloads.list).filter((record) => isDue(record, now))
    const w = worker
    if (w === undefined) return yield* Effect.forEach(owed, drain, { discard: true, concurrency: 4 })
    for (const record of owed) {
      yield* FiberMap.run(w.fibers, `${record.runtime}-${record.personality}`, drain(record), { onlyIfMissing: true })
    }
  })

  const wake = Effect.suspend(() => worker === undefined ? Effect.void : Queue.offer(worker.signal, undefined)).pipe(
    Effect.asVoid
  )

  const start = (interval: Duration.DurationInput) =>
    Effect.gen(function*() {
      const fibers = yield* FiberMap.make<string>()
      const signal = yield* Queue.sliding<void>(1)
      worker = { fibers, signal }
      yield* Effect.addFinalizer(() => Effect.sync(() => void (worker = undefined)))
      const loop = Effect.gen(function*() {
        for (;;) {
          yield* pass.pipe(Effect.catchAll((e) => Effect.logError(`owed-work pass failed: ${e.message}`)))
          yield* Effect.raceFirst(Queue.take(signal), Effect.sleep(interval))
        }
      })
      yield* Effect.forkScoped(loop)
    })

  return Applier.of({ converge, rest, remove, drain, pass, start, wake, inFlight: () => [...active].sort() })
})

/**
 * Builds the Applier's layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(Applier, make)
