/**
 * The host model (docs/city-plugin-lifecycle.md: "Agent, Session, and Workspace entry or removal do
 * not trigger Plugin lifecycle callbacks"): Agents own Sessions (src/services/city/Session.ts).
 *
 * - Adding or removing an Agent or a Session never triggers plugin initialize or dispose.
 *   Removing an Agent closes its Sessions for new Turns and Steps; Steps already running finish.
 * - `quiesce(effect)` pauses Turns for a plugin restart: new Turns wait at their boundary, running
 *   Turns finish within `drainTimeout` (then their fibers are interrupted), `effect` runs, and
 *   Turns resume. Sessions, Agents and Workspaces survive it. Pauses run one at a time.
 * - The Sessions finalizer is the first part of close: every Session stops admitting Turns and
 *   Steps (the close report lists those it stopped). Running Steps are then drained by ExecutionLeases, before the registry disposes plugins.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { type CityClosed, SessionError } from "../../schema/Errors.ts"
import { CityConfig } from "./CityConfig.ts"
import { Closing } from "./internal/close.ts"
import { ExecutionLeases } from "./internal/executionLeases.ts"
import { LeaseTable } from "./internal/leaseTable.ts"
import * as Running from "./internal/running.ts"
import { PluginRegistry } from "./internal/pluginRegistry.ts"
import * as SessionModule from "./Session.ts"
import type { Workspace } from "./Workspaces.ts"

/**
 * An Agent of the City and its Sessions.
 * @since 0.1.0
 * @category models
 */
export interface Agent {
  /** The Agent's id, unique in the City. */
  readonly id: string
  /** Creates and lists the Agent's Sessions (a Session's id defaults to `<agent>/<n>`). */
  readonly sessions: {
    readonly create: (options: {
      readonly workspace: Workspace
      readonly id?: string | undefined
    }) => Effect.Effect<SessionModule.Session, SessionError | CityClosed>
    readonly list: Effect.Effect<ReadonlyArray<SessionModule.Session>>
  }
}

/**
 * The City's Agents: `city.agents`.
 * @since 0.1.0
 * @category models
 */
export interface AgentsShape {
  /** Adds an Agent; fails if the id is taken. */
  readonly add: (options: { readonly id: string }) => Effect.Effect<Agent, SessionError | CityClosed>
  /** The Agent of this id, if any. */
  readonly get: (id: string) => Effect.Effect<Option.Option<Agent>>
  /** Every Agent. */
  readonly list: Effect.Effect<ReadonlyArray<Agent>>
  /** Removes an Agent and closes its Sessions; `false` for an unknown id. */
  readonly remove: (id: string) => Effect.Effect<boolean>
}

/**
 * The Agents and the pause of Turns around a plugin restart.
 * @since 0.1.0
 * @category models
 */
export interface SessionsShape {
  readonly agents: AgentsShape
  /** Pauses Turns around `effect` (see the module doc); fails with CityClosed once close has begun. */
  readonly quiesce: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | CityClosed, R>
}

/**
 * The Sessions service.
 * @since 0.1.0
 * @category tags
 */
export class Sessions extends Context.Tag("effect-city/Sessions")<Sessions, SessionsShape>() {}

/**
 * Makes the Sessions service; its finalizer is the first part of close.
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const closing = yield* Closing
  const config = yield* CityConfig
  const leases = yield* ExecutionLeases
  const views = yield* LeaseTable
  const registry = yield* PluginRegistry
  const agents = new Map<string, { readonly agent: Agent; readonly sessions: Map<string, SessionModule.SessionHandle> }>()

  // --- the Turn gate: paused by quiesce, with the fibers of running Turns ------------------------
  const latch = yield* Effect.makeLatch(true)
  const turning = Running.make()
  const gate: SessionModule.TurnGate = { open: latch.await, running: turning.track }
  const pauses = yield* Effect.makeSemaphore(1)

  const drainTurns = Effect.asVoid(turning.drain(config.drainTimeout))

  const quiesce: SessionsShape["quiesce"] = (effect) =>
    pauses.withPermits(1)(
      Effect.zipRight(
        closing.check("pause Turns"),
        Effect.acquireUseRelease(
          Effect.zipRight(latch.close, drainTurns),
          () => effect,
          () => latch.open
        )
      )
    )

  const agentsApi: AgentsShape = {
    add: ({ id }) =>
      Effect.zipRight(
        closing.check(`add agent ${id}`),
        Effect.suspend(() => {
          if (agents.has(id)) return Effect.fail(new SessionError({ reason: "AgentAlreadyExists", id }))
          const sessions = new Map<string, SessionModule.SessionHandle>()
          let created = 0
          const agent: Agent = {
            id,
            sessions: {
              create: ({ id: sessionId, workspace }) =>
                Effect.zipRight(
                  closing.check(`create session for agent ${id}`),
                  Effect.suspend(() => {
                    if (agents.get(id)?.agent !== agent) return Effect.fail(new SessionError({ reason: "AgentNotFound", id }))
                    const sid = sessionId ?? `${id}/${++created}`
                    const handle = SessionModule.make({
                      id: sid,
                      agent,
                      workspace,
                      leases,
                      explain: registry.explain,
                      gate,
                      currentView: views.current
                    })
                    sessions.set(sid, handle)
                    return Effect.succeed(handle.session)
                  })
                ),
              list: Effect.sync(() => Array.from(sessions.values(), (s) => s.session))
            }
          }
          agents.set(id, { agent, sessions })
          return Effect.succeed(agent)
        })
      ),
    get: (id) => Effect.sync(() => Option.map(Option.fromNullable(agents.get(id)), (a) => a.agent)),
    list: Effect.sync(() => Array.from(agents.values(), (a) => a.agent)),
    remove: (id) =>
      Effect.sync(() => {
        const entry = agents.get(id)
        if (entry === undefined) return false
        agents.delete(id)
        for (const handle of entry.sessions.values()) handle.shut("agent-removed")
        return true
      })
  }

  // First part of close: no Session admits another Turn or Step; a paused gate opens so that
  // waiting Turns see the Session closed instead of waiting.
  yield* Effect.addFinalizer(() =>
    Effect.suspend(() => {
      closing.begin()
      for (const { sessions } of agents.values()) {
        for (const handle of sessions.values()) {
          if (handle.shut("city-closed")) closing.stopped(handle.session.id)
        }
      }
      return latch.open
    })
  )

  return { agents: agentsApi, quiesce } satisfies SessionsShape
})

/**
 * The Sessions service as a scoped Layer: closing it closes every Session.
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.scoped(Sessions, make)
