/**
 * The peers store's implementation (Peers.ts): its `DocumentStore` options and `make`.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { CapabilityError } from "../../../schema/CapabilityErrors.ts"
import { InvalidFile } from "../../../schema/FileErrors.ts"
import { isName } from "../../../schema/Name.ts"
import { Peer } from "../../../schema/Peer.ts"
import { layout } from "../../root/CityRoot.ts"
import * as DocumentStore from "../DocumentStore.ts"
import { RuntimeProfiles } from "../RuntimeProfiles.ts"
import { StateRoot } from "../../root/StateRoot.ts"

const storeOptions: DocumentStore.DocumentStoreOptions<Peer, typeof Peer.Encoded, InvalidFile> = {
  dir: layout.peers,
  schema: Peer,
  invalid: (file, faults) => new InvalidFile({ reason: "PeerFile", file, ...faults }),
  key: { field: "personality", of: (peer) => peer.personality },
  isStem: isName,
  namingRule: "is not a peer file: expected <personality>.json"
}

/**
 * Validates the text of a peer file: JSON, every Schema rule, then "equals the file stem"; every
 * fault at once.
 * @since 0.1.0
 * @category utils
 */
export const validate = DocumentStore.decoder(storeOptions)

/**
 * The peer's private directories on this host's disk (one per runtime profile that has one, e.g.
 * `state/opencode/<p>/`): removing one runtime's, or all of them. Every peer store purges so.
 * @since 0.1.0
 * @category utils
 */
export const privateDirs = Effect.gen(function*() {
  const state = yield* StateRoot
  const profiles = yield* RuntimeProfiles
  const purgeRuntime = (personality: string, runtime: string) =>
    Option.match(profiles.privateDir(runtime, personality), {
      onNone: () => Effect.void,
      onSome: (dir) => state.remove(dir)
    })
  const purgeAll = (personality: string) =>
    Effect.forEach(Object.keys(profiles.config.profiles), (runtime) => purgeRuntime(personality, runtime), { discard: true })
  return { purgeRuntime, purgeAll }
})

/**
 * Makes the peer store on the state root.
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const state = yield* StateRoot
  const store = yield* DocumentStore.make(storeOptions)
  const dirs = yield* privateDirs

  const get = (personality: string) =>
    Effect.flatMap(store.read(personality), (found) =>
      Option.match(found, {
        onNone: () => Effect.fail(new CapabilityError({ reason: "UnknownPeer", personality, file: store.file(personality) })),
        onSome: Effect.succeed
      }))

  const exists = (personality: string) =>
    Effect.map(state.inspect(`${layout.peers}/${personality}.json`), Option.isSome)

  // The private folders first, the peer file last: a purge a crash cut is done again while the
  // file is there (PeerJoints.ts, removePeer).
  const purge = (personality: string) => Effect.zipRight(dirs.purgeAll(personality), store.remove(personality))

  return { get, exists, put: store.write, purge, purgeRuntime: dirs.purgeRuntime, file: store.file, scan: store.list }
})
