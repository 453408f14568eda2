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
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type { StateRootError } from "../../schema/CapabilityErrors.ts"
import { Peers } from "../capabilities/Peers.ts"
import { Provisioner } from "../capabilities/Provisioner.ts"
import { RuntimeProfiles } from "../capabilities/RuntimeProfiles.ts"
import { StateRoot } from "../root/StateRoot.ts"
import * as KeyedMutex from "../internal/keyedMutex.ts"
import { EndpointHost, type EndpointRef } from "./EndpointHost.ts"
import { makeRefs } from "./Endpoints.ts"
import { Fingerprints } from "./Fingerprints.ts"
import { type Applied, makeConverge } from "./internal/applySurfaces.ts"
import { makeRemove, type RemovalDecision } from "./internal/liveRemoval.ts"
import { makeOwedWorker } from "./internal/owedWorker.ts"
import { makeOwedWork } from "./OwedWork.ts"
import { type EndpointKey, Reloads } from "../owed/Reloads.ts"

export type { Applied } from "./internal/applySurfaces.ts"
export type { RemovalDecision } from "./internal/liveRemoval.ts"

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
    readonly pass: Effect.Effect<void, StateRootError>
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
  EndpointHost | Reloads | Fingerprints | Peers | RuntimeProfiles | StateRoot | Provisioner | Scope.Scope
> = Effect.gen(function*() {
  const endpointHost = yield* EndpointHost
  const reloads = yield* Reloads
  const fingerprints = yield* Fingerprints
  const provisioner = yield* Provisioner
  const refs = makeRefs(yield* RuntimeProfiles, yield* Peers, yield* StateRoot)
  // One endpoint's work at a time; the table holds only the endpoints in use (docs/design.md,
  // "Uniqueness and ordering").
  const locks = KeyedMutex.make<string>()
  const serialized = (identity: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    locks.withLock(identity, (restore) => restore(effect), Effect.never)
  const owedWork = makeOwedWork({ endpointHost, reloads, fingerprints, provisioner })
  const worker = makeOwedWorker({ endpointHost, reloads, refs, owedWork, serialized })
  const { wake } = worker
  // A converge's reload runs in a fiber of the Applier's own scope, its caller only awaiting it: a
  // caller interrupted (a sweep's call cut when its runner loses its shards) stops waiting, while a
  // reload that ran is still recorded, never run again for the same request.
  const scope = yield* Effect.scope
  const detached = <A, E>(effect: Effect.Effect<A, E>) => Effect.flatMap(Effect.forkIn(effect, scope), Fiber.join)
  const { converge, rest } = makeConverge({
    endpointHost,
    reloads,
    fingerprints,
    reloadOwed: (ref) => detached(serialized(ref.identity)(owedWork.reloadOwed(ref))),
    wake
  })
  const remove = makeRemove({ endpointHost, reloads, wake })

  return Applier.of({ converge, rest, remove, drain: worker.drain, pass: worker.pass, start: worker.start, wake, inFlight: worker.inFlight })
})

/**
 * Builds the Applier's layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.scoped(Applier, make)
