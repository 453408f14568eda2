/**
 * Wiring of live application (docs/capability-plugin-lifecycle.md): the owed-work store, the fingerprints, the applier and
 * the live joints, over an EndpointHost and the capability services.
 *
 * The EndpointHost is routed per runtime by its profile's `host`: runtimes marked `"city"` are
 * hosted by the `city daemon` as City Sessions, the others are driven by their `commands`.
 * - `layer` (the `city` verbs): `city` runtimes through `DaemonHostedHost` (the daemon applies),
 *   the others through the Commands host;
 * - `services` takes any EndpointHost, e.g. `citySessionsHost` in a program that hosts its
 *   endpoints in process.
 *
 * The endpoint host's Tag and shape (`EndpointHost`, `EndpointRef`) and the City-sessions host's
 * (`CitySessionsHost`, its Turns and transcript) are re-exported here: what a program that hosts
 * endpoints writes against. The daemon's wiring (its own City-sessions host, publishing each
 * endpoint's state for the verbs) is the binary's, in LiveDaemon.ts.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { StateRoot } from "../services/root/StateRoot.ts"
import * as CitySessionsHost from "../services/live/CitySessionsHost.ts"
import * as CitySessionsInternal from "../services/live/internal/citySessionsHost.ts"
import * as CommandsHost from "../services/live/CommandsHost.ts"
import * as DaemonHostedHost from "../services/live/DaemonHostedHost.ts"
import { EndpointHost } from "../services/live/EndpointHost.ts"
import * as Fingerprints from "../services/live/Fingerprints.ts"
import * as Reloads from "../services/owed/Reloads.ts"
import * as CapabilityServices from "./CapabilityServices.ts"
import { layerWithStores, servicesWith } from "./internal/liveServices.ts"


export { type CitySessionsShape, CitySessionsHost, type HostedTurn, type TranscriptEntry } from "../services/live/CitySessionsHost.ts"
export { EndpointHost, type EndpointHostShape, type EndpointRef } from "../services/live/EndpointHost.ts"

/**
 * The live services; they need an EndpointHost and the capability services.
 * @since 0.1.0
 * @category layers
 */
export const services = servicesWith(Reloads.layer)

/**
 * The City-sessions host (as `CitySessionsHost`, to launch endpoints and run their Turns); each
 * launch and reload records the endpoint's fingerprint. Needs a City.
 * @since 0.1.0
 * @category layers
 */
export const citySessions = (options: { readonly publish?: boolean } = {}) =>
  Layer.effect(
    CitySessionsHost.CitySessionsHost,
    Effect.gen(function*() {
      const fingerprints = yield* Fingerprints.Fingerprints
      const state = yield* StateRoot
      const fs = yield* FileSystem.FileSystem
      const publish = options.publish === true
      return yield* CitySessionsInternal.make({
        onLaunch: (ref) => Effect.ignore(fingerprints.record(ref)),
        ...(publish
          ? {
            onState: (ref, s) =>
              DaemonHostedHost.publish(ref, s).pipe(
                Effect.provideService(StateRoot, state),
                Effect.provideService(FileSystem.FileSystem, fs),
                Effect.ignore
              )
          }
          : {})
      })
    })
  ).pipe(Layer.provideMerge(Fingerprints.layer))

/**
 * `citySessions`, also provided as the EndpointHost (every runtime hosted in process).
 * @since 0.1.0
 * @category layers
 */
export const citySessionsHost = Layer.effect(EndpointHost, Effect.map(CitySessionsHost.CitySessionsHost, (c) => c.host)).pipe(
  Layer.provideMerge(citySessions())
)

/**
 * The capability configuration, plus the Commands host's.
 * @since 0.1.0
 * @category models
 */
export interface LiveConfig extends CapabilityServices.CapabilitiesConfig {
  /** Timeouts of the Commands endpoint host. */
  readonly commands?: CommandsHost.CommandsHostConfig
}

/**
 * Every capability and live service on Node, for the `city` verbs.
 * @since 0.1.0
 * @category layers
 */
export const layer = (config: LiveConfig) =>
  layerWithStores(config.commands ?? {}, { reloads: Reloads.layer, capabilities: CapabilityServices.layer(config) })

