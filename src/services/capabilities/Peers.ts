/**
 * The peers store, `$CITY_ROOT/peers/<personality>.json`: each peer's cwd, its
 * declared runtimes and its default runtime — the first of the three conditions
 * of an endpoint (spec/capability-plugin-lifecycle.md, "Joints (core-owned)":
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
import * as Schema from "effect/Schema"
import { InvalidPeerFile, type StateError, UnknownPeer } from "../../schema/CapabilityErrors.ts"
import { isName } from "../../schema/Name.ts"
import { firstIssue } from "../../schema/ParseIssue.ts"
import { Peer } from "../../schema/Peer.ts"
import { Host } from "./Host.ts"
import { type Scan, scanDocuments, StateRoot } from "./StateRoot.ts"

export const peersDir = "peers"

export class Peers extends Context.Tag("effect-city/Peers")<
  Peers,
  {
    readonly get: (personality: string) => Effect.Effect<Peer, UnknownPeer | InvalidPeerFile | StateError>
    readonly exists: (personality: string) => Effect.Effect<boolean, StateError>
    /** Writes the peer file atomically. Caller holds the root lock. */
    readonly put: (peer: Peer) => Effect.Effect<void, StateError>
    /** Removes the peer file and the peer's private directories. Caller holds the root lock. */
    readonly purge: (personality: string) => Effect.Effect<void, StateError>
    /** Removes the private directory of one (peer, runtime), if the runtime has one. */
    readonly purgeRuntime: (personality: string, runtime: string) => Effect.Effect<void, StateError>
    readonly scan: Effect.Effect<Scan<Peer, InvalidPeerFile>, StateError>
  }
>() {}

const decodePeer = Schema.decodeUnknown(Peer, { onExcessProperty: "error" })

export const validate = (file: string, stem: string, text: string): Effect.Effect<Peer, InvalidPeerFile> =>
  Effect.try({
    try: () => JSON.parse(text) as unknown,
    catch: (e) => new InvalidPeerFile({ file, field: "", rule: `not valid JSON (${String(e)})` })
  }).pipe(
    Effect.flatMap((json) =>
      decodePeer(json).pipe(Effect.mapError((e) => new InvalidPeerFile({ file, ...firstIssue(e) })))
    ),
    Effect.filterOrFail(
      (peer) => peer.personality === stem,
      (peer) =>
        new InvalidPeerFile({
          file,
          field: "personality",
          rule: `must equal the file stem "${stem}", got "${peer.personality}"`
        })
    )
  )

export const make: Effect.Effect<Peers["Type"], never, StateRoot | Host> = Effect.gen(function*() {
  const state = yield* StateRoot
  const host = yield* Host
  const relative = (personality: string) => `${peersDir}/${personality}.json`

  const get = (personality: string) =>
    state.readText(relative(personality)).pipe(
      Effect.flatMap((text): Effect.Effect<Peer, UnknownPeer | InvalidPeerFile> =>
        Option.isNone(text)
          ? Effect.fail(new UnknownPeer({ personality, file: state.resolve(relative(personality)) }))
          : validate(state.resolve(relative(personality)), personality, text.value)
      )
    )

  const exists = (personality: string) => Effect.map(state.readText(relative(personality)), Option.isSome)

  const put = (peer: Peer) => state.writeJson(relative(peer.personality), peer)

  const purgeRuntime = (personality: string, runtime: string) =>
    Option.match(host.privateDir(runtime, personality), {
      onNone: () => Effect.void,
      onSome: (dir) => state.remove(dir)
    })

  const purge = (personality: string) =>
    Effect.gen(function*() {
      yield* state.remove(relative(personality))
      for (const runtime of Object.keys(host.config.profiles)) yield* purgeRuntime(personality, runtime)
    })

  const scan = scanDocuments(state, peersDir, {
    invalid: (file, rule) => new InvalidPeerFile({ file, field: "", rule }),
    validate,
    isStem: isName,
    namingRule: "is not a peer file: expected <personality>.json"
  })

  return Peers.of({ get, exists, put, purge, purgeRuntime, scan })
})

export const layer = Layer.effect(Peers, make)
