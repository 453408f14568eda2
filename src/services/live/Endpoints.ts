/**
 * Endpoint references for the live services: from a (personality, runtime) key (an owed-work
 * record) or for every endpoint of every peer (the fingerprint watcher). An endpoint here is a
 * (peer, agent runtime) pair: live application concerns runtimes the host runs as agents.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { StateRootError } from "../../schema/CapabilityErrors.ts"
import type { Peer } from "../../schema/Peer.ts"
import type { RuntimeProfiles } from "../capabilities/RuntimeProfiles.ts"
import type { Peers } from "../capabilities/Peers.ts"
import type { StateRoot } from "../root/StateRoot.ts"
import { type EndpointRef, refOf } from "./EndpointHost.ts"
import type { EndpointKey } from "../owed/Reloads.ts"

/**
 * Endpoint references for the live services: from a peer and runtime, from an owed-work key, or for every endpoint.
 * @since 0.1.0
 * @category constructors
 */
export const makeRefs = (host: RuntimeProfiles["Type"], peers: Peers["Type"], state: StateRoot["Type"]) => {
  const of = (peer: Peer, runtime: string): EndpointRef =>
    refOf(peer, runtime, Option.map(host.privateDir(runtime, peer.personality), state.resolve))

  /**
   * The endpoint of a key, if its peer still declares that agent runtime. A peer that is gone or
   * whose file is invalid has no endpoint; a peer that cannot be read now (`StateError`: the disk,
   * or the fleet's database, failing) is a failure, never "gone": whatever is owed to the endpoint
   * must stay owed until it can be read.
   */
  const resolve = (key: EndpointKey): Effect.Effect<Option.Option<EndpointRef>, StateRootError> =>
    peers.get(key.personality).pipe(
      Effect.map((peer) =>
        peer.runtimes.includes(key.runtime) && host.isAgent(key.runtime) ? Option.some(of(peer, key.runtime)) : Option.none()
      ),
      Effect.catchAll((error) =>
        error._tag === "StateRootError" && error.reason === "StateError"
          ? Effect.fail(error)
          : Effect.succeed(Option.none<EndpointRef>())
      )
    )

  /**
   * The endpoints of many keys, each peer file read once (a sweep has one key per runtime of
   * each peer): the same answers as `resolve` on each key.
   */
  const resolveAll = (keys: ReadonlyArray<EndpointKey>): Effect.Effect<ReadonlyArray<Option.Option<EndpointRef>>> =>
    Effect.map(
      Effect.forEach(
        [...new Set(keys.map((k) => k.personality))],
        // One after the other: a peer file is read synchronously (StateRoot), so fibers would only add cost.
        (personality) => Effect.map(Effect.option(peers.get(personality)), (peer) => [personality, peer] as const)
      ),
      (read) => {
        const byName = new Map(read)
        return keys.map((key) =>
          Option.flatMap(byName.get(key.personality) ?? Option.none(), (peer) =>
            peer.runtimes.includes(key.runtime) && host.isAgent(key.runtime) ? Option.some(of(peer, key.runtime)) : Option.none())
        )
      }
    )

  /** Every (peer, agent runtime) of every valid peer. */
  const all: Effect.Effect<ReadonlyArray<EndpointRef>, StateRootError> = Effect.map(peers.scan, (scan) =>
    scan.valid.flatMap((peer) => peer.runtimes.filter(host.isAgent).map((runtime) => of(peer, runtime))))

  return { of, resolve, resolveAll, all }
}
