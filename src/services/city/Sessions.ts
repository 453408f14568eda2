/**
 * The host model (spec/city-plugin-lifecycle.md, "Execution leases"; design.md "Sessions"):
 * Agents own Sessions; a Session runs Turns one at a time; a Turn runs Steps. Each Step captures
 * the current execution view at its checkpoint and keeps it for its whole duration.
 *
 * - A Step leases its new view *before* the previous Step's lease is released: a Turn keeps the
 *   lease of its last successful Step until the next Step has its own, or the Turn ends. A Step
 *   that fails or is interrupted releases its lease at once.
 * - A Turn ends at a boundary other services can observe and wait for: `session.status` is
 *   `idle` or `busy`, and `session.atNextBoundary(effect)` runs `effect` now if the Session is
 *   idle, else right after the current Turn ends and before the next one begins.
 * - Adding or removing an Agent or a Session never triggers plugin initialize or dispose.
 *   Removing an Agent closes its Sessions for new Turns and Steps; Steps already running finish.
 * - The Sessions finalizer is the first part of close: every Session stops admitting Turns and
 *   Steps. Running Steps are then drained by ExecutionLeases (within `drainTimeout`, then
 *   interrupted), before the registry disposes plugins.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import {
  AgentAlreadyExists,
  AgentNotFound,
  type CityClosed,
  SessionClosed,
  TurnEnded
} from "../../schema/Errors.ts"
import { Admission } from "./Admission.ts"
import { ExecutionLeases } from "./ExecutionLeases.ts"
import { bind, type Calls } from "./ExecutionView.ts"
import { PluginRegistry } from "./PluginRegistry.ts"
import type { Lease } from "./ViewTable.ts"
import type { Workspace } from "./Workspaces.ts"
import type { Skill } from "../../schema/PluginChange.ts"

export type SessionStatus = "idle" | "busy" | "closed"

export interface Agent {
  readonly id: string
  readonly sessions: {
    readonly create: (options: {
      readonly workspace: Workspace
      readonly id?: string | undefined
    }) => Effect.Effect<Session, AgentNotFound | CityClosed>
    readonly list: Effect.Effect<ReadonlyArray<Session>>
  }
}

export interface Session {
  readonly id: string
  readonly agent: Agent
  readonly workspace: Workspace
  readonly status: Effect.Effect<SessionStatus>
  /** Runs one Turn; Turns of a Session run one at a time. */
  readonly turn: <A, E, R>(body: (turn: Turn) => Effect.Effect<A, E, R>) => Effect.Effect<A, E | SessionClosed, R>
  /** Runs `effect` at the Session's next Turn boundary (now, if it is idle). */
  readonly atNextBoundary: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | SessionClosed, R>
  /** Stops admitting Turns and Steps; running ones finish. */
  readonly close: Effect.Effect<void>
}

/** One plugin's skills as a Turn sees them. */
export interface TurnSkills {
  readonly plugin: string
  readonly skills: ReadonlyArray<Skill>
}

export interface Turn {
  readonly number: number
  readonly session: Session
  /**
   * The skills of the plugins ready when the Turn began, in plugin name order (plugins without
   * skills left out). Resolved once per Turn: a skill set replaced meanwhile shows in the next Turn.
   */
  readonly skills: ReadonlyArray<TurnSkills>
  /** Runs one Step with the view captured at its checkpoint. */
  readonly step: <A, E, R>(
    body: (view: StepView) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | TurnEnded | SessionClosed | CityClosed, R>
}

/** What a Step sees: its captured view, with calls whose PluginContext carries the session and turn. */
export interface StepView extends Calls {
  readonly step: number
}

export interface AgentsShape {
  readonly add: (options: { readonly id: string }) => Effect.Effect<Agent, AgentAlreadyExists | CityClosed>
  readonly get: (id: string) => Effect.Effect<Option.Option<Agent>>
  readonly list: Effect.Effect<ReadonlyArray<Agent>>
  /** Removes an Agent and closes its Sessions; `false` for an unknown id. */
  readonly remove: (id: string) => Effect.Effect<boolean>
}

export interface SessionsShape {
  readonly agents: AgentsShape
}

export class Sessions extends Context.Tag("effect-city/Sessions")<Sessions, SessionsShape>() {}

type ClosedReason = SessionClosed["reason"]

interface BoundaryJob {
  readonly run: Effect.Effect<void>
  readonly cancel: (error: SessionClosed) => void
}

export const make = Effect.gen(function*() {
  const admission = yield* Admission
  const leases = yield* ExecutionLeases
  const registry = yield* PluginRegistry
  const agents = new Map<string, { readonly agent: Agent; readonly sessions: Map<string, SessionState> }>()
  let closing = false

  interface SessionState {
    readonly session: Session
    closed: ClosedReason | undefined
    readonly shut: (reason: ClosedReason) => void
  }

  const makeSession = (agent: Agent, workspace: Workspace, id: string): SessionState => {
    const semaphore = Effect.unsafeMakeSemaphore(1)
    let busy = false
    let turns = 0
    let pending: Array<BoundaryJob> = []
    /** Lets go of the view the running Turn holds between Steps, if any. */
    let releaseHeld = () => {}
    const state: SessionState = {
      session: undefined as unknown as Session,
      closed: undefined,
      shut: (reason) => {
        if (state.closed !== undefined) return
        state.closed = reason
        // No further Step will come: the view held for the handoff to the next Step goes now.
        releaseHeld()
        const cancelled = pending
        pending = []
        for (const job of cancelled) job.cancel(new SessionClosed({ session: id, reason }))
      }
    }
    const refuse = () =>
      state.closed === undefined ? undefined : new SessionClosed({ session: id, reason: state.closed })

    const drainBoundary: Effect.Effect<void> = Effect.suspend(() => {
      const job = pending.shift()
      return job === undefined ? Effect.void : Effect.zipRight(job.run, drainBoundary)
    })

    const makeTurn = (number: number) => {
      const startView = registry.views.view
      let skills: ReadonlyArray<TurnSkills> | undefined
      let ended = false
      let held: Lease | undefined
      let steps = 0
      const hold = (lease: Lease) => {
        held?.release()
        held = lease
      }
      const turn: Turn = {
        number,
        session,
        get skills() {
          skills ??= startView.plugins.flatMap((p) =>
            p.contributions.skills === undefined || p.contributions.skills.length === 0
              ? []
              : [{ plugin: p.name, skills: p.contributions.skills }]
          )
          return skills
        },
        step: <A, E, R>(body: (view: StepView) => Effect.Effect<A, E, R>) =>
          Effect.suspend((): Effect.Effect<A, E | TurnEnded | SessionClosed | CityClosed, R> => {
            if (ended) return Effect.fail(new TurnEnded({ session: id, turn: number }))
            const refused = refuse()
            if (refused !== undefined) return Effect.fail(refused)
            const operation = `step of session ${id}`
            return Effect.flatMap(leases.lease(operation), (lease) => {
              // The next view is held before the previous Step's lease goes: no gap.
              const previous = held
              held = undefined
              previous?.release()
              const step = ++steps
              const calls = bind(lease.view, { agent, workspace, session, turn }, registry.snapshotOf)
              const view: StepView = { ...calls, step }
              return leases.track(operation, body(view)).pipe(
                Effect.onExit((exit) =>
                  Effect.sync(() => {
                    if (Exit.isSuccess(exit) && !ended && state.closed === undefined) hold(lease)
                    else lease.release()
                  })
                )
              )
            })
          })
      }
      const letGo = () => {
        held?.release()
        held = undefined
      }
      releaseHeld = letGo
      const end = Effect.sync(() => {
        ended = true
        letGo()
      })
      return { turn, end }
    }

    const session: Session = {
      id,
      agent,
      workspace,
      status: Effect.sync(() => (state.closed !== undefined ? "closed" : busy ? "busy" : "idle")),
      turn: <A, E, R>(body: (turn: Turn) => Effect.Effect<A, E, R>) =>
        Effect.suspend((): Effect.Effect<A, E | SessionClosed, R> => {
          const refused = refuse()
          if (refused !== undefined) return Effect.fail(refused)
          return semaphore.withPermits(1)(
            Effect.suspend((): Effect.Effect<A, E | SessionClosed, R> => {
              const refusedNow = refuse()
              if (refusedNow !== undefined) return Effect.fail(refusedNow)
              busy = true
              const { end, turn } = makeTurn(++turns)
              return Effect.onExit(body(turn), () =>
                Effect.zipRight(
                  end,
                  Effect.suspend(() => {
                    busy = false
                    return drainBoundary
                  })
                ))
            })
          )
        }),
      atNextBoundary: <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        Effect.contextWithEffect((context: Context.Context<R>): Effect.Effect<A, E | SessionClosed> => {
          const refused = refuse()
          if (refused !== undefined) return Effect.fail(refused)
          const done = Deferred.unsafeMake<Exit.Exit<A, E | SessionClosed>>(FiberId.none)
          pending.push({
            run: Effect.flatMap(Effect.exit(Effect.provide(effect, context)), (exit) => Deferred.succeed(done, exit)).pipe(
              Effect.asVoid
            ),
            cancel: (error) => Deferred.unsafeDone(done, Exit.succeed(Exit.fail(error)))
          })
          const kick = busy ? Effect.void : semaphore.withPermits(1)(drainBoundary)
          return Effect.zipRight(kick, Effect.flatten(Deferred.await(done)))
        }),
      close: Effect.sync(() => state.shut("closed"))
    }
    ;(state as { session: Session }).session = session
    return state
  }

  const agentsApi: AgentsShape = {
    add: ({ id }) =>
      Effect.zipRight(
        admission.check(`add agent ${id}`),
        Effect.suspend(() => {
          if (agents.has(id)) return Effect.fail(new AgentAlreadyExists({ id }))
          const sessions = new Map<string, SessionState>()
          let created = 0
          const agent: Agent = {
            id,
            sessions: {
              create: ({ id: sessionId, workspace }) =>
                Effect.zipRight(
                  admission.check(`create session for agent ${id}`),
                  Effect.suspend(() => {
                    if (agents.get(id)?.agent !== agent) return Effect.fail(new AgentNotFound({ id }))
                    const sid = sessionId ?? `${id}/${++created}`
                    const state = makeSession(agent, workspace, sid)
                    if (closing) state.shut("city-closed")
                    sessions.set(sid, state)
                    return Effect.succeed(state.session)
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
        for (const state of entry.sessions.values()) state.shut("agent-removed")
        return true
      })
  }

  // First part of close: no Session admits another Turn or Step.
  yield* Effect.addFinalizer(() =>
    Effect.sync(() => {
      closing = true
      for (const { sessions } of agents.values()) {
        for (const state of sessions.values()) state.shut("city-closed")
      }
    })
  )

  const service: SessionsShape = { agents: agentsApi }
  return service
})

export const layer = Layer.scoped(Sessions, make)
