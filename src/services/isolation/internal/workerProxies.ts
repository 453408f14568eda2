/**
 * The host's proxies of an isolated plugin's contributions (docs/plugin-loader.md, "Isolation"):
 * each action, hook, system text and availability check is a request to the worker, with the
 * call's PluginContext as data.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Isolation from "../../../schema/Isolation.ts"
import type { AnyAction, Contributions, Hook } from "../../Contributions.ts"
import { Encoded, Refused } from "../../internal/encoded.ts"
import { PluginContext, type PluginContextShape } from "../../PluginContext.ts"
import type { WorkerThread } from "./workerThread.ts"

const contextData = (ctx: PluginContextShape): typeof Isolation.CallContext.Type => ({
  plugin: ctx.plugin,
  agent: ctx.agent,
  workspace: ctx.workspace,
  session: ctx.session,
  turn: ctx.turn
})

/**
 * The contributions of the plugin whose worker initialized with `shape`, each a request to it.
 * @since 0.1.0
 * @category internals
 */
export const workerProxies = (
  shape: typeof Isolation.ContributionShape.Type,
  worker: WorkerThread["worker"],
  call: WorkerThread["call"]
): Contributions => {
  const context = Effect.map(PluginContext, contextData)
  const actions: Record<string, AnyAction> = {}
  for (const action of shape.actions) {
    actions[action] = {
      input: Schema.Unknown,
      handler: (input: never) =>
        Effect.flatMap(context, (ctx) => call(worker.executeEffect(new Isolation.CallAction({ action, input, context: ctx })), `action ${action}`)).pipe(
          // What crossed encoded is marked so, for the caller's reference to decode (Calls.ts).
          Effect.map((result) => result._tag === "Encoded" ? new Encoded(result.value) : result.value),
          Effect.catchTags({
            IsolationError: (e) => Effect.fail(e.reason === "IsolatedActionError" ? new Encoded(e.error) : e),
            // The worker refuses a result only by its output Schema (ActionOutputRejected).
            ActionRejected: (e) => Effect.fail(new Refused(e))
          })
        )
    }
  }
  const hooks: Record<string, ReadonlyArray<Hook>> = {}
  for (const [point, count] of Object.entries(shape.hooks)) {
    hooks[point] = Array.from({ length: count }, (_, index): Hook => (value) =>
      Effect.flatMap(context, (ctx) => call(worker.executeEffect(new Isolation.CallHook({ point, index, value, context: ctx })), `hook ${point}`)))
  }
  return {
    actions,
    hooks,
    system: shape.system
      ? (ctx) => Effect.map(call(worker.executeEffect(new Isolation.CallSystem({ context: contextData(ctx) })), "system"), (text) => text ?? undefined)
      : undefined,
    availability: shape.availability
      ? (ctx) => call(worker.executeEffect(new Isolation.CallAvailability({ context: contextData(ctx) })), "availability")
      : undefined,
    skills: shape.skills
  }
}
