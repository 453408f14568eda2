/**
 * The capability stores (declarations, peers, endpoint records, the host configuration) on the
 * state root the operator chose, for the verbs that only read them: they run no command and take
 * no lock, so they load neither the live application nor the loader.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import * as CapabilityServices from "../../layers/CapabilityServices.ts"
import { Invocation } from "../invocation.ts"
import { resolveRoot } from "../options.ts"

/** The capability stores on the root of `--root`, else `$CITY_ROOT`, else `~/.city`. */
export const capabilityStores = (flag: Option.Option<string>) =>
  Layer.unwrapEffect(Effect.map(Invocation, (i) => CapabilityServices.layer({ root: resolveRoot(flag, i) })))
