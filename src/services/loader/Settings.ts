/**
 * Reads `$CITY_ROOT/plugins.json` (see schema/LoaderSettings.ts) and turns it, with the roots'
 * discovery, into the LoaderOptions the `city plugins` verbs load with.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as path from "node:path"
import { InvalidLoaderSettings, LoaderSettings } from "../../schema/LoaderSettings.ts"
import { firstIssue } from "../../schema/ParseIssue.ts"
import type { PluginRootUnreadable } from "../../schema/LoaderErrors.ts"
import { discover, type PluginRoot } from "./Discovery.ts"
import type { LoaderOptions } from "./PluginLoader.ts"

/**
 * The settings file of a state root.
 * @since 0.1.0
 * @category settings
 */
export const settingsFile = (root: string) => path.join(root, "plugins.json")

/**
 * The settings on `root`; all defaults when the file does not exist.
 * @since 0.1.0
 * @category settings
 */
export const read = (root: string): Effect.Effect<LoaderSettings, InvalidLoaderSettings, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const file = settingsFile(root)
    const text = yield* fs.readFileString(file).pipe(
      Effect.map((t): string | undefined => t),
      Effect.catchAll((error) =>
        error._tag === "SystemError" && error.reason === "NotFound"
          ? Effect.succeed(undefined)
          : Effect.fail(new InvalidLoaderSettings({ file, field: "", rule: `cannot be read: ${error.message}` }))
      )
    )
    if (text === undefined) return {}
    const json = yield* Effect.try({
      try: (): unknown => JSON.parse(text),
      catch: (error) => new InvalidLoaderSettings({ file, field: "", rule: `is not valid JSON: ${String(error)}` })
    })
    return yield* Schema.decodeUnknown(LoaderSettings)(json).pipe(
      Effect.mapError((error) => new InvalidLoaderSettings({ file, ...firstIssue(error) }))
    )
  })

/**
 * The LoaderOptions for a state root: the settings, `bundled` overriding `bundledRoot`, and the
 * defaults (every folder found is enabled, every instance plugin licensed) where they are silent.
 * @since 0.1.0
 * @category settings
 */
export const options = (
  root: string,
  bundled: string | undefined
): Effect.Effect<LoaderOptions & { readonly roots: ReadonlyArray<PluginRoot> }, InvalidLoaderSettings | PluginRootUnreadable, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const settings = yield* read(root)
    const bundledRoot = bundled ?? settings.bundledRoot
    const roots: ReadonlyArray<PluginRoot> = [
      ...(bundledRoot === undefined ? [] : [{ kind: "bundled" as const, path: path.resolve(bundledRoot) }]),
      { kind: "instance", path: path.resolve(root, "plugins") }
    ]
    const found = settings.enabled === undefined || settings.licensed === undefined ? yield* discover(roots) : []
    return {
      roots,
      bundledRoot,
      instanceRoot: path.resolve(root, "plugins"),
      enabled: settings.enabled ?? found.map((d) => d.name),
      licensed: settings.licensed ?? found.filter((d) => d.root === "instance").map((d) => d.name)
    }
  })
