/**
 * A Session and its Turns and Steps (docs/city-plugin-lifecycle.md, "Execution leases": "A Session
 * captures an immutable Plugin execution view at each Step checkpoint").
 *
 * - Turns of a Session run one at a time. A Turn waits at its boundary while the City pauses Turns
 *   (a plugin restart, see Sessions.quiesce).
 * - A Step leases the current view *before* the previous Step's lease is released: a Turn keeps the
 *   lease of its last successful Step until the next Step has its own, or the Turn ends. A Step that
 *   fails or is interrupted releases its lease at once. The body runs in the caller's fiber.
 * - `atNextBoundary(effect)` runs `effect` now if the Session is idle, else right after the current
 *   Turn ends and before the next one begins. A caller interrupted before its turn comes is
 *   forgotten: its effect never runs.
 * - A Turn's skills are resolved once, from the view current when it began.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { CityClosed, type SessionClosedBy, SessionError } from "../../schema/Errors.ts"
import type { AgentInfo, CallBase, WorkspaceInfo } from "../../schema/HostModel.ts"
import type { Skill } from "../../schema/PluginChange.ts"
import { unsafeStep } from "../internal/counters.ts"
import { spans } from "../Observability.ts"
import { isTracing } from "../internal/tracing.ts"
import { BoundCalls, type Calls, type Explain } from "./Calls.ts"
import type { ExecutionLeasesShape } from "./internal/executionLeases.ts"
import { ExecutionView } from "./ExecutionView.ts"
import { holding, type Lease } from "./internal/leaseTable.ts"
import * as TurnBoundary from "./internal/turnBoundary.ts"
import type { Workspace } from "./Workspaces.ts"

/**
 * Whether a Session is idle, running a Turn, or closed.
 * @since 0.1.0
 * @category models
 */
export type SessionStatus = "idle" | "busy" | "closed"

/**
 * A Session of an Agent in a Workspace: it runs Turns, one at a time.
 * @since 0.1.0
 * @category models
 */
export interface Session {
  /** The Session's id (given at creation, or `<agent>/<n>`). */
  readonly id: string
  /** The Agent the Session belongs to. */
  readonly agent: AgentInfo
  /** The Workspace the Session works in. */
  readonly workspace: Workspace
  /** The Session's status now: idle, busy (a Turn is running) or closed. */
  readonly status: Effect.Effect<SessionStatus>
  /** Runs one Turn; Turns of a Session run one at a time. */
  readonly turn: <A, E, R>(body: (turn: Turn) => Effect.Effect<A, E, R>) => Effect.Effect<A, E | SessionError, R>
  /** Runs `effect` at the Session's next Turn boundary (now, if it is idle). */
  readonly atNextBoundary: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | SessionError, R>
  /** Stops admitting Turns and Steps; running ones finish. */
  readonly close: Effect.Effect<void>
}

/**
 * One plugin's skills as a Turn sees them.
 * @since 0.1.0
 * @category models
 */
export interface TurnSkills {
  /** The plugin's name. */
  readonly plugin: string
  /** Its skills when the Turn began. */
  readonly skills: ReadonlyArray<Skill>
}

/**
 * One Turn of a Session: its number, its skills, and its Steps.
 * @since 0.1.0
 * @category models
 */
export interface Turn {
  /** The Turn's number in its Session, from 1. */
  readonly number: number
  /** The Session the Turn belongs to. */
  readonly session: Session
  /** The skills of the plugins ready when the Turn began, in plugin name order. */
  readonly skills: ReadonlyArray<TurnSkills>
  /** Runs one Step with the view captured at its checkpoint. */
  readonly step: <A, E, R>(
    body: (view: StepView) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | SessionError | CityClosed, R>
}

/**
 * What a Step sees: its captured view (names and contributions), with calls whose PluginContext
 * carries the session and turn.
 * @since 0.1.0
 * @category models
 */
export interface StepView extends Calls {
  /** The Step's number in its Turn, from 1. */
  readonly step: number
}

class StepCalls extends BoundCalls implements StepView {
  constructor(view: ExecutionView, base: CallBase, explain: Explain, readonly step: number) {
    super(view, base, explain)
  }
}

/**
 * Where a Session's Turns check in: the City's pause for restarts, and its count of running Turns.
 * @since 0.1.0
 * @category models
 */
export interface TurnGate {
  /** Completes when Turns may begin. */
  readonly open: Effect.Effect<void>
  /** Runs `body` as a running Turn (so a pause waits for it, then may interrupt its fiber). */
  readonly running: <A, E, R>(body: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/**
 * A Session and the way its owner shuts it.
 * @since 0.1.0
 * @category models
 */
export interface SessionHandle {
  readonly session: Session
  /** Shuts the Session for new Turns and Steps; `true` if it was open. */
  readonly shut: (closedBy: SessionClosedBy) => boolean
}

const skillsOf = (view: ExecutionView): ReadonlyArray<TurnSkills> =>
  ExecutionView.instances(view).flatMap((p) => {
    const skills = p.contributions.skills
    return skills === undefined || skills.length === 0 ? [] : [{ plugin: p.name, skills }]
  })

/**
 * Makes a Session for the Sessions service, with the handle that shuts it.
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: {
  readonly id: string
  readonly agent: AgentInfo
  readonly workspace: Workspace
  readonly leases: ExecutionLeasesShape
  readonly explain: Explain
  readonly gate: TurnGate
  readonly currentView: () => ExecutionView
}): SessionHandle => {
  const { id, leases } = options
  // unsafe: a Session is made by a plain constructor (`agent.sessions.create` registers it synchronously).
  const semaphore = Effect.unsafeMakeSemaphore(1)
  const agentInfo: AgentInfo = { id: options.agent.id }
  const workspaceInfo: WorkspaceInfo = { id: options.workspace.id, path: options.workspace.path }
  const sessionInfo = { id }
  let closed: SessionClosedBy | undefined
  let busy = false
  let turns = 0
  const boundary = TurnBoundary.make()
  /** Lets go of the view the running Turn holds between Steps, if any. */
  let releaseHeld = () => {}

  const refuse = () => (closed === undefined ? undefined : new SessionError({ reason: "SessionClosed", session: id, closedBy: closed }))

  const runTurn = <A, E, R>(number: number, body: (turn: Turn) => Effect.Effect<A, E, R>) => {
    const startView = options.currentView()
    let skills: ReadonlyArray<TurnSkills> | undefined
    let ended = false
    let held: Lease | undefined
    let steps = 0
    // Set once per Turn (Observability: Turn and Step spans only when someone traces).
    let traced = false
    const base: CallBase = { agent: agentInfo, workspace: workspaceInfo, session: sessionInfo, turn: { number } }
    const letGo = () => {
      held?.release()
      held = undefined
    }
    releaseHeld = letGo
    const turn: Turn = {
      number,
      session,
      get skills() {
        return (skills ??= skillsOf(startView))
      },
      step: <A2, E2, R2>(stepBody: (view: StepView) => Effect.Effect<A2, E2, R2>) =>
        Effect.suspend((): Effect.Effect<A2, E2 | SessionError | CityClosed, R2> => {
          if (ended) return Effect.fail(new SessionError({ reason: "TurnEnded", session: id, turn: number }))
          const refused = refuse()
          if (refused !== undefined) return Effect.fail(refused)
          const lease = leases.lease()
          if (lease === undefined) return Effect.fail(new CityClosed({ operation: `step of session ${id}` }))
          // The next view is held before the previous Step's lease goes: no gap.
          letGo()
          const view = new StepCalls(lease.view, base, options.explain, ++steps)
          // unsafe: see services/internal/counters.ts, unsafeStep.
          unsafeStep()
          const run = leases.runUnder(lease, stepBody(view), (exit) => {
            if (Exit.isSuccess(exit) && !ended && closed === undefined) held = lease
            else lease.release()
          })
          return traced
            ? Effect.withSpan(run, spans.step, {
              attributes: { agent: agentInfo.id, session: id, turn: number, step: view.step },
              captureStackTrace: false
            })
            : run
        })
    }
    return holding(() => held?.view)(body(turn)).pipe(
      Effect.onExit(() =>
        Effect.suspend(() => {
          ended = true
          letGo()
          busy = false
          return boundary.drain
        })
      ),
      (effect) =>
        Effect.flatMap(isTracing, (tracing) =>
          (traced = tracing)
            ? Effect.withSpan(effect, spans.turn, { attributes: { agent: agentInfo.id, session: id, turn: number } })
            : effect)
    )
  }

  const session: Session = {
    id,
    agent: options.agent,
    workspace: options.workspace,
    status: Effect.sync(() => (closed !== undefined ? "closed" : busy ? "busy" : "idle")),
    turn: <A, E, R>(body: (turn: Turn) => Effect.Effect<A, E, R>) =>
      Effect.suspend((): Effect.Effect<A, E | SessionError, R> => {
        const refused = refuse()
        if (refused !== undefined) return Effect.fail(refused)
        return semaphore.withPermits(1)(
          Effect.zipRight(
            options.gate.open,
            Effect.suspend((): Effect.Effect<A, E | SessionError, R> => {
              const refusedNow = refuse()
              if (refusedNow !== undefined) return Effect.fail(refusedNow)
              busy = true
              return options.gate.running(runTurn(++turns, body))
            })
          )
        )
      }),
    atNextBoundary: (effect) =>
      boundary.enqueue(effect, {
        refuse,
        kick: () => (busy ? Effect.void : semaphore.withPermits(1)(boundary.drain))
      }),
    close: Effect.sync(() => {
      shut("closed")
    })
  }

  const shut = (closedBy: SessionClosedBy) => {
    if (closed !== undefined) return false
    closed = closedBy
    // No further Step will come: the view held for the handoff to the next Step goes now.
    releaseHeld()
    boundary.cancelAll(new SessionError({ reason: "SessionClosed", session: id, closedBy }))
    return true
  }

  return { session, shut }
}
