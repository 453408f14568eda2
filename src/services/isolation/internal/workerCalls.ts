/**
 * The host's calls to an isolated plugin, worker side (docs/plugin-loader.md, "Isolation"): each
 * action, hook, system text and availability check runs here with the call's PluginContext. An
 * action's input is decoded here with the action's own Schema (a refusal carries its first issue's
 * `field` and `rule` in its `fields`); an action implemented from a
 * reference with `output` / `error` Schemas answers encoded with them (its result, and a failure
 * its `error` Schema accepts); a result its `output` Schema refuses fails the call with
 * `ActionOutputRejected`.
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { ActionRejected } from "../../../schema/Errors.ts"
import * as Isolation from "../../../schema/Isolation.ts"
import { firstIssue, issueLine } from "../../../schema/ParseIssue.ts"
import type { AnyAction, Hook } from "../../Contributions.ts"
import { PluginContext, type PluginContextShape } from "../../PluginContext.ts"
import { crossable, toFailure } from "./crossing.ts"
import type { WorkerState } from "./workerInitialize.ts"

type ActionResult = typeof Isolation.ActionResult.Type

const contextOf = (data: typeof Isolation.CallContext.Type): PluginContextShape => data

/**
 * The handlers of the host's calls over the worker's state.
 * @since 0.1.0
 * @category internals
 */
export const makeWorkerCalls = (state: WorkerState) => {
  const runningFor = (what: string) =>
    state.running === undefined
      ? Effect.fail(new Isolation.IsolationError({ reason: "IsolatedFailure", plugin: state.name, what, detail: "the plugin is not initialized" }))
      : Effect.succeed(state.running)

  const callAction = (request: Isolation.CallAction) =>
    Effect.gen(function*() {
      const { contributions } = yield* runningFor(`action ${request.action}`)
      const what = `action ${request.action}`
      const action: AnyAction | undefined = contributions.actions?.[request.action]
      if (action === undefined) {
        return yield* Effect.fail(new Isolation.IsolationError({ reason: "IsolatedFailure", plugin: state.name, what, detail: "no such action" }))
      }
      // The first issue's field and rule go with the refusal, so a caller outside can name them
      // without the Schema's tree (services/city/internal/actionCall.ts).
      const input = yield* Schema.decodeUnknown(action.input)(request.input).pipe(
        Effect.mapError((error) =>
          new Isolation.IsolationError({ reason: "IsolatedFailure", plugin: state.name, what, errorTag: "ParseError", detail: error.message, fields: { ...firstIssue(error) } })
        )
      )
      return yield* action.handler(input as never).pipe(
        Effect.provideService(PluginContext, contextOf(request.context)),
        Effect.matchCauseEffect({
          onFailure: (cause): Effect.Effect<never, Isolation.IsolationError> =>
            Effect.fail(declaredFailure(action, request.action, cause) ?? toFailure(state.name, what, cause)),
          onSuccess: (value) => resultOf(action, request.action, value)
        }),
        Effect.flatMap(({ _tag, value }) => Effect.map(crossable(state.name, what)(value), (value) => ({ _tag, value })))
      )
    })

  /**
   * A failure the action's `error` Schema accepts, encoded with it (a Cause with a defect or an
   * interruption is not one, nor a failure the Schema would not encode).
   */
  const declaredFailure = (action: AnyAction, actionName: string, cause: Cause.Cause<unknown>): Isolation.IsolationError | undefined => {
    const schema = action.error
    if (schema === undefined || Cause.isDie(cause) || Cause.isInterrupted(cause)) return undefined
    const failure = Cause.failureOption(cause)
    if (Option.isNone(failure) || !Schema.is(schema)(failure.value)) return undefined
    const encoded = Schema.encodeEither(schema)(failure.value)
    return Either.isRight(encoded) ? new Isolation.IsolationError({ reason: "IsolatedActionError", plugin: state.name, action: actionName, error: encoded.right }) : undefined
  }

  /** The handler's result as it crosses: encoded with the action's `output` Schema when it has one. */
  const resultOf = (action: AnyAction, actionName: string, value: unknown): Effect.Effect<ActionResult, ActionRejected> =>
    action.output === undefined
      ? Effect.succeed({ _tag: "Returned", value })
      : Schema.encode(action.output)(value).pipe(
        Effect.map((encoded): ActionResult => ({ _tag: "Encoded", value: encoded })),
        Effect.mapError((error) => new ActionRejected({ reason: "ActionOutputRejected", plugin: state.name, action: actionName, issue: issueLine(error) }))
      )

  const callHook = (request: Isolation.CallHook) =>
    Effect.gen(function*() {
      const { contributions } = yield* runningFor(`hook ${request.point}`)
      const what = `hook ${request.point}`
      const at = contributions.hooks?.[request.point]
      const handler: Hook | undefined = Array.isArray(at) ? at[request.index] : request.index === 0 ? (at as Hook | undefined) : undefined
      if (handler === undefined) {
        return yield* Effect.fail(new Isolation.IsolationError({ reason: "IsolatedFailure", plugin: state.name, what, detail: `no handler #${request.index + 1}` }))
      }
      return yield* handler(request.value).pipe(
        Effect.provideService(PluginContext, contextOf(request.context)),
        Effect.catchAllCause((cause) => Effect.fail(toFailure(state.name, what, cause))),
        Effect.flatMap(crossable(state.name, what))
      )
    })

  const callSystem = (request: Isolation.CallSystem) =>
    Effect.gen(function*() {
      const { contributions } = yield* runningFor("system")
      const system = contributions.system
      if (system === undefined) return null
      const context = contextOf(request.context)
      const text = yield* system(context).pipe(
        Effect.provideService(PluginContext, context),
        Effect.catchAllCause((cause) => Effect.fail(toFailure(state.name, "system", cause)))
      )
      return text ?? null
    })

  const callAvailability = (request: Isolation.CallAvailability) =>
    Effect.gen(function*() {
      const { contributions } = yield* runningFor("availability")
      const check = contributions.availability
      if (check === undefined) return { available: true, reasons: [] }
      const context = contextOf(request.context)
      return yield* check(context).pipe(
        Effect.provideService(PluginContext, context),
        Effect.catchAllCause((cause) => Effect.fail(toFailure(state.name, "availability", cause)))
      )
    })

  return { callAction, callHook, callSystem, callAvailability }
}
