/**
 * The plugin manifest, `city-plugin.json` (docs/plugin-loader-lifecycle.md, "Lifecycle and
 * layout": "The loader parses and validates the manifest, verifies that the entry remains inside
 * the plugin directory by a lexical path check that does not resolve symlinks").
 *
 * The format is the reference loader's (the project the spec was written from), with our file
 * name: a plugin folder written for it loads here once its manifest is renamed. The Schema is the
 * single source of the type, of the validation and of the published JSON Schema
 * (`city-plugin.schema.json`, made with `JSONSchema.make`); {@link decode} gives one
 * `{ field, rule }` per violation. What each key means and the decisions where the reference is
 * silent or does not apply are in docs/plugin-loader.md ("The manifest"); in short:
 * - required: `name` (our plugin-name rule, equal to the folder's name), `version` (non-empty),
 *   `apiVersion` (the string `"1"`; the number `1` is refused, as the reference refuses it),
 *   `description` (may be empty), `entry` (relative, lexically inside the folder);
 * - `provides` is an object of name lists (`tools`, `skills`, `platforms`, `destinations`,
 *   `httpRoutes`, `apiRoutes`, `wsRoutes`, `mcpTools`, `controls`, and our `hooks`), enforced
 *   by the loader (see Provides.ts);
 * - `configSchema`/`userConfigSchema` are arrays of fields (ConfigField.ts): a field of the wrong
 *   shape (a missing or empty `key` or `label`, an optional key of the wrong type) refuses the
 *   manifest; a field of an unknown type is dropped with a warning; a field that breaks a rule
 *   between its keys (a `default` off its `step`, a slider without bounds, an unknown time zone,
 *   ...) loads with a warning naming the field and the rule, since the reference does not check
 *   them;
 * - `requiresCore` is a dotted version; `capabilities`, `icons`, `icon`, `web`, `planSafe`,
 *   `showOutput`, `deferLoading`, `workspaceSafe`, `userGrantable`, `requiresControls`,
 *   `requiresSharedApi`, `userConfigLabel` keep the reference's types;
 * - every other key is accepted and kept (real manifests carry some, such as `requires`);
 * - `skills` (an array of skill objects) is our extension: the plugin's initial skill set;
 * - `isolation` (`"worker"`, `"process"` or `"none"`) is our extension: where the plugin asks to run
 *   (docs/plugin-loader.md, "Isolation"); `plugins.json` overrides it;
 * - `dependsOn` (plugin names, or `{ "name", "optional": true }`) is our extension too, named so
 *   that it never meets the reference's `requires`: the plugins this one needs (docs/library.md,
 *   "Plugin dependencies"; docs/plugin-loader.md).
 * @since 0.1.0
 */
import * as JSONSchema from "effect/JSONSchema"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as path from "node:path"
import { choice, ConfigSchema, dropUnknownTypes, fieldWarnings, UserConfigSchema } from "./ConfigField.ts"
import { IsolationMode } from "./Isolation.ts"
import { Skill } from "./PluginChange.ts"
import { PluginName } from "./PluginName.ts"
import { printable } from "./Printable.ts"

/**
 * The manifest's file name inside a plugin folder.
 * @since 0.1.0
 * @category constants
 */
export const manifestFile = "city-plugin.json"

/**
 * The plugin API versions this library loads, as the manifest writes them (strings). A manifest
 * naming another is skipped before its entry is imported.
 * @since 0.1.0
 * @category constants
 */
export const supportedApiVersions: ReadonlyArray<string> = ["1"]

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })
const nonEmpty = Schema.String.pipe(Schema.minLength(1, { message: () => "must be a non-empty string" }))
/** A printed text: non-empty, without the characters src/schema/Printable.ts refuses. */
const label = nonEmpty.pipe(printable)
const Strings = Schema.Array(Schema.String)
const supported = supportedApiVersions.map((v) => JSON.stringify(v)).join(", ")

/**
 * `version`: a non-empty string (it is part of the import URL, encoded).
 * @since 0.1.0
 * @category schemas
 */
export const ManifestVersion = label.annotations({
  description: "The plugin's version; part of the import URL, so a new version loads a fresh module."
})

/**
 * `apiVersion`: one of {@link supportedApiVersions}, as a string.
 * @since 0.1.0
 * @category schemas
 */
export const ApiVersion = Schema.String.annotations({
  message: (issue) => ({
    message: `must be a string naming a supported plugin API version (${supported}), got ${
      typeof issue.actual === "number" ? `the number ${issue.actual}: write "${issue.actual}"` : describeValue(issue.actual)
    }`,
    override: true
  })
}).pipe(
  Schema.filter((s) =>
    supportedApiVersions.includes(s) || `unsupported plugin API version ${JSON.stringify(s)}: this loader supports ${supported}`, {
    jsonSchema: { enum: supportedApiVersions }
  })
).annotations({ description: "The plugin API version the entry is written against." })

const describeValue = (u: unknown): string =>
  u === null ? "null" : Array.isArray(u) ? "an array" : typeof u === "object" ? "an object" : `${typeof u} ${String(u)}`

const isAbsoluteAnywhere = (s: string) => path.posix.isAbsolute(s) || path.win32.isAbsolute(s)

/**
 * A path relative to the plugin folder (`entry`, `web.entry`, `web.css`).
 * @since 0.1.0
 * @category schemas
 */
export const RelativePath = Schema.String.pipe(
  Schema.filter((s) => s.length > 0 || "must be a non-empty relative path"),
  Schema.filter((s) => !s.includes("\u0000") || "must not contain a NUL character"),
  Schema.filter((s) => !isAbsoluteAnywhere(s) || `must be relative to the plugin folder, got the absolute path ${JSON.stringify(s)}`, {
    jsonSchema: { minLength: 1, not: { pattern: "^(/|[A-Za-z]:[\\\\/]|\\\\)" } }
  })
)

/**
 * `entry`: the ESM entry, relative to the plugin folder and inside it.
 * @since 0.1.0
 * @category schemas
 */
export const EntryPath = RelativePath.annotations({
  description: "The ESM entry, relative to the plugin folder and inside it (e.g. \"index.mjs\", \"dist/index.js\")."
})

/**
 * `provides`: the names a plugin declares per kind; an entry may be a `prefix*` pattern.
 * @since 0.1.0
 * @category schemas
 */
export const Provides = Schema.Struct(
  {
    tools: optional(Strings),
    skills: optional(Strings),
    platforms: optional(Strings),
    destinations: optional(Strings),
    httpRoutes: optional(Strings),
    apiRoutes: optional(Strings),
    wsRoutes: optional(Strings),
    mcpTools: optional(Strings),
    controls: optional(Strings),
    hooks: optional(Strings)
  },
  { key: Schema.String, value: Schema.Unknown }
).annotations({
  identifier: "Provides",
  message: (issue) => ({
    message: `must be an object of name lists (such as { "tools": [...], "skills": [...] }), got ${describeValue(issue.actual)}`,
    override: false
  }),
  description: "What the plugin may contribute, per kind; a present list is enforced (a contribution it does not cover is dropped with a warning). Entries are exact names or prefix* patterns."
})

/** The values `capabilities.mutates` may hold. */
const mutationTargets = ["prompt", "turnContext", "tools", "memory", "events", "workflow-dag", "users"] as const

const Panel = Schema.Struct({ id: nonEmpty, label, icon: optional(Schema.String) }, { key: Schema.String, value: Schema.Unknown })

const Web = Schema.Struct(
  {
    entry: RelativePath,
    css: optional(RelativePath),
    requiresApiVersion: optional(Schema.Int),
    adminOnly: optional(Schema.Boolean),
    label: optional(label),
    navKind: optional(choice("domain", "infrastructure")),
    nav: optional(Schema.Array(Schema.Struct({ label, icon: optional(Schema.String), route: optional(Schema.String) }))),
    account: optional(Schema.Array(Panel)),
    user: optional(Schema.Array(Panel)),
    project: optional(Schema.Array(Panel)),
    settings: optional(Schema.Array(Panel)),
    strings: optional(Schema.Record({ key: Schema.String, value: Schema.String }))
  },
  { key: Schema.String, value: Schema.Unknown }
).annotations({ identifier: "Web", description: "The plugin's browser bundle; files that are absent are warned about, never a skip." })

/**
 * The manifest as stored. Extra keys are allowed and kept.
 * @since 0.1.0
 * @category schemas
 */
export const Manifest = Schema.Struct(
  {
    name: PluginName.annotations({ description: "The plugin's name; must equal its folder's name." }),
    version: ManifestVersion,
    apiVersion: ApiVersion,
    description: Schema.String.pipe(printable).annotations({ description: "What the plugin does; may be empty." }),
    entry: EntryPath,
    requiresCore: optional(
      Schema.String.pipe(Schema.pattern(/^\d+(\.\d+)*$/, { message: () => "must be a dotted version such as \"0.29.0\"" }))
    ),
    requiresControls: optional(Schema.Array(nonEmpty)),
    requiresSharedApi: optional(Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))),
    provides: optional(Provides),
    icons: optional(Schema.Record({ key: Schema.String, value: Schema.String })),
    icon: optional(Schema.String),
    showOutput: optional(Strings),
    planSafe: optional(Strings),
    deferLoading: optional(Strings),
    workspaceSafe: optional(Schema.Boolean),
    userGrantable: optional(Schema.Boolean),
    configSchema: optional(ConfigSchema),
    userConfigSchema: optional(UserConfigSchema),
    userConfigLabel: optional(label),
    capabilities: optional(Schema.Struct(
      {
        mutates: optional(Schema.Array(choice(...mutationTargets))),
        reads: optional(Strings),
        network: optional(Schema.Boolean)
      },
      { key: Schema.String, value: Schema.Unknown }
    )),
    web: optional(Web),
    skills: optional(Schema.Array(Skill).annotations({ description: "The plugin's initial skill set (an effect-city extension)." })),
    isolation: optional(IsolationMode.annotations({
      description: "Where the plugin asks to run (an effect-city extension): \"worker\", a worker thread of its own, \"process\", a child process of its own, or \"none\", the host's thread; plugins.json's isolation overrides it."
    })),
    dependsOn: optional(
      Schema.Array(Schema.Union(PluginName, Schema.Struct({ name: PluginName, optional: optional(Schema.Boolean) }))).annotations({
        description:
          "The plugins this one needs, loaded before it and disposed after it: a name, or { \"name\", \"optional\": true } for one it starts without (an effect-city extension)."
      })
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

const issuesAt = (
  error: ParseResult.ParseError,
  inFile: (at: ReadonlyArray<PropertyKey>) => ReadonlyArray<PropertyKey>
): ReadonlyArray<ManifestIssue> =>
  ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
    field: joinPath(inFile(issue.path)),
    rule: issue._tag === "Missing" ? "is missing" : issue.message
  }))

/**
 * A decoded manifest with the warnings of its decoding: config fields of unknown types dropped,
 * and the rules between a config field's keys that a field breaks.
 * @since 0.1.0
 * @category models
 */
export interface Decoded {
  /** The manifest, unknown config field types dropped. */
  readonly manifest: Manifest
  /** One line each: what was dropped and why, then each rule a config field breaks. */
  readonly warnings: ReadonlyArray<string>
}

const decodeManifest = Schema.decodeUnknownEither(Manifest, { errors: "all", onExcessProperty: "preserve" })

/**
 * Validates parsed JSON as a manifest, reporting every violation. Config fields of a type this
 * build does not know are dropped first, each with a warning; once the manifest is accepted, each
 * rule between a config field's keys that a field breaks is a warning too (never a refusal). A
 * reason or a warning names a config field by its index in the file, dropped fields counted.
 * @since 0.1.0
 * @category utils
 */
export const decode = (json: unknown): Decoded | { readonly issues: ReadonlyArray<ManifestIssue> } => {
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    return { issues: [{ field: "", rule: `must be a JSON object, got ${describeValue(json)}` }] }
  }
  const warnings: Array<string> = []
  /** Per config key whose fields were dropped, the index in the file of each kept field. */
  const positions = new Map<string, ReadonlyArray<number>>()
  let candidate: Record<string, unknown> = json as Record<string, unknown>
  for (const key of ["configSchema", "userConfigSchema"]) {
    const dropped = dropUnknownTypes(candidate[key], key)
    if (dropped.warnings.length > 0) {
      candidate = { ...candidate, [key]: dropped.fields }
      warnings.push(...dropped.warnings)
      positions.set(key, dropped.positions)
    }
  }
  const result = decodeManifest(candidate)
  if (result._tag === "Left") {
    return {
      issues: issuesAt(result.left, (at) => {
        const key = at[0]
        const index = at[1]
        if (typeof key !== "string" || typeof index !== "number") return at
        const kept = positions.get(key)
        return kept === undefined ? at : [key, kept[index] ?? index, ...at.slice(2)]
      })
    }
  }
  const manifest = result.right
  warnings.push(
    ...fieldWarnings(manifest.configSchema ?? [], "configSchema", false, positions.get("configSchema")),
    ...fieldWarnings(manifest.userConfigSchema ?? [], "userConfigSchema", true, positions.get("userConfigSchema"))
  )
  return { manifest, warnings }
}

/**
 * The manifest's JSON Schema, as published in `city-plugin.schema.json`.
 * @since 0.1.0
 * @category schemas
 */
export const jsonSchema = (): JSONSchema.JsonSchema7Root => JSONSchema.make(Manifest)
