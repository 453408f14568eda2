/**
 * `City.layer(options)`: the City as a Layer. The core services are composed in acquisition
 * order Workspaces → PluginRegistry → ExecutionLeases → Sessions, so closing releases them in
 * reverse: Sessions stop admitting, running Steps drain (then are interrupted), plugins are
 * disposed, Workspaces are released (spec: "city.close() stops Sessions before releasing Plugins
 * and Workspaces"). The order is the composition's, not hand-written sequencing.
 *
 * Plugins given in `options.plugins` start concurrently while the layer builds. An optional
 * plugin that fails is isolated (its error snapshot stays) and the layer still builds; one marked
 * `required` fails the layer's construction with its PluginInitializeFailed.
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { CityCloseError, type PluginInitializeFailed } from "../schema/Errors.ts"
import type { Plugin } from "../services/Plugin.ts"
import { isPlugin } from "../services/Plugin.ts"
import * as Admission from "../services/city/Admission.ts"
import { City, type CityShape, makeScope } from "../services/city/City.ts"
import * as CityConfig from "../services/city/CityConfig.ts"
import * as CloseReport from "../services/city/CloseReport.ts"
import * as ExecutionLeases from "../services/city/ExecutionLeases.ts"
import * as PluginRegistry from "../services/city/PluginRegistry.ts"
import * as Sessions from "../services/city/Sessions.ts"
import * as Workspaces from "../services/city/Workspaces.ts"

/** A plugin to start with the City; `required` makes its failure fail the layer. */
export type StartPlugin<R> = Plugin<unknown, R> | { readonly plugin: Plugin<unknown, R>; readonly required?: boolean }

export interface CityLayerOptions<R = never> extends CityConfig.CityOptions {
  readonly plugins?: ReadonlyArray<StartPlugin<R>> | undefined
}

/** The core services, in acquisition order. */
export const core = (options: CityConfig.CityOptions) => {
  const base = Layer.mergeAll(Admission.layer, CloseReport.layer, CityConfig.layer(options))
  return Sessions.layer.pipe(
    Layer.provideMerge(ExecutionLeases.layer),
    Layer.provideMerge(PluginRegistry.layer),
    Layer.provideMerge(Workspaces.layer),
    Layer.provideMerge(base)
  )
}

/** Builds a City in the current Scope; closing the Scope runs `city.close` and logs its failures. */
export const make = <R = never>(
  options: CityLayerOptions<R> = {}
): Effect.Effect<CityShape, PluginInitializeFailed, Scope.Scope | FileSystem.FileSystem | R> =>
  Effect.gen(function*() {
    const outer = yield* Effect.scope
    const inner = yield* Scope.fork(outer, ExecutionStrategy.sequential)
    const context = yield* Layer.buildWithScope(core(options), inner)
    const gate = Context.get(context, Admission.Admission)
    const report = Context.get(context, CloseReport.CloseReport)
    const registry = Context.get(context, PluginRegistry.PluginRegistry)
    const leases = Context.get(context, ExecutionLeases.ExecutionLeases)
    const workspaces = Context.get(context, Workspaces.Workspaces)
    const sessions = Context.get(context, Sessions.Sessions)

    const closed = Deferred.unsafeMake<Exit.Exit<void, CityCloseError>>(FiberId.none)
    const close: Effect.Effect<void, CityCloseError> = Effect.suspend(() => {
      if (!gate.close()) return Effect.flatten(Deferred.await(closed))
      return Scope.close(inner, Exit.void).pipe(
        Effect.zipRight(Effect.sync(() => {
          const failures = report.failures()
          return failures.length === 0 ? Exit.void : Exit.fail(new CityCloseError({ failures }))
        })),
        Effect.tap((exit) => Deferred.succeed(closed, exit)),
        Effect.flatten,
        Effect.uninterruptible
      )
    })
    yield* Scope.addFinalizer(
      outer,
      close.pipe(Effect.catchAll((error) => Effect.logError(error.message)))
    )

    const city: CityShape = {
      plugins: registry,
      workspaces,
      agents: sessions.agents,
      leases,
      scope: makeScope(registry, leases),
      close
    }

    const results = yield* Effect.forEach(
      options.plugins ?? [],
      (start) => {
        const plugin = isPlugin(start) ? start : start.plugin
        const required = !isPlugin(start) && start.required === true
        return registry.add(plugin).pipe(
          Effect.map(() => undefined),
          Effect.catchAll((error) =>
            required || error._tag !== "PluginInitializeFailed"
              ? Effect.succeed(error)
              : Effect.as(Effect.logWarning(`optional plugin isolated: ${error.message}`), undefined)
          )
        )
      },
      { concurrency: "unbounded" }
    )
    for (const failure of results) {
      if (failure !== undefined) {
        if (failure._tag === "PluginInitializeFailed") return yield* Effect.fail(failure)
        return yield* Effect.die(failure)
      }
    }
    return city
  })

export const layer = <R = never>(options: CityLayerOptions<R> = {}) => Layer.scoped(City, make(options))
