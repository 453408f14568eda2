/**
 * What `city peer list` does (its parameters are in `../peer.ts`): it reads the peer files
 * through the capability stores and runs no command, so it loads neither the live application
 * nor the loader. On a host of a fleet it names each peer file still in the root's `peers/`, which
 * the daemon's next start imports (docs/cluster.md, "Peers from before the fleet").
 * @since 0.1.0
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import type { Peer } from "../../schema/Peer.ts"
import { Listings } from "../../services/capabilities/Listings.ts"
import * as JsonValues from "../jsonValues.ts"
import * as Opt from "../options.ts"
import * as Out from "../output.ts"
import { capabilityStores, peerFilesWaiting } from "./stores.ts"

const peerRow = (p: Peer) => [p.personality, p.default_runtime, p.runtimes.join(","), p.cwd]

/** `peer list` */
export const list = (o: Opt.ReadInput) =>
  Out.runVerb(
    "peer list",
    o.json,
    Effect.gen(function*() {
      const { invalid, peers } = yield* (yield* Listings).peers
      yield* Out.warnInvalid({ invalid })
      // On a host of a fleet, the peer files from before it joined: named until the daemon imports them.
      for (const line of yield* peerFilesWaiting(o.root)) yield* Console.error(Out.safe`city: warning: ${line}`)
      if (o.json) {
        return yield* Out.printDocument("peer list", { ok: true, peers: peers.map(JsonValues.peerJson), invalid: JsonValues.invalidJson(invalid) })
      }
      yield* Console.log(
        peers.length === 0 && invalid.length === 0
          ? "no peers"
          : Out.table(["PERSONALITY", "DEFAULT", "RUNTIMES", "CWD"], [
            ...peers.map(peerRow),
            ...invalid.flatMap((e) =>
              Out.faultRows(e).map(([field, rule]) => ["INVALID", "", "", `${e.file}: ${field === "" ? "" : `${field}: `}${rule}`])
            )
          ])
      )
    }).pipe(Effect.provide(capabilityStores(o.root)))
  )
