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
import * as FileSystem from "@effect/platform/FileSystem"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { SessionClosed } from "../../schema/Errors.ts"
import {
  EndpointHostFailed,
  EndpointNotHosted,
  type EndpointState
} from "../../schema/Live.ts"
import { Runtimes } from "../capabilities/Runtimes.ts"
import { City } from "../city/CityService.ts"
import type { Session } from "../city/Session.ts"
import type { Agent } from "../city/Sessions.ts"
import type { Workspace } from "../city/Workspaces.ts"
import type { EndpointHostShape, EndpointRef } from "./EndpointHost.ts"
import { type HostedTurn, hostedTurn, type TranscriptEntry } from "./HostedTurn.ts"

export type { HostedTurn, TranscriptEntry } from "./HostedTurn.ts"
import { launchFiles } from "./LaunchFiles.ts"
import { readTools, type Tool } from "./ToolSurface.ts"

/**
 * The City-sessions host: the EndpointHost, plus launching endpoints and running their Turns.
 * @since 0.1.0
 * @category models
 */
export interface CitySessionsShape {
  /** The EndpointHost of these endpoints: status, reload, retire, kill. */
  readonly host: EndpointHostShape
  /** Hosts the endpoint (no-op when it is hosted); clears its stop flag. */
  readonly launch: (ref: EndpointRef) => Effect.Effect<void, EndpointHostFailed>
  /** Sets the stop flag and retires the hosting. */
  readonly stop: (ref: EndpointRef) => Effect.Effect<void, EndpointHostFailed>
  /** Runs one Turn of the endpoint's current Session. */
  readonly turn: <A, E, R>(
    ref: EndpointRef,
    body: (turn: HostedTurn) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | EndpointNotHosted | SessionClosed, R>
  /** The endpoint's conversation so far, across reloads; empty when not hosted. */
  readonly transcript: (ref: EndpointRef) => ReadonlyArray<TranscriptEntry>
  /** The tools the current Session lists. */
  readonly tools: (ref: EndpointRef) => ReadonlyArray<string>
  /** Sessions the hosting has had: 1 after launch, +1 per reload; 0 when not hosted. */
  readonly generation: (ref: EndpointRef) => number
}

/**
 * The service tag of the City-sessions host.
 * @since 0.1.0
 * @category tags
 */
export class CitySessionsHost extends Context.Tag("effect-city/CitySessionsHost")<CitySessionsHost, CitySessionsShape>() {}

interface Hosting {
  readonly ref: EndpointRef
  readonly agent: Agent
  readonly workspace: Workspace
  session: Session
  tools: ReadonlyMap<string, Tool>
  generation: number
  fenced: boolean
  readonly transcript: Array<TranscriptEntry>
  readonly running: Set<Fiber.RuntimeFiber<unknown, unknown>>
}

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
 * Builds the City-sessions host on the City in context.
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: CitySessionsOptions = {}): Effect.Effect<
  CitySessionsShape,
  never,
  City | Runtimes | FileSystem.FileSystem
> =>
  Effect.gen(function*() {
    const city = yield* City
    const config = (yield* Runtimes).config
    const hostings = new Map<string, Hosting>()
    const stopped = new Set<string>()
    const onLaunch = (ref: EndpointRef) =>
      Effect.zipRight(options.onLaunch?.(ref) ?? Effect.void, onState(ref, "idle"))
    const onState = options.onState ?? (() => Effect.void)
    const failed = (ref: EndpointRef, operation: string) => (error: { readonly message: string }) =>
      new EndpointHostFailed({ identity: ref.identity, operation, detail: error.message })
    const fs = yield* FileSystem.FileSystem
    const surfaces = (ref: EndpointRef) =>
      Effect.provideService(Effect.flatMap(launchFiles(config, ref), readTools), FileSystem.FileSystem, fs)
    const sessionOf = (h: Hosting) =>
      h.agent.sessions.create({ workspace: h.workspace, id: `${h.ref.identity}#${h.generation}` })

    const launch = (ref: EndpointRef) =>
      Effect.gen(function*() {
        stopped.delete(ref.identity)
        if (hostings.has(ref.identity)) return
        const agent = yield* city.agents.add({ id: ref.identity })
        const workspace = yield* city.workspaces.add({ id: ref.identity, path: ref.cwd })
        const session = yield* agent.sessions.create({ workspace, id: `${ref.identity}#1` })
        const hosting: Hosting = {
          ref,
          agent,
          workspace,
          session,
          tools: yield* surfaces(ref),
          generation: 1,
          fenced: false,
          transcript: [],
          running: new Set()
        }
        hostings.set(ref.identity, hosting)
        yield* onLaunch(ref)
      }).pipe(Effect.mapError(failed(ref, "launch")))

    /** Runs `f` at the next boundary of the hosting's current Session, following replacements. */
    const atBoundary = <A, E>(h: Hosting, f: (session: Session) => Effect.Effect<A, E>): Effect.Effect<A, E | SessionClosed> =>
      Effect.suspend(() => {
        const session = h.session
        return session.atNextBoundary(Effect.suspend(() => f(session))).pipe(
          Effect.catchTag("SessionClosed", (e) => h.session !== session ? atBoundary(h, f) : Effect.fail(e))
        )
      })

    const swap = (h: Hosting, old: Session) =>
      Effect.gen(function*() {
        h.generation++
        h.tools = yield* surfaces(h.ref)
        h.session = yield* sessionOf(h).pipe(Effect.orDie)
        yield* old.close
        yield* onLaunch(h.ref)
      })

    const reload = <A, E>(ref: EndpointRef, claim: Effect.Effect<Option.Option<A>, E>) =>
      Effect.suspend((): Effect.Effect<Option.Option<A>, E | EndpointHostFailed> => {
        const h = hostings.get(ref.identity)
        if (h === undefined || h.fenced || stopped.has(ref.identity)) return Effect.succeed(Option.none())
        return atBoundary(h, (session) =>
          Effect.gen(function*() {
            if (h.session !== session || h.fenced) return Option.none<A>()
            const claimed = yield* claim
            if (Option.isSome(claimed)) yield* swap(h, session)
            return claimed
          })).pipe(
            Effect.catchIf((e): e is SessionClosed => e instanceof SessionClosed, (e) => Effect.fail(failed(ref, "reload")(e)))
          )
      })

    const unhost = (h: Hosting) =>
      Effect.gen(function*() {
        hostings.delete(h.ref.identity)
        yield* onState(h.ref, stopped.has(h.ref.identity) ? "stopped" : "asleep")
        yield* city.agents.remove(h.ref.identity)
        yield* city.workspaces.remove(h.ref.identity).pipe(Effect.ignore)
      })

    const retire = (ref: EndpointRef) =>
      Effect.suspend(() => {
        const h = hostings.get(ref.identity)
        if (h === undefined) return Effect.void
        h.fenced = true
        return atBoundary(h, () => Effect.void).pipe(
          Effect.catchTag("SessionClosed", () => Effect.void),
          Effect.zipRight(unhost(h))
        )
      })

    const kill = (ref: EndpointRef) =>
      Effect.suspend(() => {
        const h = hostings.get(ref.identity)
        if (h === undefined) return Effect.void
        h.fenced = true
        return Effect.zipRight(Fiber.interruptAll([...h.running]), unhost(h))
      })

    const status = (ref: EndpointRef) =>
      Effect.suspend((): Effect.Effect<EndpointState> => {
        if (stopped.has(ref.identity)) return Effect.succeed("stopped")
        const h = hostings.get(ref.identity)
        if (h === undefined) return Effect.succeed("asleep")
        return Effect.map(h.session.status, (s) => s === "closed" ? "asleep" : s)
      })

    const turn = <A, E, R>(ref: EndpointRef, body: (turn: HostedTurn) => Effect.Effect<A, E, R>) => {
      const run: Effect.Effect<A, E | EndpointNotHosted | SessionClosed, R> = Effect.suspend(() => {
        const h = hostings.get(ref.identity)
        if (h === undefined || h.fenced) return Effect.fail(new EndpointNotHosted({ identity: ref.identity }))
        const session = h.session
        return session.turn((t) =>
          Effect.zipRight(
            onState(ref, "busy"),
            Effect.ensuring(body(hostedTurn(h.ref, h, session, t)), onState(ref, "idle"))
          )
        ).pipe(
          Effect.catchTag("SessionClosed", (e) => h.session !== session && !h.fenced ? run : Effect.fail(e))
        )
      })
      return Effect.withFiberRuntime<A, E | EndpointNotHosted | SessionClosed, R>((fiber) => {
        const h = hostings.get(ref.identity)
        h?.running.add(fiber)
        return Effect.ensuring(run, Effect.sync(() => h?.running.delete(fiber)))
      })
    }

    const stop = (ref: EndpointRef) =>
      Effect.zipRight(Effect.sync(() => void stopped.add(ref.identity)), retire(ref))

    return {
      host: { status, reload, retire, kill },
      launch,
      stop,
      turn,
      transcript: (ref) => [...(hostings.get(ref.identity)?.transcript ?? [])],
      tools: (ref) => [...(hostings.get(ref.identity)?.tools.keys() ?? [])].sort(),
      generation: (ref) => hostings.get(ref.identity)?.generation ?? 0
    } satisfies CitySessionsShape
  })

/**
 * The City-sessions host as a layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: CitySessionsOptions = {}) =>
  Layer.effect(CitySessionsHost, make(options))
