/**
 * The daemon's wiring of live application (docs/live-application.md): the `city` runtimes hosted
 * by the daemon itself as City Sessions (its City-sessions host also publishes each endpoint's
 * state for the verbs), the others driven by their commands. The `city` binary's: no entry point
 * re-exports it.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as CitySessionsHost from "../services/live/CitySessionsHost.ts"
import type * as CommandsHost from "../services/live/CommandsHost.ts"
import * as Reloads from "../services/owed/Reloads.ts"
import { servicesWith } from "./internal/liveServices.ts"
import { routed } from "./internal/routedHost.ts"
import { citySessions } from "./LiveApplication.ts"

/**
 * The live services for the daemon: it hosts the `city` runtimes itself. Needs a City and the
 * capability services on one root (`City.layer` and `CapabilityServices.layer`, or `Loader.city` and
 * `CapabilityServices.layer` as `city daemon` composes them).
 * @since 0.1.0
 * @category layers
 */
export const daemonLayer = (commands: CommandsHost.CommandsHostConfig = {}) => daemonLayerWith(Reloads.layer, commands)

/**
 * The daemon's live services over the owed-work store `reloads` (`daemonLayer` is this over the
 * state root's files; on a host of a fleet, the host's owed-work store on the fleet's database:
 * docs/cluster.md).
 * @since 0.1.0
 * @category layers
 */
export const daemonLayerWith = <E, R>(
  reloads: Layer.Layer<Reloads.Reloads, E, R>,
  commands: CommandsHost.CommandsHostConfig = {}
) =>
  servicesWith(reloads).pipe(
    Layer.provideMerge(routed(Effect.map(CitySessionsHost.CitySessionsHost, (c) => c.host), commands)),
    Layer.provideMerge(citySessions({ publish: true }))
  )
