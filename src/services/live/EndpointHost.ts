/**
 * The runtime side of an endpoint (docs/capability-plugin-lifecycle.md, "Applying surfaces to a
 * live endpoint"; docs/design.md, "Capabilities": "The runtime application goes through an
 * `EndpointHost` service (status: idle / busy / asleep / stopped / foreign; reload keeping
 * history; retire; kill)").
 *
 * Three implementations ship:
 * - `CitySessionsHost`: endpoints hosted as City Sessions in this process;
 * - `CommandsHost`: endpoints of runtimes outside the process, driven by the argv commands of
 *   their runtime profile in `host.json`;
 * - `ScriptedHost`: for tests, driven by the test.
 *
 * Contract of every implementation:
 * - `reload` keeps the conversation history and happens at a Turn boundary: now if the endpoint
 *   is idle, else after its current Turn, never interrupting it. It never changes the default
 *   runtime or a stop flag; a reload of an asleep or stopped endpoint does nothing.
 * - `retire` fences input (no new Turn starts), waits for the boundary (proves idle), then removes
 *   the hosting; `kill` removes it now, interrupting a running Turn.
 * - A `foreign` endpoint is never reloaded, retired or killed by the core: callers check first.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { EndpointError, EndpointState } from "../../schema/Live.ts"
import { identityOf } from "../../schema/Outcome.ts"
import type { Peer } from "../../schema/Peer.ts"

/**
 * One endpoint with what a host needs to reach it: its cwd and its private directory (absolute).
 * @since 0.1.0
 * @category models
 */
export interface EndpointRef {
  /** The peer's personality. */
  readonly personality: string
  /** The runtime. */
  readonly runtime: string
  /** `<runtime>-<personality>`, as in logs and output. */
  readonly identity: string
  /** The peer's working directory. */
  readonly cwd: string
  /** The endpoint's private directory (absolute), if its runtime has one. */
  readonly privateDir: Option.Option<string>
}

/**
 * The reference of (peer, runtime); `privateDir` is the absolute private directory, if any.
 * @since 0.1.0
 * @category constructors
 */
export const refOf = (peer: Peer, runtime: string, privateDir: Option.Option<string>): EndpointRef => ({
  personality: peer.personality,
  runtime,
  identity: identityOf(runtime, peer.personality),
  cwd: peer.cwd,
  privateDir
})

/**
 * What every endpoint host offers: status, reload at the Turn boundary keeping history, retire and kill.
 * @since 0.1.0
 * @category models
 */
export interface EndpointHostShape {
  /** The endpoint's state now: idle, busy, asleep, stopped or foreign. */
  readonly status: (ref: EndpointRef) => Effect.Effect<EndpointState, EndpointError>
  /**
   * At the next Turn boundary (now if idle) runs `claim`; if it yields a value, reloads the
   * endpoint keeping its conversation history, and returns that value. Claiming at the boundary
   * (not before waiting for it) is what lets requests made during a Turn coalesce.
   */
  readonly reload: <A, E>(
    ref: EndpointRef,
    claim: Effect.Effect<Option.Option<A>, E>
  ) => Effect.Effect<Option.Option<A>, E | EndpointError>
  /** Fences input, waits for the Turn boundary, removes the hosting. */
  readonly retire: (ref: EndpointRef) => Effect.Effect<void, EndpointError>
  /** Removes the hosting now, interrupting a running Turn. */
  readonly kill: (ref: EndpointRef) => Effect.Effect<void, EndpointError>
  /**
   * The endpoint is hosted by another process (the `city daemon`), which applies owed work to it:
   * here `reload` and `retire` only wait (bounded) for that process to do it.
   */
  readonly appliedElsewhere?: (ref: EndpointRef) => boolean
  /**
   * This host never reaches the runtime's endpoints (the Commands host without a `status`
   * command): their status is `asleep` without asking, so live application has nothing to do for
   * them but settle a reload owed to one.
   */
  readonly unreachable?: (runtime: string) => boolean
}

/**
 * The service tag of the endpoint host in use.
 * @since 0.1.0
 * @category tags
 */
export class EndpointHost extends Context.Tag("effect-city/EndpointHost")<EndpointHost, EndpointHostShape>() {}

/**
 * Routes each runtime to its own host (e.g. City Sessions for one runtime, commands for the
 * others); runtimes not listed go to `fallback`.
 * @since 0.1.0
 * @category combinators
 */
export const route = (
  byRuntime: Readonly<Record<string, EndpointHostShape>>,
  fallback: EndpointHostShape
): EndpointHostShape => {
  const pick = (ref: EndpointRef) => byRuntime[ref.runtime] ?? fallback
  return {
    status: (ref) => pick(ref).status(ref),
    reload: (ref, claim) => pick(ref).reload(ref, claim),
    retire: (ref) => pick(ref).retire(ref),
    kill: (ref) => pick(ref).kill(ref),
    appliedElsewhere: (ref) => pick(ref).appliedElsewhere?.(ref) ?? false,
    unreachable: (runtime) => (byRuntime[runtime] ?? fallback).unreachable?.(runtime) ?? false
  }
}

