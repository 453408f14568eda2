/**
 * Reads `$CITY_ROOT/plugins.json` (see schema/LoaderSettings.ts) through the one file reader and
 * turns it, with the roots, into the LoaderOptions that `city daemon` and the `city plugins`
 * verbs load with.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Faults from "../../schema/Faults.ts"
import { InvalidFile } from "../../schema/FileErrors.ts"
import { LoaderSettings, settingsKeys } from "../../schema/LoaderSettings.ts"
import { documentIssues, notJsonRule, unknownFieldRule } from "../../schema/ParseIssue.ts"
import * as TextFile from "../files/TextFile.ts"
import * as CityRoot from "../root/CityRoot.ts"
import type { PluginRoot } from "./Discovery.ts"
import type { LoaderOptions } from "./PluginLoader.ts"

/**
 * The edit distance of two short strings (for "did you mean"). The CLI's own suggestions use
 * `@effect/cli`'s `AutoCorrect`, which the library does not depend on: this module is library code.
 */
const distance = (a: string, b: string): number => {
  let row = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const next = [i]
    for (let j = 1; j <= b.length; j++) {
      next.push(Math.min((row[j] ?? 0) + 1, (next[j - 1] ?? 0) + 1, (row[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1)))
    }
    row = next
  }
  return row[b.length] ?? 0
}

/**
 * The rule for a key `plugins.json` does not know, with the known key it most resembles.
 * @since 0.1.0
 * @category utils
 */
export const unknownKeyRule = (key: string): string => {
  const ranked = settingsKeys.map((k) => ({ k, d: distance(key.toLowerCase(), k.toLowerCase()) })).sort((a, b) => a.d - b.d)
  const best = ranked[0]
  const hint = best !== undefined && best.d <= Math.max(2, Math.floor(best.k.length / 3)) ? `did you mean ${JSON.stringify(best.k)}? ` : ""
  return `is not a known key (${hint}the keys are ${settingsKeys.join(", ")})`
}

const decodeSettings = Schema.decodeUnknownEither(LoaderSettings, { errors: "all", onExcessProperty: "error" })

/**
 * The settings on `root`; all defaults (an empty licence set) when the file does not exist.
 * @since 0.1.0
 * @category utils
 */
export const read = (root: string): Effect.Effect<
  LoaderSettings & { readonly exists: boolean },
  InvalidFile,
  FileSystem.FileSystem
> =>
  Effect.gen(function*() {
    const file = CityRoot.settingsFile(root)
    const text = yield* TextFile.read(file, TextFile.kinds.settings).pipe(
      Effect.mapError((refused) => new InvalidFile({ reason: "LoaderSettings", file, ...Faults.one("", refused.rule) }))
    )
    if (Option.isNone(text)) return { exists: false }
    const json = yield* Effect.try({
      try: (): unknown => JSON.parse(text.value),
      catch: (error) =>
        new InvalidFile({
          reason: "LoaderSettings",
          file,
          ...Faults.one("", notJsonRule(error instanceof Error ? error.message : String(error)))
        })
    })
    const decoded = decodeSettings(json)
    if (decoded._tag === "Right") return { ...decoded.right, exists: true }
    return yield* Effect.fail(new InvalidFile({ reason: "LoaderSettings", file, ...Faults.collect(settingsFaults(decoded.left)) }))
  })

/**
 * Every fault of the settings at once (docs/cli.md, "Declaration rules", says why a file reports
 * them all): a key the file may not hold names the known key it most resembles.
 */
const settingsFaults = (error: ParseResult.ParseError) =>
  Arr.map(documentIssues(error), (issue) =>
    issue.rule === unknownFieldRule && !settingsKeys.some((key) =>
      issue.field === key || issue.field.startsWith(`${key}.`) || issue.field.startsWith(`${key}[`)
    )
      ? { field: issue.field, rule: unknownKeyRule(issue.field) }
      : issue
  )

/**
 * The LoaderOptions for a state root: the settings, `bundled` overriding `bundledRoot`, every
 * folder found enabled (`"all"`) when `enabled` is absent, and the licence set as written (none without
 * `licensed`: the gate is closed by default).
 * @since 0.1.0
 * @category utils
 */
export const options = (
  root: string,
  bundled: string | undefined
): Effect.Effect<
  LoaderOptions & { readonly roots: ReadonlyArray<PluginRoot>; readonly settingsFile: string; readonly settingsExist: boolean },
  InvalidFile,
  FileSystem.FileSystem
> =>
  Effect.gen(function*() {
    const settings = yield* read(root)
    const bundledRoot = bundled ?? settings.bundledRoot
    const instanceRoot = CityRoot.instanceRoot(root)
    return {
      roots: CityRoot.pluginRoots(bundledRoot, instanceRoot),
      bundledRoot,
      instanceRoot,
      enabled: settings.enabled ?? "all",
      licensed: settings.licensed ?? [],
      config: settings.config ?? {},
      isolation: settings.isolation,
      workerLimits: settings.workerLimits?.heapMb === undefined ? {} : { heapMb: settings.workerLimits.heapMb },
      settingsFile: CityRoot.settingsFile(root),
      settingsExist: settings.exists
    }
  })
