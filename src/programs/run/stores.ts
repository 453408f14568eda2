/**
 * The capability stores (declarations, peers, endpoint records, the host configuration) on the
 * state root the operator chose, for the verbs that only read them: they run no command and take
 * no lock, so they load neither the live application nor the loader. On a host of a fleet, the
 * declarations and its peers are the fleet's (`run/cluster.ts`, loaded only then).
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as CapabilityServices from "../../layers/CapabilityServices.ts"
import { layer as fileReloads } from "../../services/owed/Reloads.ts"
import { Invocation } from "../invocation.ts"
import { resolveRoot } from "../options.ts"
import { configuredFleet } from "./fleetConfig.ts"

/** The capability stores on the root of `--root`, else `$CITY_ROOT`, else `~/.city`. */
export const capabilityStores = (flag: Option.Option<string>) =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const root = resolveRoot(flag, yield* Invocation)
    const fleet = yield* configuredFleet(root)
    if (Option.isNone(fleet)) return widenStores(CapabilityServices.layer({ root }))
    return (yield* Effect.promise(() => import("./cluster.ts"))).storesOnFleet(root, fleet.value)
  }))

/** The capability stores and the owed-work store (the host's, in the fleet's database on a fleet). */
export const capabilityAndOwedStores = (flag: Option.Option<string>) =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const root = resolveRoot(flag, yield* Invocation)
    const fleet = yield* configuredFleet(root)
    if (Option.isNone(fleet)) return widenOwed(fileReloads.pipe(Layer.provideMerge(CapabilityServices.layer({ root }))))
    const run = yield* Effect.promise(() => import("./cluster.ts"))
    return run.reloadsOnFleet(root, fleet.value).pipe(Layer.provideMerge(run.storesOnFleet(root, fleet.value)))
  }))

/**
 * On a host of a fleet, a line for each peer file still in the root's `peers/`, which the daemon's
 * next start imports (docs/cluster.md, "Peers from before the fleet"); none on a host alone. Run
 * on the stores of `capabilityStores`.
 */
export const peerFilesWaiting = (flag: Option.Option<string>) =>
  Effect.gen(function*() {
    const fleet = yield* configuredFleet(resolveRoot(flag, yield* Invocation))
    if (Option.isNone(fleet)) return []
    return yield* (yield* Effect.promise(() => import("./cluster.ts"))).peerFilesWaiting(fleet.value)
  })

/** The files' stores, typed as a fleet host's are (their errors include the fleet's). */
const widenStores = (
  layer: ReturnType<typeof CapabilityServices.layer>
): ReturnType<typeof import("./cluster.ts").storesOnFleet> => layer

const widenOwed = (
  layer: Layer.Layer<
    Layer.Layer.Success<typeof fileReloads> | CapabilityServices.CapabilityServices,
    CapabilityServices.CapabilityServicesError
  >
): Layer.Layer<
  Layer.Layer.Success<typeof fileReloads> | CapabilityServices.CapabilityServices,
  Layer.Layer.Error<ReturnType<typeof import("./cluster.ts").storesOnFleet>> | Layer.Layer.Error<ReturnType<typeof import("./cluster.ts").reloadsOnFleet>>
> => layer
