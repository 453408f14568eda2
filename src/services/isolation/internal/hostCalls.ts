/**
 * The isolated plugin's requests to the host (docs/plugin-loader.md, "Isolation"): its log lines,
 * its reload requests and its calls to siblings, each served in a fiber of its own and answered
 * with a value that can cross to the worker, or the failure's tag and reason.
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberSet from "effect/FiberSet"
import * as Stream from "effect/Stream"
import type { CallBase } from "../../../schema/HostModel.ts"
import * as Isolation from "../../../schema/Isolation.ts"
import { PluginContext } from "../../PluginContext.ts"
import type { PluginLifecycleContextShape } from "../../PluginLifecycleContext.ts"
import type { WorkerThread } from "./workerThread.ts"

/** The host's answer to one request of the plugin: a value that can cross, or the failure's tag and reason. */
const outcomeOf = (exit: Exit.Exit<unknown, unknown>): typeof Isolation.HostAnswer.fields.outcome.Type => {
  if (Exit.isSuccess(exit)) {
    try {
      structuredClone(exit.value)
      return { _tag: "Succeeded", value: exit.value }
    } catch (error) {
      return { _tag: "Failed", reason: `the result cannot cross to the worker (${error instanceof Error ? error.message : String(error)})` }
    }
  }
  return { _tag: "Failed", ...Isolation.errorFacts(Cause.squash(exit.cause)) }
}

/**
 * Serves the plugin's requests to the host for the caller's Scope. `invoke`: a sibling's action,
 * resolved at the time of the call. A log line is logged in order, as it comes; a reload request
 * or a sibling call in a fiber of its own. Returns the server's fiber, which ends when the stream
 * does: after the plugin's dispose, with every log line it wrote (mainThreadRequests.ts).
 * @since 0.1.0
 * @category internals
 */
export const serveHostCalls = (
  worker: WorkerThread["worker"],
  lifecycle: PluginLifecycleContextShape,
  invoke: (base: CallBase, plugin: string, action: string, input: unknown) => Effect.Effect<unknown, unknown>
) =>
  Effect.gen(function*() {
    const fibers = yield* FiberSet.make()
    const answer = (id: number, exit: Exit.Exit<unknown, unknown>) =>
      Effect.ignore(worker.executeEffect(new Isolation.HostAnswer({ id, outcome: outcomeOf(exit) })))
    const serve = (call: Isolation.HostCall): Effect.Effect<void> => {
      switch (call._tag) {
        case "Log":
          return lifecycle.log[call.level](call.message)
        case "RequestReload": {
          const request = lifecycle.requestReload(call.change)
          const withCall = call.context === undefined ? request : Effect.provideService(request, PluginContext, call.context)
          return Effect.flatMap(Effect.exit(withCall), (exit) => answer(call.id, exit))
        }
        case "Invoke":
          return Effect.flatMap(
            Effect.exit(invoke(call.context, call.plugin, call.action, call.input)),
            (exit) => answer(call.id, exit)
          )
      }
    }
    return yield* worker.execute(new Isolation.HostCalls()).pipe(
      Stream.runForEach((call) => call._tag === "Log" ? serve(call) : FiberSet.run(fibers, serve(call))),
      Effect.ignore,
      Effect.forkScoped
    )
  })
