/**
 * The plugins a City starts with (`City.layer({ plugins })`, docs/city-plugin-lifecycle.md: "A
 * host should isolate that Plugin and continue starting other subjects instead of treating an
 * optional Plugin as an application-wide startup dependency").
 *
 * - Bad input is refused before anything starts: an invalid name (the plugin-name rule,
 *   schema/PluginName.ts) or a name given twice, also when the two differ only in case (the same
 *   rule), fails with `InvalidPluginName` / `PluginAlreadyRegistered`, and no plugin is initialized.
 * - A required dependency (`Plugin.make({ requires })`) must be in the list, and the dependencies
 *   must not form a cycle: else `PluginDependencyMissing` / `PluginDependencyCycle`, and nothing
 *   starts.
 * - Then every plugin is added, in dependency order, independent ones concurrently. One that fails
 *   is isolated: its error snapshot stays and a warning is logged, and so are its dependents; one
 *   marked `required` fails the start with its `PluginInitializeFailed`, which `City.layer`
 *   unwraps into the plugin's own typed failure when it has one (internal/initializeFailure.ts).
 * - In types, a start plugin that needs a sibling service no plugin of the list provides does not
 *   compile: `CheckedStartPlugins` turns it into `NoStartPluginProvides<Service>`, so that the
 *   compiler's message names the service (as `Contributions.HandlerRequiresOnlyPluginContext` names
 *   a handler's extra services).
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { RegistryError } from "../../schema/Errors.ts"
import { oneLine } from "../../schema/OneLine.ts"
import * as PluginName from "../../schema/PluginName.ts"
import { isPlugin, type Plugin } from "../Plugin.ts"
import type { SiblingNeed } from "../Siblings.ts"
import * as Dependencies from "./internal/dependencies.ts"
import { caseKey } from "./internal/caseKey.ts"
import type { PluginRegistryShape } from "./internal/pluginRegistry.ts"

/**
 * A plugin to start with the City; `required` makes its failure fail the layer.
 * @since 0.1.0
 * @category models
 */
export type StartPlugin<R> = Plugin<unknown, R> | { readonly plugin: Plugin<unknown, R>; readonly required?: boolean }

/**
 * What a list of start plugins requires: the union of what each plugin's initialize requires, so
 * that plugins with different requirements start together (`plugins: [a, b]`) and the layer asks
 * for both; but no `SiblingNeed` (types only: a need that no plugin of the list meets is refused
 * at the call by {@link CheckedStartPlugins}, with a message naming the service).
 * @since 0.1.0
 * @category models
 */
export type StartRequirements<P> = Exclude<StartNeeds<P>, SiblingNeed<any>>

/**
 * What the initializes of a list of start plugins require, sibling needs included.
 * @since 0.1.0
 * @category models
 */
export type StartNeeds<P> = P extends ReadonlyArray<infer S> ? S extends StartPlugin<infer R> ? R : never : never

/**
 * The services a list of start plugins provides (`Plugin.make({ provides })`), by identifier.
 * @since 0.1.0
 * @category models
 */
export type StartProvides<P> = P extends ReadonlyArray<infer S>
  ? S extends Plugin<any, any, infer Provided> | { readonly plugin: Plugin<any, any, infer Provided> } ? unknown extends Provided ? never : Provided
  : never
  : never

/**
 * The typed failures of the start plugins marked `required` in `P`: the initialize errors `E` that
 * fail `City.make` / `City.layer` unwrapped, as a Layer fails with its own error. With the `const`
 * type parameter of `City.layer`, `required: true` written in the list infers as the literal
 * `true`; a start plugin whose `required` is only known as a `boolean` counts as required (the
 * type may then name a failure that cannot happen), one without `required` or with `false` does not.
 * A wrapper generic in `P` keeps it: it is not assignable to `CityBuildError` alone.
 * @since 0.1.0
 * @category models
 */
export type RequiredStartFailure<P extends ReadonlyArray<unknown>> = RequiredFailureOf<P[number]>

type RequiredFailureOf<S> = S extends { readonly plugin: Plugin<infer E, any, any> }
  ? S extends { readonly required?: false | undefined } ? never : E
  : never

/**
 * The compile error of a start plugin that needs a sibling service (`Siblings.service(Tag)`) that
 * no plugin of the list provides: a property named by the rule, carrying the missing service's
 * identifier `I`, so that the message's first line names it (docs/library.md, "Plugin dependencies").
 * @since 0.1.0
 * @category models
 */
export interface NoStartPluginProvides<I> {
  /** The missing service's identifier (a type only: no value has it). */
  readonly "no start plugin provides this sibling service": I
}

/** The identifiers of the sibling services a start plugin needs that `Provided` does not hold. */
type UnmetNeeds<S, Provided> = Exclude<S extends StartPlugin<infer R> ? NeedsOf<R> : never, Provided>

/** The sibling services a plugin's requirements `R` name (none for `any`: nothing is known). */
type NeedsOf<R> = 0 extends 1 & R ? never : R extends SiblingNeed<infer I> ? I : never

/**
 * A list of start plugins as `City.layer` checks it: each plugin as it is, but one that needs a
 * sibling service no plugin of the list provides, which becomes {@link NoStartPluginProvides} of
 * that service (a compile error at that plugin).
 * @since 0.1.0
 * @category models
 */
export type CheckedStartPlugins<P> = {
  readonly [K in keyof P]: [UnmetNeeds<P[K], StartProvides<P>>] extends [never] ? P[K]
    : NoStartPluginProvides<UnmetNeeds<P[K], StartProvides<P>>>
}

const startPluginOf = <R>(start: StartPlugin<R>) =>
  isPlugin(start) ? { plugin: start, required: false } : { plugin: start.plugin, required: start.required === true }

/**
 * Refuses bad input before anything starts: an invalid name, a name given twice, a required
 * dependency that is not in the list, or dependencies that form a cycle.
 * @since 0.1.0
 * @category constructors
 */
export const check = <R>(plugins: ReadonlyArray<StartPlugin<R>>) =>
  Effect.suspend((): Effect.Effect<void, RegistryError> => {
    // The names of the list by case key (internal/caseKey.ts): two that differ only in case clash.
    const seen = new Map<string, string>()
    for (const start of plugins) {
      const name = startPluginOf(start).plugin.name
      const invalid = PluginName.check(name)
      if (invalid !== undefined) return Effect.fail(invalid)
      const key = caseKey(name)
      const registered = seen.get(key)
      if (registered !== undefined) {
        return Effect.fail(new RegistryError({ reason: "PluginAlreadyRegistered", plugin: name, ...(registered === name ? {} : { registered }) }))
      }
      seen.set(key, name)
    }
    const listed = (name: string) => seen.get(caseKey(name)) === name
    for (const start of plugins) {
      const { plugin } = startPluginOf(start)
      const missing = (plugin.requires ?? []).filter((r) => !r.optional && !listed(r.name)).map((r) => r.name)
      if (missing.length > 0) return Effect.fail(new RegistryError({ reason: "PluginDependencyMissing", plugin: plugin.name, missing: [...new Set(missing)].sort() }))
    }
    const cycle = Dependencies.findCycle(graphOf(plugins))
    return cycle === undefined ? Effect.void : Effect.fail(new RegistryError({ reason: "PluginDependencyCycle", cycle }))
  })

const graphOf = <R>(plugins: ReadonlyArray<StartPlugin<R>>): Dependencies.Graph =>
  new Map(plugins.map((start) => {
    const { plugin } = startPluginOf(start)
    return [plugin.name, plugin.requires ?? []] as const
  }))

/**
 * Adds every start plugin (after `check`), in dependency order: in waves, the plugins of a wave
 * concurrently, each after the plugins it requires. An optional one that fails is isolated
 * (logged); so is every plugin that requires it, directly or not, which is not initialized and
 * gets the error snapshot `dependency <name> failed: <its error>`. A required one that fails, or
 * that cannot start for its dependency, fails the start.
 * @since 0.1.0
 * @category constructors
 */
export const start = <R>(
  registry: PluginRegistryShape,
  plugins: ReadonlyArray<StartPlugin<R>>
): Effect.Effect<void, RegistryError, R> =>
  Effect.gen(function*() {
    const byName = new Map(plugins.map((each) => {
      const start = startPluginOf(each)
      return [start.plugin.name, start] as const
    }))
    /** The plugins that did not start, with the reason their dependents give. */
    const failed = new Map<string, string>()
    const startOne = (name: string) =>
      Effect.suspend(() => {
        const { plugin, required } = byName.get(name)!
        const broken = (plugin.requires ?? []).find((r) => !r.optional && failed.has(r.name))
        if (broken !== undefined) {
          const reason = oneLine(`dependency ${broken.name} failed: ${failed.get(broken.name)!}`, 1000)
          failed.set(name, reason)
          return Effect.zipRight(
            registry.unstarted(plugin, reason),
            required
              ? Effect.fail(new RegistryError({ reason: "PluginDependencyMissing", plugin: name, missing: [broken.name] }))
              : Effect.logWarning(`optional plugin isolated: ${name}: ${reason}`)
          )
        }
        return registry.addWrapped(plugin).pipe(
          Effect.asVoid,
          Effect.catchTags({
            // Nobody can close the City before it is returned.
            CityClosed: (error) => Effect.die(error),
            RegistryError: (error) =>
              error.reason !== "PluginInitializeFailed" ? Effect.fail(error) : Effect.zipRight(
                Effect.flatMap(registry.get(name), (snapshot) =>
                  Effect.sync(() => void failed.set(name, Option.match(snapshot, { onNone: () => error.message, onSome: (s) => s.last_error ?? error.message })))),
                required ? Effect.fail(error) : Effect.logWarning(`optional plugin isolated: ${error.message}`)
              )
          })
        )
      })
    for (const wave of Dependencies.initializeWaves(graphOf(plugins))) {
      yield* Effect.forEach(wave, startOne, { concurrency: "unbounded", discard: true })
    }
  })
