/**
 * Peers from before the fleet (docs/cluster.md, "Peers from before the fleet"): a host whose
 * `peers/` folder holds peer files when it joins a fleet brings them in at its daemon's start, one
 * line per file, so nothing the operator created on the host alone vanishes from `city peer list`
 * and `city fleet` without a word.
 *
 * What a look finds, per file of the root's `peers/` (read by the file store, through the one
 * reader):
 * - `new`: the fleet has no peer of that name for this host: the daemon's start imports it (a row
 *   in the fleet's peer store of this host), then moves the file to `state/imported-peers/`;
 * - `same`: the fleet already holds the same peer for this host (an import cut short, or a copy):
 *   the file is moved, nothing is written;
 * - `differs`: the fleet already holds another peer of that name for this host: the fleet's is
 *   the one used; the file is left where it is and named at every start, with the way out;
 * - `invalid`: the file cannot be read or decoded: left where it is and named at every start, as
 *   an invalid peer file is on one host.
 *
 * Decisions where the spec is silent:
 * - the import is the daemon's (the one process per root, under the root lock), not a verb's: the
 *   first start on the fleet is the join, and a verb that only reads writes nothing. A verb that
 *   lists peers on a host of a fleet (`peer list`) names every file still there (`waiting`);
 * - a file is moved, not deleted: the copy in `state/imported-peers/` is what a host that leaves
 *   the fleet puts back, and a file left in `peers/` would be imported again after the fleet's
 *   peer is removed;
 * - the fleet's peer store is the `Peers` of the context (on a host of a fleet, its rows in the
 *   fleet's database); the files are read by the file store of the root (`Peers.layer`).
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { StateRootError } from "../../schema/CapabilityErrors.ts"
import type { InvalidFile } from "../../schema/FileErrors.ts"
import { Peer } from "../../schema/Peer.ts"
import { oneLine } from "../../schema/OneLine.ts"
import { layout } from "../root/CityRoot.ts"
import * as Peers from "../capabilities/Peers.ts"
import { StateRoot } from "../root/StateRoot.ts"

/**
 * What a look at one peer file of the root found.
 * @since 0.1.0
 * @category models
 */
export type Found =
  | { readonly _tag: "new" | "same" | "differs"; readonly peer: Peer; readonly file: string }
  | { readonly _tag: "invalid"; readonly error: InvalidFile }

/** Two peers are the same when they encode to the same document. */
const encode = Schema.encodeSync(Peer)
const same = (a: Peer, b: Peer) => JSON.stringify(encode(a)) === JSON.stringify(encode(b))

/**
 * Every peer file of the root, judged against the fleet's peers of this host (the `Peers` of the
 * context). Reads only.
 * @since 0.1.0
 * @category constructors
 */
export const look = Effect.gen(function*() {
  const fleet = yield* Peers.Peers
  const files = yield* Effect.provide(Peers.Peers, Peers.layer)
  const scanned = yield* files.scan
  const found = yield* Effect.forEach(scanned.valid, (peer) => {
    const file = files.file(peer.personality)
    return fleet.get(peer.personality).pipe(
      Effect.map((held): Found => ({ _tag: same(held, peer) ? "same" : "differs", peer, file })),
      Effect.catchTags({
        // `get`'s one CapabilityError is UnknownPeer: no fleet row of that name.
        CapabilityError: () => Effect.succeed<Found>({ _tag: "new", peer, file }),
        // A fleet row of that name that cannot be read is not this peer: the file waits, named.
        InvalidFile: () => Effect.succeed<Found>({ _tag: "differs", peer, file })
      })
    )
  })
  return [...found, ...scanned.invalid.map((error): Found => ({ _tag: "invalid", error }))]
})

/**
 * The line that says what the daemon's start did, or does not do, with one file of `host`.
 * @since 0.1.0
 * @category utils
 */
export const line = (host: string, found: Found, moved?: string): string => {
  switch (found._tag) {
    case "new":
      return `peer ${found.peer.personality} imported into the fleet as host ${host}'s from ${found.file}` +
        (moved === undefined ? "" : `; the file moved to ${moved}`)
    case "same":
      return `peer ${found.peer.personality} is already in the fleet as host ${host}'s, the same as ${found.file}` +
        (moved === undefined ? "" : `; the file moved to ${moved}`)
    case "differs":
      return `${found.file} is not imported: the fleet already has another peer ${found.peer.personality} of host ${host}, ` +
        `which is the one used; delete the file, or remove the fleet's (city peer remove ${found.peer.personality}) ` +
        "and start the daemon again to import it"
    case "invalid":
      return `${oneLine(found.error.message, 400)}; it is not imported into the fleet: fix or delete it, ` +
        "and the next start of the daemon imports it"
  }
}

/**
 * The lines a verb that lists peers on a host of a fleet prints about the files still in `peers/`:
 * what the daemon's next start does with each.
 * @since 0.1.0
 * @category constructors
 */
export const waiting = (host: string) =>
  Effect.map(look, (found) =>
    found.map((f) =>
      f._tag === "new"
        ? `${f.file} is not in the fleet yet: the next start of city daemon imports it as host ${host}'s peer ${f.peer.personality}`
        : f._tag === "same"
        ? `${f.file} is already in the fleet as host ${host}'s peer ${f.peer.personality}: the next start of city daemon moves it away`
        : line(host, f)
    ))

/**
 * The daemon's start on a fleet: under the root lock, imports every `new` file into the fleet's
 * peers of `host`, moves every `new` and `same` file to `state/imported-peers/`, and logs one line
 * per file (a warning for a file left where it is). What it found.
 * @since 0.1.0
 * @category constructors
 */
export const run = (host: string): Effect.Effect<
  ReadonlyArray<Found>,
  StateRootError,
  Peers.Peers | StateRoot | Layer.Layer.Context<typeof Peers.layer>
> =>
  Effect.scoped(Effect.gen(function*() {
    const state = yield* StateRoot
    const fleet = yield* Peers.Peers
    yield* state.lock
    const found = yield* look
    for (const f of found) {
      if (f._tag === "differs" || f._tag === "invalid") {
        yield* Effect.logWarning(line(host, f))
        continue
      }
      const name = f.peer.personality
      if (f._tag === "new") yield* fleet.put(f.peer)
      // The file's own text, kept as it was, then the file goes: a crash between the two leaves
      // it in `peers/`, where the next start finds it `same` and moves it.
      const text = yield* state.readText(`${layout.peers}/${name}.json`)
      const moved = `${layout.importedPeers}/${name}.json`
      if (Option.isSome(text)) yield* state.writeText(moved, text.value)
      yield* state.remove(`${layout.peers}/${name}.json`)
      yield* Effect.logInfo(line(host, f, state.resolve(moved)))
    }
    return found
  }))
