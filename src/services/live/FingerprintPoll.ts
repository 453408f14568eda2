/**
 * The fingerprint watcher of the daemon (docs/capability-plugin-lifecycle.md, "Writers outside the
 * core": "the daemon compares it every few seconds. A difference owes one reload, applied at the
 * next turn boundary exactly as above").
 *
 * Each pass polls every endpoint's launch-read files (Fingerprints). A difference is first checked
 * against the stored baseline (a `city` verb in another process may have accepted its own writes
 * as the baseline meanwhile); what still differs owes one reload if the endpoint is live (idle or
 * busy), and nothing if it is asleep or stopped (its next launch reads the files) or foreign. The
 * observed state then becomes the baseline, so one difference owes exactly one reload.
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { StateRootError } from "../../schema/CapabilityErrors.ts"
import { RuntimeProfiles } from "../capabilities/RuntimeProfiles.ts"
import { Peers } from "../capabilities/Peers.ts"
import { StateRoot } from "../root/StateRoot.ts"
import { Applier } from "./Applier.ts"
import { EndpointHost, type EndpointRef } from "./EndpointHost.ts"
import { makeRefs } from "./Endpoints.ts"
import { Fingerprints } from "./Fingerprints.ts"
import { type Place, placesOf, resolveTemplates } from "./LaunchFiles.ts"
import * as LaunchFileWatch from "./LaunchFileWatch.ts"
import { Reloads } from "../owed/Reloads.ts"

/** Every endpoint of the state root now. */
const allRefs = Effect.flatMap(
  Effect.all([RuntimeProfiles, Peers, StateRoot]),
  ([runtimes, peers, state]) => makeRefs(runtimes, peers, state).all
)

/**
 * Compares these endpoints with their baselines and owes a reload for each difference on a live
 * endpoint (`byContent`: every file is read, for endpoints a watch saw an event for). The
 * identities that were owed a reload.
 * @since 0.1.0
 * @category constructors
 */
export const check = (refs: ReadonlyArray<EndpointRef>, options?: { readonly byContent?: boolean }) =>
  Effect.gen(function*() {
    const fingerprints = yield* Fingerprints
    const reloads = yield* Reloads
    const endpointHost = yield* EndpointHost
    const applier = yield* Applier
    const first = yield* fingerprints.poll(refs, options)
    if (first.length === 0) return []
    yield* Effect.forEach(first, (c) => fingerprints.forget(c.ref), { discard: true })
    const changes = yield* fingerprints.poll(first.map((c) => c.ref), options)
    const owed: Array<string> = []
    for (const change of changes) {
      const state = yield* Effect.either(endpointHost.status(change.ref))
      if (state._tag === "Left") {
        yield* Effect.logWarning(`surfaces changed, status unknown: ${state.left.message}`).pipe(
          Effect.annotateLogs({ endpoint: change.ref.identity })
        )
        continue // retried at the next pass: the baseline is not accepted
      }
      if (state.right === "idle" || state.right === "busy") {
        yield* reloads.request([change.ref], `surfaces changed: ${change.changed.join(", ")}`)
        owed.push(change.ref.identity)
      }
      yield* fingerprints.accept([change])
      yield* Effect.logInfo(
        state.right === "idle" || state.right === "busy" ? "surfaces changed: reload owed" : `surfaces changed: endpoint ${state.right}, nothing owed`
      ).pipe(Effect.annotateLogs({ endpoint: change.ref.identity, files: change.changed.join(",") }))
    }
    if (owed.length > 0) yield* applier.wake
    return owed
  })

/**
 * One pass over every endpoint; the identities that were owed a reload.
 * @since 0.1.0
 * @category constructors
 */
export const pass = Effect.flatMap(allRefs, (refs) => check(refs))

/**
 * Watches every endpoint's launch-read folders and checks an endpoint as soon as an event marks it;
 * takes the list of endpoints again every `interval` (a new peer is watched from then on), and polls
 * every endpoint every `poll`, the safety net for what watching misses. Checks run one at a time,
 * so one difference owes one reload. Failures are logged and the loops go on.
 * @since 0.1.0
 * @category constructors
 */
export const run = (options: {
  readonly interval: Duration.DurationInput
  readonly poll: Duration.DurationInput
  /** The endpoint list to watch (the daemon's `EndpointList`); by default every endpoint read each time. */
  readonly endpoints?: Effect.Effect<ReadonlyArray<EndpointRef>, StateRootError>
}) =>
  Effect.scoped(Effect.gen(function*() {
    const watch = yield* LaunchFileWatch.make
    const endpoints = options.endpoints ?? allRefs
    const config = (yield* RuntimeProfiles).config
    const one = yield* Effect.makeSemaphore(1)
    const logged = <A, E extends { readonly message: string }, R>(what: string, effect: Effect.Effect<A, E, R>) =>
      Effect.catchAll(effect, (e) => Effect.logError(`fingerprint ${what} failed: ${e.message}`))
    const every = <A, E extends { readonly message: string }, R>(
      what: string,
      interval: Duration.DurationInput,
      effect: Effect.Effect<A, E, R>
    ) => Effect.forever(Effect.zipRight(logged(what, effect), Effect.sleep(interval)))
    // The same list (the EndpointList's answer when no peer changed) is given to the watch as the
    // same array, which then only sets up again the watches it lost.
    let last: readonly [ReadonlyArray<EndpointRef>, ReadonlyArray<readonly [EndpointRef, ReadonlyArray<Place>]>] | undefined
    const watched = Effect.flatMap(endpoints, (refs) => {
      if (last === undefined || last[0] !== refs) {
        last = [refs, refs.map((ref) => [ref, placesOf(resolveTemplates(config, ref), ref)] as const)]
      }
      return watch.set(last[1])
    })
    yield* watched.pipe(Effect.catchAll((e) => Effect.logError(`fingerprint watch failed: ${e.message}`)))
    yield* Effect.forkScoped(Effect.forever(
      Effect.flatMap(watch.take, (refs) => logged("check", one.withPermits(1)(check(refs, { byContent: true }))))
    ))
    yield* Effect.forkScoped(Effect.zipRight(Effect.sleep(options.interval), every("watch", options.interval, watched)))
    return yield* every("pass", options.poll, one.withPermits(1)(pass))
  }))
