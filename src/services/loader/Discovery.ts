/**
 * Discovery (spec/plugin-loader-lifecycle.md, "Owning code and minimal use": "discoverPlugins ...
 * lists folders by parsing manifests without importing any code, so a request handler may call
 * it"; "Discovery is cheap and safe to repeat, because it parses manifests only").
 *
 * - A root is listed, its entries sorted in code-unit order (not locale order, not readdir
 *   order), and each entry's `city-plugin.json` is read, parsed and validated (the Schema, then
 *   the rules that need the folder: name equals folder name, entry lexically inside).
 * - Validation has a fast path for the usual valid manifest (`ManifestGuard.isManifest`, which
 *   accepts exactly what the Schema accepts, and the folder rules without `path.resolve`): a
 *   Schema decode costs several times the read and `JSON.parse` of a small file, and a first
 *   discovery must stay within 1.2× a plain read-and-parse loop (issue 9). The fast path only
 *   ever accepts; any manifest it does not accept is decoded with the Schema, which alone decides
 *   the refusal and words its reasons.
 * - An entry without `city-plugin.json` (or a plain file) is not a plugin: it is left out
 *   without a message. A root that does not exist is empty; one that exists but cannot be
 *   listed fails with PluginRootUnreadable.
 * - Nothing is imported, nothing is run, nothing is written: discovery only reads.
 * - The reads are synchronous (`readdirSync`, then `readFileSync` per manifest), measured against the plain loop in `bench/discovery.bench.ts`: per-file
 *   asynchronous reads cost about ten times as much on 1,000 folders, for files of a few hundred
 *   bytes. Discovery therefore blocks the event loop for its duration (a few ms per 1,000
 *   folders), which a request handler can afford.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ManifestInvalid, PluginRootUnreadable } from "../../schema/LoaderErrors.ts"
import type { RootKind } from "../../schema/LoadReport.ts"
import * as Manifest from "../../schema/Manifest.ts"
import { isManifest } from "../../schema/ManifestGuard.ts"

/**
 * A plugin root: where it is and which kind it is.
 * @since 0.1.0
 * @category models
 */
export interface PluginRoot {
  /** Bundled (scanned first) or instance. */
  readonly kind: RootKind
  /** The root's folder. */
  readonly path: string
}

/**
 * One plugin folder found in a root: its manifest, or why the manifest was refused.
 * @since 0.1.0
 * @category models
 */
export type DiscoveredPlugin =
  & {
    /** The folder's name (the plugin's name when the manifest is valid). */
    readonly name: string
    readonly root: RootKind
    /** The plugin folder, absolute. */
    readonly folder: string
  }
  & (
    | { readonly _tag: "Valid"; readonly manifest: Manifest.Manifest }
    | { readonly _tag: "Invalid"; readonly error: ManifestInvalid }
  )

const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** The manifest's text, `undefined` when the entry has none (not a plugin), or the read error. */
const readManifestText = (file: string): string | undefined | { readonly error: string } => {
  try {
    return fs.readFileSync(file, "utf8")
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return code === "ENOENT" || code === "ENOTDIR" ? undefined : { error: describe(error) }
  }
}

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error))

/**
 * Reads and validates one folder's manifest; `undefined` when the folder has no manifest.
 *
 * The usual valid manifest takes the fast path: `isManifest` (a hand-written check that accepts
 * exactly what the Schema accepts, see ManifestGuard.ts) and the folder rules checked without
 * `path.resolve` (a name equal to `name`, which is the folder's basename; an entry that
 * `isPlainRelative`). Every other manifest goes the full way, where the Schema
 * (`Manifest.decode`) and `Manifest.folderIssues` decide and word every reason: the fast path
 * only ever says "valid", never why not.
 * @since 0.1.0
 * @category discovery
 */
export const readFolder = (root: PluginRoot, name: string): DiscoveredPlugin | undefined => {
  // `root.path` is absolute and normalized (see discoverRoot), so concatenation is a join.
  const folder = root.path + path.sep + name
  const file = folder + path.sep + Manifest.manifestFile
  const text = readManifestText(file)
  if (text === undefined) return undefined
  if (typeof text !== "string") return invalid(root, name, folder, file, [{ field: "", rule: `cannot be read: ${text.error}` }])
  // The memo is empty while every manifest seen was valid: then not even a lookup.
  const known = memo.size === 0 ? undefined : memo.get(file)
  if (known !== undefined && known.text === text && known.result.root === root.kind) return known.result
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    return remember(file, text, invalid(root, name, folder, file, [{ field: "", rule: `is not valid JSON: ${describe(error)}` }]))
  }
  if (isManifest(json) && json.name === name && Manifest.isPlainRelative(json.entry)) {
    return { _tag: "Valid", name, root: root.kind, folder, manifest: json }
  }
  return remember(file, text, validate(json, root, name, folder, file))
}

const invalid = (
  root: PluginRoot,
  name: string,
  folder: string,
  file: string,
  issues: ReadonlyArray<Manifest.ManifestIssue>
): DiscoveredPlugin => ({ _tag: "Invalid", name, root: root.kind, folder, error: new ManifestInvalid({ file, issues }) })

/**
 * The last full validation of each manifest file that needed one, keyed by its path and reused
 * only when the file's text is the same (content, not mtime, decides: nothing can go stale), so
 * repeating discovery does not decode a refused manifest with the Schema again. A manifest the
 * fast path accepts is not kept. Keeping it too would spare a repeated discovery the parse and
 * the check (measured: ~0.93× the plain loop instead of ~1.05×), but the garbage collector then
 * copies the 1,000 kept texts and manifests around, which cost the first discovery of a process
 * ~1.10× instead of ~1.05×: too close to the 1.2× goal on a loaded machine.
 */
const memo = new Map<string, { readonly text: string; readonly result: DiscoveredPlugin }>()
const memoLimit = 10_000

const remember = (file: string, text: string, result: DiscoveredPlugin): DiscoveredPlugin => {
  if (memo.size >= memoLimit) memo.clear()
  memo.set(file, { text, result })
  return result
}

/**
 * Forgets every memoized validation (the benchmark measures discovery with and without it).
 * @since 0.1.0
 * @category discovery
 */
export const forgetValidations = (): void => memo.clear()

/** The full validation of parsed JSON: the Schema, then the rules that need the folder. */
const validate = (json: unknown, root: PluginRoot, name: string, folder: string, file: string): DiscoveredPlugin => {
  const decoded = Manifest.decode(json)
  if ("issues" in decoded) return invalid(root, name, folder, file, decoded.issues)
  const issues = Manifest.folderIssues(decoded.manifest, folder)
  return issues.length === 0
    ? { _tag: "Valid", name, root: root.kind, folder, manifest: decoded.manifest }
    : invalid(root, name, folder, file, issues)
}

/**
 * The folder names of a root, in code-unit order; empty when the root does not exist.
 * @since 0.1.0
 * @category discovery
 */
export const listRoot = (root: PluginRoot): Effect.Effect<ReadonlyArray<string>, PluginRootUnreadable> =>
  Effect.suspend(() => {
    try {
      return Effect.succeed(fs.readdirSync(root.path).sort(byCodeUnits))
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === "ENOENT"
        ? Effect.succeed([])
        : Effect.fail(new PluginRootUnreadable({ root: root.path, reason: describe(error) }))
    }
  })

/**
 * Every plugin folder of one root, in code-unit name order: one synchronous pass, no Effect per
 * folder. The order of the result does not depend on the file system.
 * @since 0.1.0
 * @category discovery
 */
export const discoverRoot = (given: PluginRoot): Effect.Effect<ReadonlyArray<DiscoveredPlugin>, PluginRootUnreadable> =>
  Effect.suspend(() => {
    const root: PluginRoot = { kind: given.kind, path: path.resolve(given.path) }
    return Effect.map(listRoot(root), (names) => {
    const found: Array<DiscoveredPlugin> = []
    for (const name of names) {
      const plugin = readFolder(root, name)
      if (plugin !== undefined) found.push(plugin)
    }
    return found
    })
  })

/**
 * Every plugin folder of every root, roots in the order given (bundled first, then instance),
 * each in code-unit name order. Parses manifests only: never imports or runs plugin code.
 * @since 0.1.0
 * @category discovery
 */
export const discover = (
  roots: ReadonlyArray<PluginRoot>
): Effect.Effect<ReadonlyArray<DiscoveredPlugin>, PluginRootUnreadable> =>
  Effect.map(Effect.forEach(roots, discoverRoot), (lists) => lists.flat())
