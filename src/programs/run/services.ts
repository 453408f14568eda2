/**
 * The services a verb runs on: the capability and live-application services on the state root
 * the operator chose (`--root`, else `$CITY_ROOT`, else `~/.city`). On a host of a fleet (its
 * `host.json` names one: `cluster`), the declarations, its peers and its owed work are the fleet's,
 * in its database (`run/cluster.ts`, loaded only then; docs/cluster.md, "Verbs on a fleet").
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as LiveApplication from "../../layers/LiveApplication.ts"
import { Invocation } from "../invocation.ts"
import { resolveRoot } from "../options.ts"
import { configuredFleet } from "./fleetConfig.ts"

/** The capability and live-application services on the state root the operator chose. */
export const live = (flag: Option.Option<string>) =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const i = yield* Invocation
    const config: LiveApplication.LiveConfig = {
      root: resolveRoot(flag, i),
      // On a terminal, a wait for the root lock says who holds it (docs/cli.md, "State root").
      ...(i.stderrIsTTY ? { lockNotice: (text: string) => i.writeStderr(`city: ${text}\n`) } : {})
    }
    const fleet = yield* configuredFleet(config.root)
    if (Option.isNone(fleet)) return widen(LiveApplication.layer(config))
    const run = yield* Effect.promise(() => import("./cluster.ts"))
    return run.liveOnFleet(config, fleet.value)
  }))

/**
 * On a host of a fleet, the fleet as `city status` shows it (`run/cluster.ts`, loaded only then);
 * none on a host alone.
 */
export const fleetStatus = (flag: Option.Option<string>) =>
  Effect.gen(function*() {
    const root = resolveRoot(flag, yield* Invocation)
    const fleet = yield* configuredFleet(root)
    if (Option.isNone(fleet)) return Option.none()
    const run = yield* Effect.promise(() => import("./cluster.ts"))
    return Option.some(yield* run.statusPart(root, fleet.value))
  })

/** The files' services, typed as a fleet host's are (their errors include the fleet's). */
const widen = (layer: ReturnType<typeof LiveApplication.layer>): ReturnType<typeof import("./cluster.ts").liveOnFleet> =>
  layer
