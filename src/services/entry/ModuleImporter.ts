/**
 * How the loader imports a plugin's entry module: a service with a default, so a host never has
 * to provide it. The default is the dynamic `import()` of this module's own context.
 *
 * Why it is a service: the `city` binary runs its bundle as a script compiled through V8's code
 * cache (`bin/city.mjs`), and code compiled that way cannot call `import()`
 * itself; the binary provides its own `import()` here instead. A host with a module loader of its
 * own (a test harness, a bundler's runtime) can provide one the same way. The importer receives the
 * loader's cache-busting file URL (`Entry.importUrl`) and must import that exact URL.
 * @since 0.1.0
 */
import * as Context from "effect/Context"

/**
 * Imports an ES module by its URL and resolves to its namespace.
 * @since 0.1.0
 * @category tags
 */
export class ModuleImporter extends Context.Reference<ModuleImporter>()("effect-city/ModuleImporter", {
  defaultValue: () => ({ import: (url: string): Promise<unknown> => import(url) })
}) {}
