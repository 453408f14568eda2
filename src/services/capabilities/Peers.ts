/**
 * The peers store, `$CITY_ROOT/peers/<personality>.json`: each peer's cwd, its
 * declared runtimes and its default runtime — the first of the three conditions
 * of an endpoint (docs/capability-plugin-lifecycle.md, "Joints (core-owned)":
 * "An **endpoint** is one `(peer, runtime)` pair where the runtime is: declared
 * by the peer; ..."). Pure storage: the joints that run
 * provisioning commands around these writes live in `Provisioner`, which holds
 * the root lock around both. Like the declarations folder, an invalid peer file
 * is reported by `scan`, never skipped silently.
 *
 * `purge` removes the peer file and every core-owned private directory of the
 * peer (one per runtime profile that has one), e.g. `state/opencode/<p>/`.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { type StateError, UnknownPeer } from "../../schema/CapabilityErrors.ts"
import { InvalidFile } from "../../schema/FileErrors.ts"
import { isName } from "../../schema/Name.ts"
import { Peer } from "../../schema/Peer.ts"
import * as DocumentStore from "./DocumentStore.ts"
import { Runtimes } from "./Runtimes.ts"
import { StateRoot } from "./StateRoot.ts"

/**
 * The folder of the peer files, under the state root.
 * @since 0.1.0
 * @category constants
 */
export const peersDir = "peers"

/**
 * The peer files: read, write, purge and list them.
 * @since 0.1.0
 * @category tags
 */
export class Peers extends Context.Tag("effect-city/Peers")<
  Peers,
  {
    readonly get: (personality: string) => Effect.Effect<Peer, UnknownPeer | InvalidFile | StateError>
    readonly exists: (personality: string) => Effect.Effect<boolean, StateError>
    /** Writes the peer file atomically. Caller holds the root lock. */
    readonly put: (peer: Peer) => Effect.Effect<void, StateError>
    /** Removes the peer file and the peer's private directories. Caller holds the root lock. */
    readonly purge: (personality: string) => Effect.Effect<void, StateError>
    /** Removes the private directory of one (peer, runtime), if the runtime has one. */
    readonly purgeRuntime: (personality: string, runtime: string) => Effect.Effect<void, StateError>
    /** The absolute path of the peer file of `personality`. */
    readonly file: (personality: string) => string
    readonly scan: Effect.Effect<DocumentStore.Scan<Peer, InvalidFile>, StateError>
  }
>() {}

const storeOptions: DocumentStore.DocumentStoreOptions<Peer, typeof Peer.Encoded, InvalidFile> = {
  dir: peersDir,
  schema: Peer,
  invalid: (file, field, rule) => new InvalidFile({ reason: "PeerFile", file, field, rule }),
  key: { field: "personality", of: (peer) => peer.personality },
  isStem: isName,
  namingRule: "is not a peer file: expected <personality>.json"
}

/**
 * Validates the text of a peer file: JSON, every Schema rule, then "equals the file stem".
 * @since 0.1.0
 * @category utils
 */
export const validate = DocumentStore.decoder(storeOptions)

/**
 * Makes the peer store on the state root.
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Peers["Type"], never, StateRoot | Runtimes> = Effect.gen(function*() {
  const state = yield* StateRoot
  const host = yield* Runtimes
  const store = yield* DocumentStore.make(storeOptions)

  const get = (personality: string) =>
    Effect.flatMap(store.read(personality), (found) =>
      Option.match(found, {
        onNone: () => Effect.fail(new UnknownPeer({ personality, file: store.file(personality) })),
        onSome: Effect.succeed
      }))

  const exists = (personality: string) => Effect.map(state.inspect(`${peersDir}/${personality}.json`), Option.isSome)

  const purgeRuntime = (personality: string, runtime: string) =>
    Option.match(host.privateDir(runtime, personality), {
      onNone: () => Effect.void,
      onSome: (dir) => state.remove(dir)
    })

  // The private folders first, the peer file last: a purge a crash cut is done again while the
  // file is there (PeerJoints.ts, removePeer).
  const purge = (personality: string) =>
    Effect.gen(function*() {
      for (const runtime of Object.keys(host.config.profiles)) yield* purgeRuntime(personality, runtime)
      yield* store.remove(personality)
    })

  return Peers.of({ get, exists, put: store.write, purge, purgeRuntime, file: store.file, scan: store.list })
})

/**
 * The peer store as a Layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(Peers, make)
