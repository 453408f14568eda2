/**
 * Discovery (docs/plugin-loader-lifecycle.md, "Owning code and minimal use": "discoverPlugins ...
 * lists folders by parsing manifests without importing any code, so a request handler may call
 * it"; "Discovery is cheap and safe to repeat, because it parses manifests only").
 *
 * - A root is listed, its entries sorted in code-unit order (not locale order, not readdir
 *   order), and each entry's `city-plugin.json` is read through the one file reader
 *   (services/files/TextFile.ts: regular files only, 1 MiB cap, BOM accepted, invalid UTF-8
 *   refused), parsed and decoded with the Manifest Schema, then checked against the rules that
 *   need the folder (name equals folder name, entry lexically inside).
 * - A refused manifest names every fault at once (schema/Faults.ts): the Schema's issues (decoded
 *   with `errors: "all"`) and the folder rules, each judged whenever the field it reads decodes.
 *   Each is one line naming the manifest's file, the field and the rule (cut with `oneLine`); at
 *   most 20 are listed, with the count of the others (`… and N more faults`).
 * - An entry without `city-plugin.json` (or a plain file) is not a plugin: it is left out
 *   without a message. A root that does not exist is empty; one that exists but cannot be
 *   listed fails with PluginRootUnreadable. A manifest that is a FIFO, a device, a directory or
 *   too large is an Invalid folder with its reason, never a hang: the other folders go on.
 * - Files the manifest names beside the entry (`icon`, `web.entry`, `web.css`) that are absent
 *   are warnings of the Valid folder, never a skip.
 * - Repeating discovery is cheap: each decoded manifest is remembered by its path, size,
 *   modification time and inode (one `stat`), so an unchanged manifest is neither read nor
 *   decoded again; any change of the file changes one of them.
 * - Nothing is imported, nothing is run, nothing is written. The reads are asynchronous, a few
 *   folders at a time, so discovery never blocks the event loop of the daemon that runs it.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as path from "node:path"
import * as Faults from "../../schema/Faults.ts"
import { PluginLoadError } from "../../schema/LoaderErrors.ts"
import type { RootKind } from "../../schema/LoadReport.ts"
import * as Manifest from "../../schema/Manifest.ts"
import * as ManifestFolder from "./internal/manifestFolder.ts"
import { oneLine } from "../../schema/OneLine.ts"
import { notJsonRule } from "../../schema/ParseIssue.ts"
import * as TextFile from "../files/TextFile.ts"

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
 * One plugin folder found in a root: its manifest (and the warnings about it), or why the
 * manifest was refused.
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
    | { readonly _tag: "Valid"; readonly manifest: Manifest.Manifest; readonly warnings: ReadonlyArray<string> }
    | { readonly _tag: "Invalid"; readonly error: PluginLoadError }
  )

const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** How many folders are read at once. */
const concurrency = 32

/**
 * The refusal of a manifest: its issues cut to one line each, each listed once, the first
 * `Faults.faultsShown` kept and the others counted.
 * @since 0.1.0
 * @category utils
 */
export const refusal = (file: string, issues: Arr.NonEmptyReadonlyArray<Manifest.ManifestIssue>): PluginLoadError => {
  const { faults, moreFaults } = Faults.collect(Arr.map(issues, (i) => ({ field: oneLine(i.field, 120), rule: oneLine(i.rule, 300) })))
  return new PluginLoadError({ reason: "ManifestInvalid", file, issues: faults, moreIssues: moreFaults })
}

interface Remembered {
  readonly size: bigint
  readonly mtime: number
  readonly ino: number | undefined
  readonly root: RootKind
  readonly result: DiscoveredPlugin
}

/** Decoded manifests by path, valid while size, mtime and inode are unchanged. */
const memo = new Map<string, Remembered>()
const memoLimit = 10_000

/**
 * Forgets every remembered manifest (the benchmark measures discovery with and without them).
 * @since 0.1.0
 * @category utils
 */
export const forgetValidations = (): void => memo.clear()

const mtimeOf = (info: FileSystem.File.Info) => Option.match(info.mtime, { onNone: () => -1, onSome: (d) => d.getTime() })

/** The warnings for files the manifest names that are not regular files in the folder. */
const absentFiles = (manifest: Manifest.Manifest, folder: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    Effect.map(
      Effect.forEach(ManifestFolder.optionalFiles(manifest), ({ field, file }) =>
        fs.stat(path.resolve(folder, file)).pipe(
          Effect.map((info) => (info.type === "File" ? [] : [`${field}: ${JSON.stringify(file)} is not a regular file`])),
          Effect.orElseSucceed(() => [`${field}: ${JSON.stringify(file)} does not exist`])
        )),
      (lists) => lists.flat()
    ))

/** Decodes a manifest's text: the Schema, then the folder rules, then the files it names. */
const validate = (text: string, root: PluginRoot, name: string, folder: string, file: string) =>
  Effect.suspend((): Effect.Effect<DiscoveredPlugin, never, FileSystem.FileSystem> => {
    const invalid = (issues: Arr.NonEmptyReadonlyArray<Manifest.ManifestIssue>): DiscoveredPlugin => ({
      _tag: "Invalid",
      name,
      root: root.kind,
      folder,
      error: refusal(file, issues)
    })
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch (error) {
      return Effect.succeed(invalid([{ field: "", rule: notJsonRule(error instanceof Error ? error.message : String(error)) }]))
    }
    const decoded = Manifest.decode(json)
    const issues = [...("issues" in decoded ? decoded.issues : []), ...ManifestFolder.folderCheck(folder)(json)]
    if (Arr.isNonEmptyReadonlyArray(issues)) return Effect.succeed(invalid(issues))
    if ("issues" in decoded) return Effect.die("a refused manifest without an issue")
    return Effect.map(absentFiles(decoded.manifest, folder), (absent): DiscoveredPlugin => ({
      _tag: "Valid",
      name,
      root: root.kind,
      folder,
      manifest: decoded.manifest,
      warnings: [...decoded.warnings, ...absent].map((w) => oneLine(w, 300))
    }))
  })

/**
 * Reads and validates one folder's manifest; `None` when the folder has no manifest.
 * @since 0.1.0
 * @category utils
 */
export const readFolder = (
  root: PluginRoot,
  name: string
): Effect.Effect<Option.Option<DiscoveredPlugin>, never, FileSystem.FileSystem> => {
  const folder = path.join(root.path, name)
  const file = path.join(folder, Manifest.manifestFile)
  const refused = (rule: string): Option.Option<DiscoveredPlugin> =>
    Option.some({ _tag: "Invalid", name, root: root.kind, folder, error: refusal(file, [{ field: "", rule }]) })
  return TextFile.inspect(file, TextFile.kinds.manifest).pipe(
    Effect.flatMap((found) => {
      if (Option.isNone(found)) return Effect.succeed(Option.none())
      const info = found.value
      const mtime = mtimeOf(info)
      const ino = Option.getOrUndefined(info.ino)
      const known = memo.get(file)
      if (known !== undefined && known.root === root.kind && known.size === info.size && known.mtime === mtime && known.ino === ino) {
        return Effect.succeed(Option.some(known.result))
      }
      return TextFile.readChecked(file, TextFile.kinds.manifest, info).pipe(
        Effect.flatMap((text) =>
          Option.isNone(text)
            ? Effect.succeed(Option.none())
            : Effect.map(validate(text.value, root, name, folder, file), (result) => {
              if (memo.size >= memoLimit) memo.clear()
              memo.set(file, { size: info.size, mtime, ino, root: root.kind, result })
              return Option.some(result)
            })
        )
      )
    }),
    Effect.catchAll((error) => Effect.succeed(refused(error.rule)))
  )
}

/**
 * The folder names of a root, in code-unit order; empty when the root does not exist.
 * @since 0.1.0
 * @category utils
 */
export const listRoot = (root: PluginRoot): Effect.Effect<ReadonlyArray<string>, PluginLoadError, FileSystem.FileSystem> =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    fs.readDirectory(root.path).pipe(
      Effect.map((names) => [...names].sort(byCodeUnits)),
      Effect.catchAll((error) =>
        error._tag === "SystemError" && error.reason === "NotFound"
          ? Effect.succeed([])
          : Effect.fail(new PluginLoadError({ reason: "PluginRootUnreadable", root: root.path, detail: oneLine(error.message, 300) }))
      )
    ))

/**
 * Every plugin folder of one root, in code-unit name order (the order does not depend on the
 * file system, nor on which read finishes first).
 * @since 0.1.0
 * @category utils
 */
export const discoverRoot = (
  given: PluginRoot
): Effect.Effect<ReadonlyArray<DiscoveredPlugin>, PluginLoadError, FileSystem.FileSystem> =>
  Effect.suspend(() => {
    const root: PluginRoot = { kind: given.kind, path: path.resolve(given.path) }
    return Effect.flatMap(listRoot(root), (names) =>
      Effect.map(
        Effect.forEach(names, (name) => readFolder(root, name), { concurrency }),
        (found) => found.flatMap((f) => (Option.isSome(f) ? [f.value] : []))
      ))
  })

/**
 * Every plugin folder of every root, roots in the order given (bundled first, then instance),
 * each in code-unit name order. Parses manifests only: never imports or runs plugin code.
 * @since 0.1.0
 * @category utils
 */
export const discover = (
  roots: ReadonlyArray<PluginRoot>
): Effect.Effect<ReadonlyArray<DiscoveredPlugin>, PluginLoadError, FileSystem.FileSystem> =>
  Effect.map(Effect.forEach(roots, discoverRoot), (lists) => lists.flat())
