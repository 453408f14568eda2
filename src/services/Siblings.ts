/**
 * Sibling access at the time of use (docs/plugin-loader-lifecycle.md: "Do not cache a control,
 * configuration object, or other live registry value; resolve sibling controls at the time of
 * use").
 *
 * **Typed services** (docs/library.md, "Plugin dependencies"): a plugin provides a service under a
 * `Context.Tag` (`Plugin.make({ provides: [Store] })`, its initialize returning
 * `services: Context.make(Store, ...)`); a sibling takes a handle in its initialize,
 * `const store = yield* Siblings.service(Store)`, and keeps it. The handle is stable: each
 * `store.use((s) => ...)` resolves the provider from the execution view current at that call,
 * under a lease of its own held until the call ends, so after a restart it reaches the new
 * instance, never a disposed one, and a provider removed meanwhile waits for the call. No ready
 * provider at the call is the typed `SiblingUnavailable`; the provider's own errors reach the
 * caller as they are. Every plugin's initialize can take handles (the City provides
 * `SiblingViews`).
 *
 * **Actions by name**: a loaded plugin may take `Siblings` in its initialize and keep it: each
 * `invoke` resolves the sibling from the execution view current at that call (under a lease of
 * its own), with the calling handler's agent, workspace, session and turn. `invoke` needs the
 * caller's PluginContext: it is for handlers (actions, hooks, system, availability). The loader
 * provides it to every plugin it loads (both entry styles; `register(ctx)` handlers get it as
 * `call.invoke`).
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { SiblingUnavailable } from "../schema/Errors.ts"
import type { PluginContext } from "./PluginContext.ts"

/**
 * What `Siblings` offers a plugin.
 * @since 0.1.0
 * @category models
 */
export interface SiblingsShape {
  /** Calls `action` of the sibling `plugin` as it is in the current view. */
  readonly invoke: (plugin: string, action: string, input?: unknown) => Effect.Effect<unknown, unknown, PluginContext>
}

/**
 * The Siblings service, provided by the loader to the plugins it loads.
 * @since 0.1.0
 * @category tags
 */
export class Siblings extends Context.Tag("effect-city/Siblings")<Siblings, SiblingsShape>() {}

/**
 * A lease on the current execution view, as a handle's call needs it: the service of a Tag's
 * provider in that view, if one is ready in it.
 * @since 0.1.0
 * @category models
 */
export interface SiblingViewsShape {
  /** Leases the view current now; `release` lets go of it (once). */
  readonly lease: () => {
    readonly provider: <I, S>(tag: Context.Tag<I, S>) => Option.Option<S>
    readonly release: () => void
  }
}

/**
 * The City's views, as a plugin's initialize sees them (provided by the City to every plugin).
 * @since 0.1.0
 * @category tags
 */
export class SiblingViews extends Context.Tag("effect-city/SiblingViews")<SiblingViews, SiblingViewsShape>() {}

/** The brand of {@link SiblingNeed} (a type only: no value has it). */
declare const SiblingNeedTypeId: unique symbol

/**
 * A plugin's need of the sibling service `I`: a requirement of its initialize in types only,
 * which nothing ever reads from a context. `City.make` / `City.layer` refuse, at compile time, a
 * start plugin whose need no start plugin `provides` (the error names `I`: `CheckedStartPlugins`),
 * and take the needs off what the layer requires; `city.plugins.add` takes every one off (its
 * provider is checked at the call: declare it in `requires`).
 * @since 0.1.0
 * @category models
 */
export interface SiblingNeed<in out I> {
  /** The service identifier needed (a type only: no value has it). */
  readonly [SiblingNeedTypeId]: (_: I) => I
}

/**
 * A typed handle on a sibling's service (see the module doc).
 * @since 0.1.0
 * @category models
 */
export interface SiblingService<S> {
  /** The Tag's key. */
  readonly key: string
  /** Runs `f` with the service of the provider current now, under a lease until `f` ends. */
  readonly use: <A, E, R>(f: (service: S) => Effect.Effect<A, E, R>) => Effect.Effect<A, E | SiblingUnavailable, R>
}

/**
 * A handle on the service `tag` of whichever ready sibling provides it, resolved at each call.
 *
 * Every `use` can fail with `SiblingUnavailable` (no ready provider at that call) beside the
 * service's own errors. A handler of a reference whose declared `error` Schema does not include
 * it must handle it, or `Contributions.implement` does not compile, its message naming the rule
 * and `SiblingUnavailable` (`Contributions.HandlerFailsOnlyAsDeclared`):
 *
 * ```ts
 * names.use((s) => s.nameOf(id)).pipe(Effect.catchTag("SiblingUnavailable", () => Effect.succeed(id)))
 * ```
 * @since 0.1.0
 * @category constructors
 */
export const service = <I, S>(tag: Context.Tag<I, S>): Effect.Effect<SiblingService<S>, never, SiblingViews | SiblingNeed<I>> =>
  Effect.map(SiblingViews, (views): SiblingService<S> => ({
    key: tag.key,
    use: <A, E, R>(f: (service: S) => Effect.Effect<A, E, R>) =>
      Effect.acquireUseRelease(
        Effect.sync(() => views.lease()),
        ({ provider }): Effect.Effect<A, E | SiblingUnavailable, R> =>
          Option.match(provider(tag), {
            onNone: () => Effect.fail(new SiblingUnavailable({ service: tag.key })),
            onSome: f
          }),
        ({ release }) => Effect.sync(release)
      )
  }))
