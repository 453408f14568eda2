/**
 * The City-sessions host's constructor (docs/design.md, "Capabilities": one that hosts endpoints
 * as City Sessions; the behaviour is in the CitySessionsHost module's comment): one hosting per
 * endpoint, an Agent, a Workspace and a Session replaced at each reload.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import { SessionError } from "../../../schema/Errors.ts"
import { EndpointError, type EndpointState } from "../../../schema/Live.ts"
import { RuntimeProfiles } from "../../capabilities/RuntimeProfiles.ts"
import { City } from "../../city/CityService.ts"
import type { Session } from "../../city/Session.ts"
import type { Agent } from "../../city/Sessions.ts"
import type { Workspace } from "../../city/Workspaces.ts"
import type { EndpointRef } from "../EndpointHost.ts"
import { type HostedTurn, hostedTurn, type TranscriptEntry } from "../HostedTurn.ts"
import { launchFiles } from "../LaunchFiles.ts"
import { readTools, type Tool } from "../ToolSurface.ts"

/** A Session that closed (`SessionError`, reason `SessionClosed`), not another failure. */
const closedSession = (e: unknown): boolean => e instanceof SessionError && e.reason === "SessionClosed"

/** One endpoint hosted here: its Agent, Workspace, current Session and tools. */
interface Hosting {
  readonly ref: EndpointRef
  readonly agent: Agent
  readonly workspace: Workspace
  session: Session
  tools: ReadonlyMap<string, Tool>
  sessionCount: number
  fenced: boolean
  readonly transcript: Array<TranscriptEntry>
  readonly running: Set<Fiber.RuntimeFiber<unknown, unknown>>
}

/**
 * Builds the City-sessions host on the City in context. `onLaunch` runs after each launch and
 * reload; `onState` at each change of an endpoint's state.
 * @since 0.1.0
 * @category internals
 */
export const make = (options: {
  readonly onLaunch?: (ref: EndpointRef) => Effect.Effect<void>
  readonly onState?: (ref: EndpointRef, state: EndpointState) => Effect.Effect<void>
} = {}) =>
  Effect.gen(function*() {
    const city = yield* City
    const config = (yield* RuntimeProfiles).config
    const hostings = new Map<string, Hosting>()
    const stopped = new Set<string>()
    const onLaunch = (ref: EndpointRef) =>
      Effect.zipRight(options.onLaunch?.(ref) ?? Effect.void, onState(ref, "idle"))
    const onState = options.onState ?? (() => Effect.void)
    const failed = (ref: EndpointRef, operation: string) => (error: { readonly message: string }) =>
      new EndpointError({ reason: "EndpointHostFailed", identity: ref.identity, operation, detail: error.message })
    const fs = yield* FileSystem.FileSystem
    const surfaces = (ref: EndpointRef) =>
      Effect.provideService(Effect.flatMap(launchFiles(config, ref), readTools), FileSystem.FileSystem, fs)
    const sessionOf = (h: Hosting) =>
      h.agent.sessions.create({ workspace: h.workspace, id: `${h.ref.identity}#${h.sessionCount}` })

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
          sessionCount: 1,
          fenced: false,
          transcript: [],
          running: new Set()
        }
        hostings.set(ref.identity, hosting)
        yield* onLaunch(ref)
      }).pipe(Effect.mapError(failed(ref, "launch")))

    /** Runs `f` at the next boundary of the hosting's current Session, following replacements. */
    const atBoundary = <A, E>(h: Hosting, f: (session: Session) => Effect.Effect<A, E>): Effect.Effect<A, E | SessionError> =>
      Effect.suspend(() => {
        const session = h.session
        return session.atNextBoundary(Effect.suspend(() => f(session))).pipe(
          Effect.catchTag("SessionError", (e) => closedSession(e) && h.session !== session ? atBoundary(h, f) : Effect.fail(e))
        )
      })

    const swap = (h: Hosting, old: Session) =>
      Effect.gen(function*() {
        h.sessionCount++
        h.tools = yield* surfaces(h.ref)
        h.session = yield* sessionOf(h).pipe(Effect.orDie)
        yield* old.close
        yield* onLaunch(h.ref)
      })

    const reload = <A, E>(ref: EndpointRef, claim: Effect.Effect<Option.Option<A>, E>) =>
      Effect.suspend((): Effect.Effect<Option.Option<A>, E | EndpointError> => {
        const h = hostings.get(ref.identity)
        if (h === undefined || h.fenced || stopped.has(ref.identity)) return Effect.succeed(Option.none())
        return atBoundary(h, (session) =>
          Effect.gen(function*() {
            if (h.session !== session || h.fenced) return Option.none<A>()
            const claimed = yield* claim
            if (Option.isSome(claimed)) yield* swap(h, session)
            return claimed
          })).pipe(
            Effect.catchIf((e): e is SessionError => e instanceof SessionError, (e) => Effect.fail(failed(ref, "reload")(e)))
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
          // Waiting at the boundary of nothing fails only with SessionClosed.
          Effect.catchTag("SessionError", () => Effect.void),
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
      const run: Effect.Effect<A, E | EndpointError | SessionError, R> = Effect.suspend(() => {
        const h = hostings.get(ref.identity)
        if (h === undefined || h.fenced) return Effect.fail(new EndpointError({ reason: "EndpointNotHosted", identity: ref.identity }))
        const session = h.session
        return session.turn((t) =>
          Effect.zipRight(
            onState(ref, "busy"),
            Effect.ensuring(body(hostedTurn(h.ref, h, session, t)), onState(ref, "idle"))
          )
        ).pipe(
          Effect.catchTag("SessionError", (e) => closedSession(e) && h.session !== session && !h.fenced ? run : Effect.fail(e))
        )
      })
      return Effect.withFiberRuntime<A, E | EndpointError | SessionError, R>((fiber) => {
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
      transcript: (ref: EndpointRef) => [...(hostings.get(ref.identity)?.transcript ?? [])],
      tools: (ref: EndpointRef) => [...(hostings.get(ref.identity)?.tools.keys() ?? [])].sort(),
      sessionCount: (ref: EndpointRef) => hostings.get(ref.identity)?.sessionCount ?? 0
    }
  })
