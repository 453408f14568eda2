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
 * - Repeating discovery is cheap: each decided manifest is remembered by its path and the
 *   SHA-256 of its text, so an unchanged manifest is not decoded again; and one whose size,
 *   modification time and inode are those seen when it was read is not even read, unless its
 *   time was within `racyWindow` of that read. The kernel stamps a file's time from a coarse
 *   clock (a few ms; whole seconds on some file systems), so an edit of the same size in the tick
 *   of a read keeps the time the read saw: such a "racy" entry (git's word and rule for its
 *   index) is read and its text compared at every discovery. The files the manifest names are
 *   looked at every time.
 * - Nothing is imported, nothing is run, nothing is written. The reads are asynchronous, a few
 *   folders at a time, so discovery never blocks the event loop of the daemon that runs it.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { createHash } from "node:crypto"
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

/** What a manifest's text decides, whatever its folder holds: refused, or its manifest and warnings. */
type Decided =
  | { readonly _tag: "Invalid"; readonly error: PluginLoadError }
  | { readonly _tag: "Decoded"; readonly manifest: Manifest.Manifest; readonly warnings: ReadonlyArray<string> }

interface Remembered {
  readonly digest: string
  readonly decided: Decided
  /** The file as it was read: size, modification time (ms), inode, and when the read began (ms). */
  readonly size: bigint
  readonly mtime: number
  readonly ino: number | undefined
  readonly readAt: number
}

/**
 * How long after its modification time a file's read is still racy: an edit within it may keep
 * the time the read saw. Two seconds covers a file system that stamps whole seconds (or two).
 */
const racyWindow = 2_000

const mtimeOf = (info: FileSystem.File.Info) => Option.match(info.mtime, { onNone: () => Number.NaN, onSome: (d) => d.getTime() })

/** Whether `info` is the file `known` read, and that read began well after the file's last change. */
const unchanged = (known: Remembered, info: FileSystem.File.Info) =>
  known.size === info.size && known.mtime === mtimeOf(info) && known.ino === Option.getOrUndefined(info.ino) &&
  known.mtime + racyWindow < known.readAt

/** Decided manifests by path and root, valid while their text is the same. */
const memo = new Map<string, Remembered>()
const memoLimit = 10_000

/**
 * Forgets every remembered manifest (the benchmark measures discovery with and without them).
 * @since 0.1.0
 * @category utils
 */
export const forgetValidations = (): void => memo.clear()

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

/** What a manifest's text decides: the Schema, then the folder rules. */
const decide = (text: string, folder: string, file: string): Decided => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    return { _tag: "Invalid", error: refusal(file, [{ field: "", rule: notJsonRule(error instanceof Error ? error.message : String(error)) }]) }
  }
  const decoded = Manifest.decode(json)
  const issues = [...("issues" in decoded ? decoded.issues : []), ...ManifestFolder.folderCheck(folder)(json)]
  if (Arr.isNonEmptyReadonlyArray(issues)) return { _tag: "Invalid", error: refusal(file, issues) }
  if ("issues" in decoded) throw new Error("a refused manifest without an issue")
  return { _tag: "Decoded", manifest: decoded.manifest, warnings: decoded.warnings }
}

/** The folder as discovered: what its manifest decided, and the files it names that are absent. */
const discovered = (decided: Decided, root: PluginRoot, name: string, folder: string) =>
  decided._tag === "Invalid"
    ? Effect.succeed<DiscoveredPlugin>({ _tag: "Invalid", name, root: root.kind, folder, error: decided.error })
    : Effect.map(absentFiles(decided.manifest, folder), (absent): DiscoveredPlugin => ({
      _tag: "Valid",
      name,
      root: root.kind,
      folder,
      manifest: decided.manifest,
      warnings: [...decided.warnings, ...absent].map((w) => oneLine(w, 300))
    }))

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
  const key = `${root.kind}:${file}`
  return TextFile.inspect(file, TextFile.kinds.manifest).pipe(
    Effect.flatMap((found) => {
      if (Option.isNone(found)) return Effect.succeed(Option.none())
      const info = found.value
      const known = memo.get(key)
      if (known !== undefined && unchanged(known, info)) return Effect.map(discovered(known.decided, root, name, folder), Option.some)
      const readAt = Date.now()
      return Effect.flatMap(TextFile.readChecked(file, TextFile.kinds.manifest, info), (text) => {
        if (Option.isNone(text)) return Effect.succeed(Option.none())
        const digest = createHash("sha256").update(text.value).digest("base64")
        const decided = known !== undefined && known.digest === digest ? known.decided : decide(text.value, folder, file)
        if (memo.size >= memoLimit) memo.clear()
        memo.set(key, { digest, decided, size: info.size, mtime: mtimeOf(info), ino: Option.getOrUndefined(info.ino), readAt })
        return Effect.map(discovered(decided, root, name, folder), Option.some)
      })
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
