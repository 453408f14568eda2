/**
 * The entry of a plugin folder: checked on disk, its prompt files read, imported with a URL that
 * defeats Node's module cache across in-place updates, and recognized as a Plugin or a
 * `register(ctx)` function (docs/plugin-loader-lifecycle.md: "Each import URL carries the
 * manifest version and the entry file's modification time ... Node caches a module by URL for
 * the life of the process, so a later load must not reuse a stale module after an in-place
 * update").
 *
 * Decisions where the spec is silent:
 * - the entry must be a file (a directory is a skip); the containment check stays lexical, so an
 *   entry that is a symlink, or sits under a symlinked folder, is followed wherever it points:
 *   the folder's owner decides what its entry is (a development checkout linked into a root),
 *   exactly as the spec's lexical check allows;
 * - the mtime in the URL is the entry file's own (following a symlink), in milliseconds;
 * - a Plugin export must carry the manifest's name; its version is the manifest's;
 * - `prompt/*.md` files are read in code-unit name order through the file reader, each at most
 *   {@link promptFileCap} bytes; a larger, non-regular or non-UTF-8 one is a skip (never silently
 *   truncated). Other files (icon, i18n, web
 *   assets) are allowed and ignored.
 *
 * Its room, services/entry/, holds what importing a plugin folder's entry takes (this module,
 * Staging.ts, HostModules.ts, ModuleImporter.ts, internal/resolveHook.ts), below both users: the
 * loader's in-thread load and an isolated plugin's worker
 * (services/isolation/internal/pluginWorker.ts; docs/plugin-loader.md, "Isolation") import it,
 * and the loader imports isolation, so neither reaches the other through it.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { PluginLoadError } from "../../schema/LoaderErrors.ts"
import { isPlugin, type Plugin } from "../Plugin.ts"
import type { Siblings } from "../Siblings.ts"
import * as TextFile from "../files/TextFile.ts"
import { ModuleImporter } from "./ModuleImporter.ts"
import type { RegisterFunction } from "./Staging.ts"

/**
 * The largest prompt file read into system content, in bytes (the file reader's cap for a prompt
 * file, services/files/TextFile.ts).
 * @since 0.1.0
 * @category constants
 */
export const promptFileCap = TextFile.kinds.prompt.maxBytes

/**
 * The entry file, checked to exist and be a file; its mtime in ms.
 * @since 0.1.0
 * @category utils
 */
export const statEntry = (file: string): Effect.Effect<number, PluginLoadError, FileSystem.FileSystem> =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    fs.stat(file).pipe(
      Effect.mapError(() => new PluginLoadError({ reason: "EntryNotFound", file, found: "nothing" })),
      Effect.flatMap((info) =>
        info.type === "File"
          ? Effect.succeed(Option.match(info.mtime, { onNone: () => 0, onSome: (d) => d.getTime() }))
          : Effect.fail(new PluginLoadError({ reason: "EntryNotFound", file, found: info.type === "Directory" ? "directory" : "other" }))
      )
    ))

/**
 * The text of the folder's `prompt/*.md` files, in code-unit name order, trimmed and joined by a
 * blank line; `undefined` when there are none. Each is read through the file reader (regular
 * files only, at most {@link promptFileCap} bytes, UTF-8): a refused one is a skip.
 * @since 0.1.0
 * @category utils
 */
export const readPrompts = (folder: string): Effect.Effect<string | undefined, PluginLoadError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const dir = path.join(folder, "prompt")
    const listed = yield* Effect.option(fs.readDirectory(dir))
    if (Option.isNone(listed)) return undefined
    const names = listed.value.filter((n) => n.endsWith(".md")).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    const texts: Array<string> = []
    for (const name of names) {
      const file = path.join(dir, name)
      const text = yield* TextFile.read(file, TextFile.kinds.prompt).pipe(
        Effect.mapError((refused) => new PluginLoadError({ reason: "PromptRejected", file, rule: refused.rule }))
      )
      const trimmed = Option.getOrElse(text, () => "").trim()
      if (trimmed.length > 0) texts.push(trimmed)
    }
    return texts.length === 0 ? undefined : texts.join("\n\n")
  })

/**
 * The import URL: the entry's file URL with the manifest version and the mtime as its query.
 * @since 0.1.0
 * @category utils
 */
export const importUrl = (file: string, version: string, mtimeMs: number): string => {
  const url = pathToFileURL(file)
  url.search = `?v=${encodeURIComponent(version)}&mtime=${Math.trunc(mtimeMs)}`
  return url.href
}

/**
 * Imports the entry through the `ModuleImporter` (its top-level code runs now); a throw or a
 * missing import is EntryImportFailed.
 * @since 0.1.0
 * @category utils
 */
export const importEntry = (file: string, url: string): Effect.Effect<unknown, PluginLoadError> =>
  Effect.flatMap(ModuleImporter, (importer) =>
    Effect.tryPromise({ try: () => importer.import(url), catch: (error) => new PluginLoadError({ reason: "EntryImportFailed", file, error }) }))

/**
 * What an entry exports: a Plugin (default export, else a named `plugin` export) or a `register`
 * function.
 * @since 0.1.0
 * @category models
 */
export type EntryShape =
  | { readonly _tag: "Plugin"; readonly plugin: Plugin<unknown, Siblings> }
  | { readonly _tag: "Register"; readonly register: RegisterFunction }

/**
 * An entry's Plugin may require only what the registry and the loader provide (its Scope, its
 * lifecycle context, Siblings); anything else is a defect at initialize, which skips it.
 */
const isLoadablePlugin = (u: unknown): u is Plugin<unknown, Siblings> => isPlugin(u)

const isRegister = (u: unknown): u is RegisterFunction => typeof u === "function"

const field = (module: unknown, key: string): unknown =>
  typeof module === "object" && module !== null && key in module ? Reflect.get(module, key) : undefined

/**
 * Recognizes the entry's export.
 * @since 0.1.0
 * @category utils
 */
export const shapeOf = (module: unknown, name: string, file: string): Effect.Effect<EntryShape, PluginLoadError> => {
  const byDefault = field(module, "default")
  const named = field(module, "plugin")
  const plugin = isLoadablePlugin(byDefault) ? byDefault : isLoadablePlugin(named) ? named : undefined
  if (plugin !== undefined) {
    if (plugin.name !== name) {
      return Effect.fail(
        new PluginLoadError({ reason: "EntryShapeInvalid",
          file,
          rule: `exports a Plugin named ${JSON.stringify(plugin.name)}; the manifest names ${JSON.stringify(name)}`
        })
      )
    }
    return Effect.succeed({ _tag: "Plugin", plugin })
  }
  const register = field(module, "register")
  if (isRegister(register)) return Effect.succeed({ _tag: "Register", register })
  const keys = typeof module === "object" && module !== null ? Object.keys(module) : []
  return Effect.fail(
    new PluginLoadError({ reason: "EntryShapeInvalid",
      file,
      rule: "exports neither a Plugin (default or `plugin` export, made with Plugin.make) nor a `register(ctx)` function" +
        `; found ${keys.length === 0 ? "no exports" : `exports ${keys.sort().join(", ")}`}`
    })
  )
}
