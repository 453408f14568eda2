/**
 * What `city capability list` does (its parameters are in `../capability.ts`): it reads the
 * declarations, the endpoint records and the owed work, and runs no command, so it loads neither
 * the live application nor the loader.
 * @since 0.1.0
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Listings } from "../../services/capabilities/Listings.ts"
import * as JsonValues from "../jsonValues.ts"
import * as Opt from "../options.ts"
import * as Out from "../output.ts"
import * as Live from "./owed.ts"
import { capabilityAndOwedStores } from "./stores.ts"

/** The capability stores and the owed-work records on the state root the operator chose. */
const stores = (flag: Option.Option<string>) => capabilityAndOwedStores(flag)

/** `capability list` */
export const list = (o: Opt.ReadInput) =>
  Out.runVerb(
    "capability list",
    o.json,
    Effect.gen(function*() {
      const overview = yield* (yield* Listings).capabilities
      const owed = yield* Live.owedWork
      yield* Out.warnInvalid(overview)
      if (o.json) {
        yield* Live.warnOwed(owed)
        return yield* Out.printDocument("capability list", {
          ok: true,
          capabilities: overview.capabilities.map((c) => ({
            ...JsonValues.capabilityJson(c.declaration),
            endpoints: c.endpoints.map((e) => ({ peer: e.personality, runtime: e.runtime, last: Option.getOrNull(e.last) }))
          })),
          owed: owed.json,
          daemon: owed.daemon,
          invalid: [...JsonValues.invalidJson(overview.invalid), ...owed.invalidJson]
        })
      }
      const rows = overview.capabilities.flatMap((c) => {
        const head = [c.declaration.capability, c.declaration.version ?? ""]
        if (c.endpoints.length === 0) return [[...head, "(no endpoints)", "", "", "", ""]]
        return c.endpoints.map((e) =>
          Option.match(e.last, {
            onNone: () => [...head, e.personality, e.runtime, "never", "", ""],
            onSome: (r) => [...head, e.personality, e.runtime, r.state, r.occasion, r.at]
          })
        )
      })
      yield* Console.log(
        rows.length === 0
          ? "no capabilities registered"
          : Out.table(["CAPABILITY", "VERSION", "PEER", "RUNTIME", "LAST STATE", "OCCASION", "AT"], rows)
      )
      if (overview.invalid.length > 0) {
        yield* Console.log("")
        yield* Console.log(
          Out.table(["INVALID FILE", "FIELD", "RULE"], overview.invalid.flatMap((e) => Out.faultRows(e).map(([field, rule]) => [e.file, field, rule])))
        )
      }
      yield* Console.log("")
      yield* Live.printOwed(owed)
    }).pipe(Effect.provide(stores(o.root)))
  )
