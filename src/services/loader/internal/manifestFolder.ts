/**
 * The manifest's rules that need its folder (docs/plugin-loader-lifecycle.md, "Lifecycle and
 * layout": the loader "verifies that the entry remains inside the plugin directory by a lexical
 * path check that does not resolve symlinks"), and the optional files it names.
 * @since 0.1.0
 */
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as path from "node:path"
import type * as Faults from "../../../schema/Faults.ts"
import * as Manifest from "../../../schema/Manifest.ts"
import { PluginName } from "../../../schema/PluginName.ts"

/** Each field a folder rule reads, decoded alone: a rule runs whenever its field decodes, whatever else the manifest holds. */
const nameOf = Schema.decodeUnknownOption(Schema.Struct({ name: PluginName }))
const entryOf = Schema.decodeUnknownOption(Schema.Struct({ entry: Manifest.EntryPath }))
const webEntryOf = Schema.decodeUnknownOption(Schema.Struct({ web: Schema.Struct({ entry: Manifest.RelativePath }) }))
const webCssOf = Schema.decodeUnknownOption(Schema.Struct({ web: Schema.Struct({ css: Manifest.RelativePath }) }))

/**
 * The rules that need the folder, judged on a parsed manifest (valid or not: each rule runs when
 * the field it reads decodes, so a manifest refused for other fields still says so): `name`
 * equals the folder's name, and `entry` (and `web.entry`, `web.css`) resolve inside the folder
 * (`path.resolve` + prefix check, lexical: symlinks are not resolved, as the spec says).
 * @since 0.1.0
 * @category internals
 */
export const folderCheck = (folder: string): Faults.Check => (manifest) => {
  const folderName = path.basename(folder)
  const inside = (field: string, relative: Option.Option<string>): ReadonlyArray<Faults.Fault> =>
    Option.isSome(relative) && !entryInside(folder, relative.value)
      ? [{ field, rule: `must stay inside the plugin folder, got ${JSON.stringify(relative.value)}` }]
      : []
  const name = Option.map(nameOf(manifest), (m) => m.name)
  return [
    ...(Option.isSome(name) && name.value !== folderName
      ? [{ field: "name", rule: `must equal the folder name ${JSON.stringify(folderName)}, got ${JSON.stringify(name.value)}` }]
      : []),
    ...inside("entry", Option.map(entryOf(manifest), (m) => m.entry)),
    ...inside("web.entry", Option.map(webEntryOf(manifest), (m) => m.web.entry)),
    ...inside("web.css", Option.map(webCssOf(manifest), (m) => m.web.css))
  ]
}

/**
 * The folder rules a decoded manifest breaks (`folderCheck`).
 * @since 0.1.0
 * @category internals
 */
export const folderIssues = (manifest: Manifest.Manifest, folder: string): ReadonlyArray<Manifest.ManifestIssue> =>
  folderCheck(folder)(manifest)

/**
 * Whether `entry` resolves lexically inside `folder`: `path.resolve(folder, entry)` starts with
 * the folder followed by a separator. A symlink inside the folder pointing elsewhere passes: the
 * check is lexical, as the spec says.
 * @since 0.1.0
 * @category internals
 */
export const entryInside = (folder: string, entry: string): boolean => {
  const base = path.resolve(folder)
  return path.resolve(base, entry).startsWith(base + path.sep)
}

/**
 * The files a manifest names beside its entry (`icon`, `web.entry`, `web.css`), relative to the
 * folder: when one is absent the loader warns, and the plugin still loads.
 * @since 0.1.0
 * @category internals
 */
export const optionalFiles = (manifest: Manifest.Manifest): ReadonlyArray<{ readonly field: string; readonly file: string }> => [
  ...(manifest.icon === undefined ? [] : [{ field: "icon", file: manifest.icon }]),
  ...(manifest.web === undefined ? [] : [{ field: "web.entry", file: manifest.web.entry }]),
  ...(manifest.web?.css === undefined ? [] : [{ field: "web.css", file: manifest.web.css }])
]
