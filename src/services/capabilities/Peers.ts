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
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { StateRootError, CapabilityError } from "../../schema/CapabilityErrors.ts"
import type { InvalidFile } from "../../schema/FileErrors.ts"
import type { Peer } from "../../schema/Peer.ts"
import type * as DocumentStore from "./DocumentStore.ts"
import * as internal from "./internal/peers.ts"

/**
 * The peer files: read, write, purge and list them.
 * @since 0.1.0
 * @category tags
 */
export class Peers extends Context.Tag("effect-city/Peers")<
  Peers,
  {
    /** The peer file of `personality`, validated. */
    readonly get: (personality: string) => Effect.Effect<Peer, CapabilityError | InvalidFile | StateRootError>
    /** Whether a peer file of `personality` exists (valid or not). */
    readonly exists: (personality: string) => Effect.Effect<boolean, StateRootError>
    /** Writes the peer file atomically. Caller holds the root lock. */
    readonly put: (peer: Peer) => Effect.Effect<void, StateRootError>
    /** Removes the peer file and the peer's private directories. Caller holds the root lock. */
    readonly purge: (personality: string) => Effect.Effect<void, StateRootError>
    /** Removes the private directory of one (peer, runtime), if the runtime has one. */
    readonly purgeRuntime: (personality: string, runtime: string) => Effect.Effect<void, StateRootError>
    /** The absolute path of the peer file of `personality`. */
    readonly file: (personality: string) => string
    /** Every peer file on disk, valid or not, in name order. */
    readonly scan: Effect.Effect<DocumentStore.Scan<Peer, InvalidFile>, StateRootError>
  }
>() {}

/**
 * The peer store as a Layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(Peers, internal.make)
