/**
 * The plugin manifest, `city-plugin.json` (spec/plugin-loader-lifecycle.md, "Lifecycle and
 * layout": "The loader parses and validates the manifest, verifies that the entry remains inside
 * the plugin directory by a lexical path check that does not resolve symlinks").
 *
 * The Schema is the single source of the type, of the validation and of the published JSON
 * Schema (`city-plugin.schema.json` at the package root, made with `JSONSchema.make`). Each rule
 * carries its own message; {@link issuesOf} turns a parse error into one `{ field, rule }` per
 * violation, so a manifest with three mistakes gets three readable reasons. Discovery first tries
 * `ManifestGuard.isManifest`, a faster check that accepts exactly what this Schema accepts (a
 * property test holds them together); a refusal and its reasons always come from here.
 *
 * Decisions where the spec is silent:
 * - unknown extra keys are allowed (real manifests carry UI metadata: icons, titles, i18n);
 * - `apiVersion` is an integer; the supported values are {@link supportedApiVersions};
 * - `version` is a non-empty string without white space (it is part of the import URL), not
 *   required to be semver;
 * - `entry` must be relative here; that it stays inside the folder is checked against the real
 *   folder by {@link entryInside} (`path.resolve` + prefix check, symlinks not resolved);
 * - `skills` is the plugin's initial skill set, used when the entry contributes none;
 * - `provides` lists names the plugin offers its siblings; it is shown by discovery, not enforced.
 * @since 0.1.0
 */
import * as JSONSchema from "effect/JSONSchema"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as path from "node:path"
import { Skill } from "./PluginChange.ts"
import { PluginName } from "./PluginName.ts"

/**
 * The manifest's file name inside a plugin folder.
 * @since 0.1.0
 * @category constants
 */
export const manifestFile = "city-plugin.json"

/**
 * The plugin API versions this library loads. A manifest naming another is skipped.
 * @since 0.1.0
 * @category constants
 */
export const supportedApiVersions: ReadonlyArray<number> = [1]

const nonEmpty = (what: string) =>
  Schema.String.pipe(Schema.filter((s) => s.trim().length > 0 || `must be a non-empty ${what}`))

/**
 * `version`: a non-empty string without white space.
 * @since 0.1.0
 * @category schemas
 */
export const ManifestVersion = Schema.String.pipe(
  Schema.filter((s) => s.length > 0 || "must be a non-empty string"),
  Schema.filter((s) => !/\s/.test(s) || "must not contain white space")
).annotations({
  description: "The plugin's version; part of the import URL, so a new version loads a fresh module.",
  jsonSchema: { pattern: "^\\S+$" }
})

/**
 * `apiVersion`: one of {@link supportedApiVersions}.
 * @since 0.1.0
 * @category schemas
 */
export const ApiVersion = Schema.Number.pipe(
  Schema.filter((n) =>
    supportedApiVersions.includes(n) || `must be a supported API version (${supportedApiVersions.join(", ")}), got ${n}`
  )
).annotations({
  description: "The plugin API version the entry is written against.",
  jsonSchema: { enum: supportedApiVersions }
})

const isAbsoluteAnywhere = (s: string) => path.posix.isAbsolute(s) || path.win32.isAbsolute(s)

/**
 * `entry`: a relative path to the ESM entry inside the plugin folder.
 * @since 0.1.0
 * @category schemas
 */
export const EntryPath = Schema.String.pipe(
  Schema.filter((s) => s.length > 0 || "must be a non-empty relative path"),
  Schema.filter((s) => !s.includes("\u0000") || "must not contain a NUL character"),
  Schema.filter((s) => !isAbsoluteAnywhere(s) || `must be relative to the plugin folder, got the absolute path ${JSON.stringify(s)}`)
).annotations({
  description: "The ESM entry, relative to the plugin folder and inside it (e.g. \"index.mjs\").",
  jsonSchema: { minLength: 1, not: { pattern: "^(/|[A-Za-z]:[\\\\/]|\\\\)" } }
})

/**
 * The manifest as stored. Extra keys are allowed and kept.
 * @since 0.1.0
 * @category schemas
 */
export const Manifest = Schema.Struct(
  {
    name: PluginName.annotations({
      description: "The plugin's name; must equal its folder's name.",
      jsonSchema: { pattern: "^[A-Za-z0-9][A-Za-z0-9._-]*$", minLength: 1, maxLength: 64 }
    }),
    version: ManifestVersion,
    apiVersion: ApiVersion,
    description: nonEmpty("string").annotations({
      description: "One line saying what the plugin does.",
      jsonSchema: { minLength: 1 }
    }),
    entry: EntryPath,
    skills: Schema.optionalWith(Schema.Array(Skill).annotations({ description: "The plugin's initial skill set." }), {
      exact: true
    }),
    provides: Schema.optionalWith(
      Schema.Array(nonEmpty("name")).annotations({ description: "Names the plugin offers to its siblings." }),
      { exact: true }
    )
  },
  { key: Schema.String, value: Schema.Unknown }
).annotations({ identifier: "CityPluginManifest", title: "city-plugin.json" })

/**
 * A validated `city-plugin.json`; extra keys are kept.
 * @since 0.1.0
 * @category models
 */
export type Manifest = typeof Manifest.Type

/**
 * One violation: the field (dotted path, empty for the whole document) and the rule it broke.
 * @since 0.1.0
 * @category models
 */
export interface ManifestIssue {
  /** The field, as a dotted path; empty for the whole document. */
  readonly field: string
  /** The rule it broke, as the rule's message. */
  readonly rule: string
}

const joinPath = (at: ReadonlyArray<PropertyKey>): string =>
  at.reduce<string>(
    (acc, key) => (typeof key === "number" ? `${acc}[${key}]` : acc === "" ? String(key) : `${acc}.${String(key)}`),
    ""
  )

/**
 * Every violation of a parse error, one per field and rule.
 * @since 0.1.0
 * @category parsing
 */
export const issuesOf = (error: ParseResult.ParseError): ReadonlyArray<ManifestIssue> =>
  ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
    field: joinPath(issue.path),
    rule: issue._tag === "Missing" ? "is required" : issue.message
  }))

/**
 * Validates parsed JSON as a manifest, reporting every violation.
 * @since 0.1.0
 * @category parsing
 */
export const decode = (json: unknown): { readonly manifest: Manifest } | { readonly issues: ReadonlyArray<ManifestIssue> } => {
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    const kind = json === null ? "null" : Array.isArray(json) ? "an array" : typeof json
    return { issues: [{ field: "", rule: `must be a JSON object, got ${kind}` }] }
  }
  const result = decodeManifest(json)
  return result._tag === "Right" ? { manifest: result.right } : { issues: issuesOf(result.left) }
}

const decodeManifest = Schema.decodeUnknownEither(Manifest, { errors: "all", onExcessProperty: "preserve" })

/**
 * The rules that need the folder: `name` equals the folder's name, and `entry` resolves inside
 * the folder (`path.resolve` + prefix check, lexical: symlinks are not resolved, as the spec says).
 * @since 0.1.0
 * @category parsing
 */
export const folderIssues = (manifest: Manifest, folder: string): ReadonlyArray<ManifestIssue> => {
  const issues: Array<ManifestIssue> = []
  const folderName = path.basename(folder)
  if (manifest.name !== folderName) {
    issues.push({ field: "name", rule: `must equal the folder name ${JSON.stringify(folderName)}, got ${JSON.stringify(manifest.name)}` })
  }
  if (!entryInside(folder, manifest.entry)) {
    issues.push({ field: "entry", rule: `must stay inside the plugin folder, got ${JSON.stringify(manifest.entry)}` })
  }
  return issues
}

/**
 * Whether `entry` resolves lexically inside `folder`: `path.resolve(folder, entry)` starts with
 * the folder followed by a separator. A symlink inside the folder pointing elsewhere passes: the
 * check is lexical, as the spec says.
 * @since 0.1.0
 * @category parsing
 */
export const entryInside = (folder: string, entry: string): boolean => {
  const base = path.resolve(folder)
  return path.resolve(base, entry).startsWith(base + path.sep)
}

/**
 * Whether `entry` is plainly inside any folder, without resolving anything: `/`-separated
 * segments of letters, digits, `_`, `.` and `-`, none of them `.` or `..` (so `index.mjs`,
 * `dist/index.js`). For such an entry `path.resolve(folder, entry)` is the folder, a separator
 * and the entry, so {@link entryInside} holds for every folder but the file system's root.
 * Discovery uses it to spare `path.resolve` on the usual entries; for any other entry, and for
 * the reasons, {@link entryInside} decides.
 * @since 0.1.0
 * @category parsing
 */
export const isPlainRelative = (entry: string): boolean => plainRelative.test(entry)

const plainRelative = /^(?!\.\.?(?:\/|$))[\w.-]+(?:\/(?!\.\.?(?:\/|$))[\w.-]+)*$/

/**
 * The manifest's JSON Schema, as published in `city-plugin.schema.json`.
 * @since 0.1.0
 * @category schemas
 */
export const jsonSchema = (): JSONSchema.JsonSchema7Root => JSONSchema.make(Manifest)
