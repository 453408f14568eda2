/**
 * The manifest's rules that need its folder (docs/plugin-loader-lifecycle.md, "Lifecycle and
 * layout": the loader "verifies that the entry remains inside the plugin directory by a lexical
 * path check that does not resolve symlinks"), and the optional files it names.
 * @since 0.1.0
 */
import * as path from "node:path"
import type * as Manifest from "../../../schema/Manifest.ts"

/**
 * The rules that need the folder: `name` equals the folder's name, and `entry` (and `web.entry`,
 * `web.css`) resolve inside the folder (`path.resolve` + prefix check, lexical: symlinks are not
 * resolved, as the spec says).
 * @since 0.1.0
 * @category internals
 */
export const folderIssues = (manifest: Manifest.Manifest, folder: string): ReadonlyArray<Manifest.ManifestIssue> => {
  const issues: Array<Manifest.ManifestIssue> = []
  const folderName = path.basename(folder)
  if (manifest.name !== folderName) {
    issues.push({ field: "name", rule: `must equal the folder name ${JSON.stringify(folderName)}, got ${JSON.stringify(manifest.name)}` })
  }
  const inside = (field: string, relative: string | undefined) => {
    if (relative !== undefined && !entryInside(folder, relative)) {
      issues.push({ field, rule: `must stay inside the plugin folder, got ${JSON.stringify(relative)}` })
    }
  }
  inside("entry", manifest.entry)
  inside("web.entry", manifest.web?.entry)
  inside("web.css", manifest.web?.css)
  return issues
}

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
