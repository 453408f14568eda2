/**
 * Host-provided modules: a folder plugin imports `effect`, `@effect/platform` and
 * `effect-city/plugin` as the host's own modules, wherever its folder lies (docs/design.md,
 * "Third-party plugins"; docs/plugin-loader.md, "Host-provided modules").
 *
 * Node resolves a bare specifier from the importing file's own folder, so a plugin in
 * `~/.city/plugins/notes` found no `effect` at all, and a plugin that ships its own
 * `node_modules/effect` brought a second copy into the process (other Tags' registries, other
 * FiberRefs, no shared tracing). The host registers one module `resolve` hook (Node's
 * `module.register`) before it imports the first plugin entry; the hook resolves the provided
 * specifiers *as the host itself resolves them* when the importing file lies in an admitted plugin
 * folder, and passes everything else on unchanged.
 *
 * Decisions:
 * - **What is provided**: `effect` and every subpath (`effect/Effect`, `effect/Schema`, ...),
 *   `@effect/platform` and every subpath, and `effect-city/plugin`. Nothing else, and a manifest
 *   cannot ask for more: each provided module is part of the plugin contract, versioned by this
 *   package's peer range, and a module that only some plugins need (a database driver,
 *   `@effect/platform-node`) is the plugin's to ship in its own folder. A module the plugin ships
 *   that imports `effect` itself gets the host's copy too, since it lies inside the folder.
 * - **A plugin's own copy is not used**: when a plugin folder holds `node_modules/effect`,
 *   `node_modules/@effect/platform` or `node_modules/effect-city`, the host's copy wins (the
 *   hook answers before Node looks there) and the load report says so, naming the plugin and the
 *   copy ({@link shadowedCopies}). Refusing the plugin would punish a folder that merely carries a
 *   lockfile's worth of dependencies; loading it with its own copy would bring the second Effect
 *   back. A plugin that inlines Effect into its own bundle cannot be seen here; it works, with
 *   that copy's separate state.
 * - **Limited to plugin folders**: a folder is admitted (by path and by real path, since Node
 *   names a module by its real path) before its entry is imported; imports from anywhere else,
 *   the host's own included, resolve as Node always does.
 * - **Once per process**: module hooks are process-wide in Node, so the registration is too (the
 *   first admission registers it; later ones only add a folder). The admission waits for the
 *   hook's acknowledgement, so the entry's import always sees its folder admitted (the admission
 *   and the hook are in internal/resolveHook.ts).
 * - **Where the host's copies are**: {@link HostModules} names the module the specifiers are
 *   resolved from and the URL of `effect-city/plugin`. The default is this package's own place (a
 *   library user's application resolves exactly the `effect` it runs); the `city` binary, whose
 *   own code is one bundled file, gives plugins its installed package's copies (see
 *   docs/plugin-loader.md).
 * - Node before 20.6 has no `module.register`: there the folder's own resolution applies, as
 *   before, and the admission says nothing.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as path from "node:path"

/**
 * The packages a plugin gets from the host, with every subpath of the first two.
 * @since 0.1.0
 * @category constants
 */
export const providedPackages: ReadonlyArray<string> = ["effect", "@effect/platform", "effect-city"]

/**
 * Whether the host answers `specifier` for a plugin: `effect` and `@effect/platform` with any
 * subpath, and `effect-city/plugin`.
 * @since 0.1.0
 * @category constants
 */
export const isProvided = (specifier: string): boolean =>
  specifier === "effect-city/plugin" ||
  specifier === "effect" || specifier.startsWith("effect/") ||
  specifier === "@effect/platform" || specifier.startsWith("@effect/platform/")

/** This module's extension: `.ts` when it runs from the sources, `.js` once compiled. */
const ownExtension = path.extname(new URL(import.meta.url).pathname)

/**
 * Where the host's copies are: the module URL the provided specifiers are resolved from, and the
 * URL of `effect-city/plugin`. Defaults to this package's own place.
 * @since 0.1.0
 * @category tags
 */
export class HostModules extends Context.Reference<HostModules>()("effect-city/HostModules", {
  defaultValue: () => ({
    resolveFrom: import.meta.url,
    plugin: new URL(`../../plugin${ownExtension}`, import.meta.url).href
  })
}) {}
