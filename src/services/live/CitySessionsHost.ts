/**
 * The "City sessions" endpoint host: each endpoint hosted as a City Session in this process
 * (docs/design.md, "Capabilities": one that hosts endpoints as City Sessions). A hosting is one Agent and one Workspace named by the endpoint's
 * identity, and a Session that is replaced at each reload.
 *
 * - **busy** = a Turn of the current Session is running; **idle** otherwise; **asleep** = not
 *   launched here (or retired); **stopped** = `stop` set the stop flag (only `launch` clears it;
 *   reload never does).
 * - **reload** runs at the Session's next Turn boundary (`session.atNextBoundary`): the Session is
 *   replaced by a fresh one that re-reads the endpoint's launch-read files, so the tools it lists
 *   and can call are the current surfaces' (`ToolSurface`). The conversation history is the
 *   hosting's transcript, carried across the replacement: a reload resumes the dialogue, it is not
 *   a fresh start. A Turn waiting for the old Session moves to the new one.
 * - The tool set is fixed per Session: a Turn running while surfaces change keeps the tools its
 *   Session launched with; the reload after it brings the new ones.
 * - **retire** fences input (new Turns are refused with `EndpointNotHosted`), waits for the
 *   boundary, then removes the Agent and Workspace. **kill** interrupts running Turns and removes
 *   them now.
 * - `onLaunch` runs after each launch and reload (the Applier records the fingerprint there).
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { SessionError } from "../../schema/Errors.ts"
import type { EndpointError, EndpointState } from "../../schema/Live.ts"
import type { EndpointHostShape, EndpointRef } from "./EndpointHost.ts"
import type { HostedTurn, TranscriptEntry } from "./HostedTurn.ts"
import * as internal from "./internal/citySessionsHost.ts"

export type { HostedTurn, TranscriptEntry } from "./HostedTurn.ts"

/**
 * The City-sessions host: the EndpointHost, plus launching endpoints and running their Turns.
 * @since 0.1.0
 * @category models
 */
export interface CitySessionsShape {
  /** The EndpointHost of these endpoints: status, reload, retire, kill. */
  readonly host: EndpointHostShape
  /** Hosts the endpoint (no-op when it is hosted); clears its stop flag. */
  readonly launch: (ref: EndpointRef) => Effect.Effect<void, EndpointError>
  /** Sets the stop flag and retires the hosting. */
  readonly stop: (ref: EndpointRef) => Effect.Effect<void, EndpointError>
  /** Runs one Turn of the endpoint's current Session. */
  readonly turn: <A, E, R>(
    ref: EndpointRef,
    body: (turn: HostedTurn) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | EndpointError | SessionError, R>
  /** The endpoint's conversation so far, across reloads; empty when not hosted. */
  readonly transcript: (ref: EndpointRef) => ReadonlyArray<TranscriptEntry>
  /** The tools the current Session lists. */
  readonly tools: (ref: EndpointRef) => ReadonlyArray<string>
  /** Sessions the hosting has had: 1 after launch, +1 per reload; 0 when not hosted. */
  readonly sessionCount: (ref: EndpointRef) => number
}

/**
 * The service tag of the City-sessions host.
 * @since 0.1.0
 * @category tags
 */
export class CitySessionsHost extends Context.Tag("effect-city/CitySessionsHost")<CitySessionsHost, CitySessionsShape>() {}

/**
 * Hooks of the City-sessions host: after each launch and reload, and at each change of an endpoint's state.
 * @since 0.1.0
 * @category constructors
 */
export interface CitySessionsOptions {
  /** After each launch and reload. */
  readonly onLaunch?: (ref: EndpointRef) => Effect.Effect<void>
  /** When the endpoint's state changes: a Turn begins (`busy`) or ends (`idle`), it is retired (`asleep`). */
  readonly onState?: (ref: EndpointRef, state: EndpointState) => Effect.Effect<void>
}

/**
 * The City-sessions host as a layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: CitySessionsOptions = {}) =>
  Layer.effect(CitySessionsHost, internal.make(options))
