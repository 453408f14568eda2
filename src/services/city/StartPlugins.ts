/**
 * The plugins a City starts with (`City.layer({ plugins })`, docs/city-plugin-lifecycle.md: "A
 * host should isolate that Plugin and continue starting other subjects instead of treating an
 * optional Plugin as an application-wide startup dependency").
 *
 * - Bad input is refused before anything starts: an invalid name (the plugin-name rule,
 *   schema/PluginName.ts) or a name given twice fails with `InvalidPluginName` /
 *   `PluginAlreadyRegistered`, and no plugin is initialized.
 * - Then every plugin is added, concurrently. One that fails is isolated: its error snapshot stays
 *   and a warning is logged; one marked `required` fails the start with its
 *   `PluginInitializeFailed`.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type { InvalidPluginName, PluginInitializeFailed } from "../../schema/Errors.ts"
import { PluginAlreadyRegistered } from "../../schema/Errors.ts"
import * as PluginName from "../../schema/PluginName.ts"
import { isPlugin, type Plugin } from "../Plugin.ts"
import type { PluginRegistryShape } from "./PluginRegistry.ts"

/**
 * A plugin to start with the City; `required` makes its failure fail the layer.
 * @since 0.1.0
 * @category models
 */
export type StartPlugin<R> = Plugin<unknown, R> | { readonly plugin: Plugin<unknown, R>; readonly required?: boolean }

/**
 * What a list of start plugins requires: the union of what each plugin's initialize requires, so
 * that plugins with different requirements start together (`plugins: [a, b]`) and the layer asks
 * for both.
 * @since 0.1.0
 * @category models
 */
export type StartRequirements<P> = P extends ReadonlyArray<infer S> ? S extends StartPlugin<infer R> ? R : never : never

const startPluginOf = <R>(start: StartPlugin<R>) =>
  isPlugin(start) ? { plugin: start, required: false } : { plugin: start.plugin, required: start.required === true }

/**
 * Refuses bad input before anything starts: an invalid name, or a name given twice.
 * @since 0.1.0
 * @category constructors
 */
export const check = <R>(plugins: ReadonlyArray<StartPlugin<R>>) =>
  Effect.suspend((): Effect.Effect<void, InvalidPluginName | PluginAlreadyRegistered> => {
    const seen = new Set<string>()
    for (const start of plugins) {
      const name = startPluginOf(start).plugin.name
      const invalid = PluginName.check(name)
      if (invalid !== undefined) return Effect.fail(invalid)
      if (seen.has(name)) return Effect.fail(new PluginAlreadyRegistered({ name }))
      seen.add(name)
    }
    return Effect.void
  })

/**
 * Adds every start plugin, concurrently: an optional one that fails is isolated (logged), a
 * required one fails the start.
 * @since 0.1.0
 * @category constructors
 */
export const start = <R>(
  registry: PluginRegistryShape,
  plugins: ReadonlyArray<StartPlugin<R>>
): Effect.Effect<void, PluginInitializeFailed | InvalidPluginName | PluginAlreadyRegistered, R> =>
  Effect.forEach(
    plugins,
    (each) => {
      const { plugin, required } = startPluginOf(each)
      return registry.add(plugin).pipe(
        Effect.catchTags({
          // Nobody can close the City before it is returned.
          CityClosed: (error) => Effect.die(error),
          PluginInitializeFailed: (error) =>
            required ? Effect.fail(error) : Effect.logWarning(`optional plugin isolated: ${error.message}`)
        })
      )
    },
    { concurrency: "unbounded", discard: true }
  )
