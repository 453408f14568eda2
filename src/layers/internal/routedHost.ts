/**
 * The EndpointHost routed per runtime by its profile's `host` (docs/design.md, "Capabilities":
 * runtimes marked `"city"` are hosted by the `city daemon` as City Sessions, the others are
 * driven by their configured commands).
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { HostConfig } from "../../schema/HostConfig.ts"
import { RuntimeProfiles } from "../../services/capabilities/RuntimeProfiles.ts"
import * as CommandsHost from "../../services/live/CommandsHost.ts"
import { EndpointHost, type EndpointHostShape, route } from "../../services/live/EndpointHost.ts"

/**
 * The runtimes whose profile says the daemon hosts them as City Sessions.
 * @since 0.1.0
 * @category internals
 */
export const cityRuntimes = (config: HostConfig): ReadonlyArray<string> =>
  Object.entries(config.profiles).flatMap(([runtime, p]) => p.host === "city" ? [runtime] : [])

/**
 * The EndpointHost that routes `city` runtimes to `forCity`, the others to the Commands host.
 * @since 0.1.0
 * @category internals
 */
export const routed = <E, R>(forCity: Effect.Effect<EndpointHostShape, E, R>, commands: CommandsHost.CommandsHostConfig) =>
  Layer.effect(
    EndpointHost,
    Effect.gen(function*() {
      const config = (yield* RuntimeProfiles).config
      const fallback = yield* CommandsHost.make(commands)
      const city = cityRuntimes(config)
      if (city.length === 0) return fallback
      const hosted = yield* forCity
      return route(Object.fromEntries(city.map((r) => [r, hosted])), fallback)
    })
  )
