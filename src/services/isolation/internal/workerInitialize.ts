/**
 * An isolated plugin's initialize, worker side (docs/plugin-loader.md, "Isolation"): it admits the
 * plugin folder for host-provided modules, imports the entry, runs the plugin's initialize in a
 * Scope it keeps until `Dispose`, and gives the host the contributions' shape (action names, hook
 * counts, whether it has system text or an availability check, its skills). Services provided to
 * siblings are refused: a Context cannot leave its thread.
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import { ReloadRejected } from "../../../schema/Errors.ts"
import * as Isolation from "../../../schema/Isolation.ts"
import type { Contributions } from "../../Contributions.ts"
import { PluginContext } from "../../PluginContext.ts"
import * as PluginLifecycleContext from "../../PluginLifecycleContext.ts"
import { Siblings, SiblingViews } from "../../Siblings.ts"
import { shapeOf } from "../../entry/Entry.ts"
import { fromRegister } from "../../entry/Staging.ts"
import { toFailure } from "./crossing.ts"
import type { MainThreadRequests } from "./mainThreadRequests.ts"
import * as ResolveHook from "../../entry/internal/resolveHook.ts"
import { PluginStorage } from "../../city/internal/pluginStorage.ts"

/**
 * The worker's state: the plugin's name (`?` until initialize) and, once initialized, the Scope
 * its resources live in and what it contributes.
 * @since 0.1.0
 * @category internals
 */
export interface WorkerState {
  /** The plugin's name, for failures. */
  name: string
  /** What initialize left, until `Dispose`. */
  running: {
    readonly name: string
    readonly scope: Scope.CloseableScope
    readonly contributions: Contributions
  } | undefined
}

/**
 * The `Initialize` handler over the worker's state and the plugin's requests to the main thread.
 * @since 0.1.0
 * @category internals
 */
export const makeInitialize = (state: WorkerState, requests: MainThreadRequests) => (request: Isolation.Initialize) =>
  Effect.gen(function*() {
    state.name = request.name
    const name = state.name
    if (state.running !== undefined) {
      return yield* Effect.fail(new Isolation.IsolationError({ reason: "IsolatedFailure", plugin: name, what: "initialize", detail: "already initialized" }))
    }
    yield* ResolveHook.admit(request.folder)
    const module = yield* Effect.tryPromise({
      try: () => import(request.url),
      catch: (error) => toFailure(name, "import", Cause.fail(error))
    })
    const shape = yield* Effect.mapError(shapeOf(module, request.name, request.url), (e) => toFailure(name, "import", Cause.fail(e)))
    const scope = yield* Scope.make()
    const lifecycle = PluginLifecycleContext.make({
      name,
      version: request.version,
      storage: new PluginStorage(request.storagePath),
      scope,
      requestReload: (change) =>
        Effect.flatMap(Effect.serviceOption(PluginContext), (call) =>
          requests.ask((id) => ({
            _tag: "RequestReload",
            id,
            change,
            ...(Option.isSome(call) ? { context: { ...call.value } } : {})
          })).pipe(
            Effect.asVoid,
            Effect.catchAll((failure) =>
              Effect.fail(new ReloadRejected({ plugin: name, mode: change.mode, reason: failure.reason }))
            )
          )),
      config: { values: request.config, unset: request.configUnset }
    })
    const plugin = shape._tag === "Plugin"
      ? shape.plugin.initialize.pipe(
        Effect.provideService(Siblings, {
          invoke: (plugin, action, input) =>
            Effect.flatMap(PluginContext, (ctx) => requests.invoke({ ...ctx }, plugin, action, input))
        })
      )
      : fromRegister({
        name,
        version: request.version,
        register: shape.register,
        extras: { prompt: undefined, skills: undefined },
        invoke: (base, plugin, action, input) => requests.invoke({ plugin: name, ...base }, plugin, action, input)
      }).initialize
    const contributions = yield* plugin.pipe(
      Effect.provideService(PluginLifecycleContext.PluginLifecycleContext, lifecycle),
      // A sibling's service is an object of the host's thread: from here none is reachable
      // (`use` fails with SiblingUnavailable); sibling actions are, through the host.
      Effect.provideService(SiblingViews, { lease: () => ({ provider: () => Option.none(), release: () => undefined }) }),
      Scope.extend(scope),
      Effect.catchAllCause((cause) =>
        Effect.zipRight(Effect.ignore(Scope.close(scope, Exit.failCause(cause))), Effect.fail(toFailure(name, "initialize", cause)))
      )
    )
    if (contributions.services !== undefined) {
      yield* Effect.ignore(Scope.close(scope, Exit.void))
      return yield* Effect.fail(
        new Isolation.IsolationError({
          reason: "IsolatedFailure",
          plugin: name,
          what: "initialize",
          detail: `it provides services to its siblings, and a service cannot leave its worker: trust it on the host's thread with "isolation": { "${name}": "none" } in plugins.json`
        })
      )
    }
    state.running = { name, scope, contributions }
    const hooks: Record<string, number> = {}
    for (const [point, handlers] of Object.entries(contributions.hooks ?? {})) {
      hooks[point] = Array.isArray(handlers) ? handlers.length : 1
    }
    return {
      actions: Object.keys(contributions.actions ?? {}),
      hooks,
      system: contributions.system !== undefined,
      availability: contributions.availability !== undefined,
      ...(contributions.skills === undefined ? {} : { skills: contributions.skills })
    }
  })
