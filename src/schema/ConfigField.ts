/**
 * A plugin's declared settings: `configSchema` (and `userConfigSchema`) in `city-plugin.json`, an
 * array of field objects in the shape of the reference loader's manifest (the project
 * docs/plugin-loader-lifecycle.md was written from), and the decoding of a plugin's stored
 * settings against them (docs/plugin-loader.md, "Configuration").
 *
 * A field is `{ key, label, type, ... }`, `type` from {@link configFieldTypes}; the optional keys
 * are typed as the reference types them, and extra keys are kept. That shape decides whether the
 * manifest is accepted: a field that breaks it refuses the manifest. A field whose `type` this
 * build does not know is not a refusal: a newer core may add types, so the manifest's decoding
 * drops it with one warning naming it (see Manifest.ts).
 *
 * The rules between a field's keys are checked too, but the reference does not make these checks
 * and a manifest it accepts loads, so breaking one is a warning of the load report, never a refusal
 * ({@link fieldWarnings}; docs/plugin-loader.md, "Configuration"): a `slider` needs a number field
 * with `min` below `max`, `step`, and `max` reachable from `min` by `step`; `browse` only on a
 * `tokenList` field and never in `userConfigSchema`; an array `default` only on a `tokenList` (and
 * then trimmed, non-empty, without duplicates); a number field's `min` and `max` finite, `min` at
 * most `max`, `step` finite and above 0, and its `default` a finite number within its bounds and on
 * its step (counted from `min`, or 0); a `timezone` default a known IANA zone; `display.divisor`
 * finite and above 0.
 *
 * Settings (`plugins.json` → `config.<plugin>`) are decoded by {@link decodeSettings}: the
 * field's `default` where no value is stored, a wrong-typed value refused naming the key and the
 * rule, a `required` field without value or default reported as unset (a form hint in the
 * reference, never a reason not to load). The `default` is passed on as the manifest writes it,
 * even when it does not fit its field (a string on a number field, a number off its step or out
 * of its bounds): the reference pre-fills its form with it the same way, and the load report's
 * warning already names it. Only stored values are checked against the field. Value types per
 * field type:
 * - a string: `string`, `secret`, `textarea`, `model`, `provider`, `code`, `prompt`,
 *   `embeddingModel`, `destination`, `timezone`, and `enum` (one of its `options`' values when
 *   it has options);
 * - a finite number within `min`/`max`: `number`; a boolean: `boolean`;
 * - an array of strings: `multiSelect` (each one of its options when it has options),
 *   `tokenList` (trimmed, non-empty, no duplicates), `projects`, `plugins`, `tools`, `models`;
 * - every JSON value: `json`, `rolePolicies`, `mcpServers`;
 * - `section` carries no value (a stored one is refused).
 * Stored keys no field declares are kept and passed on (with a warning when the plugin declares
 * a `configSchema`: a misspelt key is then visible).
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * Every config field type this build knows: the reference's fixed set.
 * @since 0.1.0
 * @category constants
 */
export const configFieldTypes = [
  "string",
  "secret",
  "boolean",
  "number",
  "textarea",
  "rolePolicies",
  "model",
  "provider",
  "section",
  "enum",
  "multiSelect",
  "code",
  "prompt",
  "json",
  "embeddingModel",
  "mcpServers",
  "destination",
  "projects",
  "plugins",
  "tools",
  "models",
  "timezone",
  "tokenList"
] as const

/**
 * One config field type.
 * @since 0.1.0
 * @category models
 */
export type ConfigFieldType = (typeof configFieldTypes)[number]

const known: ReadonlySet<string> = new Set(configFieldTypes)

/**
 * Whether `type` is one this build knows.
 * @since 0.1.0
 * @category models
 */
export const isKnownType = (type: unknown): boolean => typeof type === "string" && known.has(type)

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

/**
 * One of a fixed set of strings, refused with one reason listing them.
 * @since 0.1.0
 * @category schemas
 */
export const choice = <const L extends ReadonlyArray<string>>(...values: L) =>
  Schema.Literal(...values).annotations({
    message: (issue) => ({
      message: `must be one of ${values.map((v) => JSON.stringify(v)).join(", ")}, got ${
        typeof issue.actual === "string" ? JSON.stringify(issue.actual) : typeof issue.actual
      }`,
      override: true
    })
  })
const nonEmpty = Schema.String.pipe(Schema.minLength(1, { message: () => "must be a non-empty string" }))

const Option = Schema.Struct({ value: Schema.String, label: Schema.String })
const Scalar = Schema.Union(Schema.String, Schema.Number, Schema.Boolean)

const FieldShape = Schema.Struct(
  {
    key: nonEmpty,
    label: nonEmpty,
    type: choice(...configFieldTypes),
    hint: optional(Schema.String),
    required: optional(Schema.Boolean),
    min: optional(Schema.Number),
    max: optional(Schema.Number),
    step: optional(Schema.Number),
    placeholder: optional(Schema.String),
    display: optional(Schema.Struct({
      control: optional(choice("input", "slider")),
      unit: optional(Schema.String),
      divisor: optional(Schema.Number)
    })),
    browse: optional(Schema.Literal("directory")),
    default: optional(Schema.Union(Schema.String, Schema.Number, Schema.Boolean, Schema.Array(Schema.String))),
    providerType: optional(Schema.String),
    options: optional(Schema.Array(Option)),
    language: optional(Schema.String),
    help: optional(Schema.String),
    risk: optional(choice("low", "medium", "high")),
    advanced: optional(Schema.Boolean),
    fullWidth: optional(Schema.Boolean),
    visibleWhen: optional(Schema.Struct({ key: Schema.String, equals: Scalar }))
  },
  { key: Schema.String, value: Schema.Unknown }
)

/**
 * One declared field, as decoded.
 * @since 0.1.0
 * @category models
 */
export type ConfigField = typeof FieldShape.Type

/** The problem of a `tokenList` value, or `undefined`. */
const tokenListProblem = (value: unknown): string | undefined => {
  if (!Array.isArray(value)) return "must be an array of strings"
  const seen = new Set<string>()
  for (const [index, item] of value.entries()) {
    if (typeof item !== "string") return `item ${index + 1} must be a string`
    if (item.trim() === "") return `item ${index + 1} must not be empty`
    if (item !== item.trim()) return `item ${index + 1} must be trimmed`
    if (seen.has(item)) return `has the item ${JSON.stringify(item)} twice`
    seen.add(item)
  }
  return undefined
}

/** Whether `value` is `base` plus a whole number of `step`s, up to rounding. */
const onStep = (value: number, base: number, step: number): boolean => {
  const nearest = base + Math.round((value - base) / step) * step
  const scale = Math.max(1, Math.abs(value), Math.abs(base), Math.abs(step), Math.abs(nearest))
  return Math.abs(value - nearest) <= Number.EPSILON * scale * 8
}

const isTimeZone = (zone: string): boolean => {
  try {
    new Intl.DateTimeFormat(undefined, { timeZone: zone })
    return true
  } catch {
    return false
  }
}

/** The rules between a field's keys, each as `{ path, message }` so the warning names the key. */
const fieldProblems = (field: ConfigField, perAccount: boolean): ReadonlyArray<{ path: Array<string>; message: string }> => {
  const problems: Array<{ path: Array<string>; message: string }> = []
  const at = (path: Array<string>, message: string) => void problems.push({ path, message })
  const divisor = field.display?.divisor
  if (divisor !== undefined && (!Number.isFinite(divisor) || divisor <= 0)) {
    at(["display", "divisor"], "must be finite and greater than 0")
  }
  if (field.browse !== undefined && field.type !== "tokenList") at(["browse"], "is only valid for tokenList fields")
  if (field.browse !== undefined && perAccount) at(["browse"], "is not allowed in userConfigSchema")
  const dflt = field.default
  if (field.type === "timezone" && dflt !== undefined) {
    if (typeof dflt !== "string") at(["default"], "must be a string for a timezone field")
    else if (dflt !== dflt.trim()) at(["default"], "must be trimmed")
    else if (dflt !== "" && !isTimeZone(dflt)) at(["default"], `is not a known IANA time zone: ${JSON.stringify(dflt)}`)
  }
  if (field.type === "tokenList" && dflt !== undefined) {
    const problem = tokenListProblem(dflt)
    if (problem !== undefined) at(["default"], problem)
  } else if (Array.isArray(dflt)) {
    at(["default"], "may be an array only for tokenList fields")
  }
  if (field.type !== "number") {
    if (field.display?.control === "slider") at(["display", "control"], "slider requires a number field")
    return problems
  }
  const { max, min, step } = field
  if (min !== undefined && !Number.isFinite(min)) at(["min"], "must be finite")
  if (max !== undefined && !Number.isFinite(max)) at(["max"], "must be finite")
  if (step !== undefined && (!Number.isFinite(step) || step <= 0)) at(["step"], "must be finite and greater than 0")
  if (min !== undefined && max !== undefined && min > max) at(["min"], "must be less than or equal to max")
  if (dflt !== undefined) {
    if (typeof dflt !== "number" || !Number.isFinite(dflt)) at(["default"], "must be a finite number")
    else {
      if (min !== undefined && dflt < min) at(["default"], `must be at least min ${min}`)
      if (max !== undefined && dflt > max) at(["default"], `must be at most max ${max}`)
      if (step !== undefined && step > 0 && !onStep(dflt, min ?? 0, step)) {
        at(["default"], `must align to step ${step} from ${min ?? 0}`)
      }
    }
  }
  if (field.display?.control === "slider") {
    if (min === undefined || max === undefined || step === undefined) {
      at(["display", "control"], "slider requires min, max and step")
    } else if (min === max) {
      at(["display", "control"], "slider requires min to be less than max")
    } else if (step > 0 && !onStep(max, min, step)) {
      at(["max"], `must be reachable from min ${min} by step ${step}`)
    }
  }
  return problems
}

/** What each line of {@link fieldWarnings} ends with: the plugin loads all the same. */
const notEnforced = "(loaded anyway: the reference does not check this)"

/**
 * The rules between a field's keys (see the module comment) that `fields` break, one
 * line each, naming the field by `schemaKey` and its index, the key and the rule
 * (`configSchema[3].default: must align to step 50000 from 1000 (loaded anyway: ...)`). They are
 * warnings, never a refusal: the reference does not make these checks, and a manifest it accepts
 * loads. `perAccount` is true for `userConfigSchema`, where `browse` is not allowed. `positions`
 * gives the index each field has in the file when fields were dropped before decoding (see
 * {@link dropUnknownTypes}); without it, a field's index in `fields`.
 * @since 0.1.0
 * @category utils
 */
export const fieldWarnings = (
  fields: ReadonlyArray<ConfigField>,
  schemaKey: string,
  perAccount: boolean,
  positions?: ReadonlyArray<number>
): ReadonlyArray<string> =>
  fields.flatMap((field, index) =>
    fieldProblems(field, perAccount).map(({ message, path }) =>
      `${schemaKey}[${positions?.[index] ?? index}].${path.join(".")}: ${message} ${notEnforced}`
    )
  )

const fieldOf = (identifier: string) => FieldShape.annotations({ identifier })

/**
 * `configSchema`: the instance-wide settings form.
 * @since 0.1.0
 * @category schemas
 */
export const ConfigSchema = Schema.Array(fieldOf("ConfigField")).annotations({
  description: "Declared config fields; the plugin's settings in plugins.json are decoded against them and reach it as ctx.config."
})

/**
 * `userConfigSchema`: the per-account settings form (same vocabulary; `browse` there is a warning).
 * @since 0.1.0
 * @category schemas
 */
export const UserConfigSchema = Schema.Array(fieldOf("UserConfigField")).annotations({
  description: "Declared per-account config fields (same vocabulary as configSchema)."
})

/**
 * The fields of a raw `configSchema`/`userConfigSchema` value whose type this build does not
 * know, removed, with one warning per removed field, and `positions`: the index each kept field
 * has in the given array (so a later reason can name the field where the file has it). Anything
 * that is not an array of objects is left as it is, for the Schema to refuse.
 * @since 0.1.0
 * @category utils
 */
export const dropUnknownTypes = (
  fields: unknown,
  schemaKey: string
): { readonly fields: unknown; readonly warnings: ReadonlyArray<string>; readonly positions: ReadonlyArray<number> } => {
  if (!Array.isArray(fields)) return { fields, warnings: [], positions: [] }
  const warnings: Array<string> = []
  const positions: Array<number> = []
  const kept = fields.filter((field: unknown, index) => {
    const type: unknown = typeof field === "object" && field !== null ? Reflect.get(field, "type") : undefined
    if (typeof field !== "object" || field === null || typeof type !== "string" || isKnownType(type)) {
      positions.push(index)
      return true
    }
    const key: unknown = Reflect.get(field, "key")
    warnings.push(
      `${schemaKey}: ignoring the field ${JSON.stringify(typeof key === "string" ? key : "?")}: unknown type ${JSON.stringify(type)} (needs a newer core)`
    )
    return false
  })
  return { fields: warnings.length === 0 ? fields : kept, warnings, positions }
}

/**
 * A plugin's decoded settings: the values (defaults applied), the `required` keys left unset,
 * and the warnings (stored keys no field declares).
 * @since 0.1.0
 * @category models
 */
export interface PluginSettings {
  /** Every stored value, and each declared field's `default` where nothing is stored. */
  readonly values: Readonly<Record<string, unknown>>
  /** Keys of `required` fields with neither a stored value nor a default, in declaration order. */
  readonly unset: ReadonlyArray<string>
  /** One line each: stored keys no field declares. */
  readonly warnings: ReadonlyArray<string>
}

const stringTypes: ReadonlySet<ConfigFieldType> = new Set<ConfigFieldType>([
  "string",
  "secret",
  "textarea",
  "model",
  "provider",
  "code",
  "prompt",
  "embeddingModel",
  "destination",
  "timezone",
  "enum"
])
const listTypes: ReadonlySet<ConfigFieldType> = new Set<ConfigFieldType>([
  "multiSelect",
  "tokenList",
  "projects",
  "plugins",
  "tools",
  "models"
])

const kindOf = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "an array" : typeof value === "object" ? "an object" : typeof value

/**
 * Why a stored `value` does not fit `field` (see the module comment for the value type of each
 * field type), or `undefined` when it fits.
 * @since 0.1.0
 * @category utils
 */
export const valueProblem = (field: ConfigField, value: unknown): string | undefined => {
  const choices = field.options?.map((o) => o.value)
  if (field.type === "section") return "is a section, which carries no value"
  if (stringTypes.has(field.type)) {
    if (typeof value !== "string") return `must be a string (a ${field.type} field), got ${kindOf(value)}`
    if (field.type === "enum" && choices !== undefined && !choices.includes(value)) {
      return `must be one of ${choices.map((c) => JSON.stringify(c)).join(", ")}, got ${JSON.stringify(value)}`
    }
    return undefined
  }
  if (field.type === "number") {
    if (typeof value !== "number" || !Number.isFinite(value)) return `must be a finite number, got ${kindOf(value)}`
    if (field.min !== undefined && value < field.min) return `must be at least ${field.min}, got ${value}`
    if (field.max !== undefined && value > field.max) return `must be at most ${field.max}, got ${value}`
    return undefined
  }
  if (field.type === "boolean") return typeof value === "boolean" ? undefined : `must be true or false, got ${kindOf(value)}`
  if (listTypes.has(field.type)) {
    if (field.type === "tokenList") return tokenListProblem(value)
    if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) {
      return `must be an array of strings (a ${field.type} field), got ${kindOf(value)}`
    }
    if (field.type === "multiSelect" && choices !== undefined) {
      const wrong = value.find((v) => !choices.includes(v))
      if (wrong !== undefined) return `must hold only ${choices.map((c) => JSON.stringify(c)).join(", ")}, got ${JSON.stringify(wrong)}`
    }
    return undefined
  }
  return undefined // json, rolePolicies, mcpServers: every JSON value fits
}

/**
 * Decodes a plugin's stored settings against its declared fields. `stored` is the plugin's
 * object under `config` in plugins.json (`undefined` when it has none). The first wrong value
 * is returned as `{ key, rule }`.
 * @since 0.1.0
 * @category utils
 */
export const decodeSettings = (
  fields: ReadonlyArray<ConfigField> | undefined,
  stored: Readonly<Record<string, unknown>> | undefined
): PluginSettings | { readonly key: string; readonly rule: string } => {
  const values: Record<string, unknown> = { ...stored }
  const unset: Array<string> = []
  const declared = new Set<string>()
  for (const field of fields ?? []) {
    if (field.type === "section") {
      if (stored !== undefined && Object.hasOwn(stored, field.key)) return { key: field.key, rule: valueProblem(field, undefined) ?? "" }
      continue
    }
    declared.add(field.key)
    if (stored !== undefined && Object.hasOwn(stored, field.key)) {
      const problem = valueProblem(field, stored[field.key])
      if (problem !== undefined) return { key: field.key, rule: problem }
    } else if (field.default !== undefined) {
      values[field.key] = field.default
    } else if (field.required === true) {
      unset.push(field.key)
    }
  }
  const warnings = fields === undefined || fields.length === 0
    ? []
    : Object.keys(stored ?? {}).filter((key) => !declared.has(key)).map((key) =>
      `config key ${JSON.stringify(key)} is declared by no field of configSchema (kept)`
    )
  return { values, unset, warnings }
}
