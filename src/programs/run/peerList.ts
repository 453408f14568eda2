/**
 * What `city peer list` does (its parameters are in `../peer.ts`): it reads the peer files
 * through the capability stores and runs no command, so it loads neither the live application
 * nor the loader.
 * @since 0.1.0
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import type { Peer } from "../../schema/Peer.ts"
import { Listings } from "../../services/capabilities/Listings.ts"
import * as JsonValues from "../jsonValues.ts"
import * as Opt from "../options.ts"
import * as Out from "../output.ts"
import { capabilityStores } from "./stores.ts"

const peerRow = (p: Peer) => [p.personality, p.default_runtime, p.runtimes.join(","), p.cwd]

/** `peer list` */
export const list = (o: Opt.ReadInput) =>
  Out.runVerb(
    "peer list",
    o.json,
    Effect.gen(function*() {
      const { invalid, peers } = yield* (yield* Listings).peers
      yield* Out.warnInvalid({ invalid })
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
