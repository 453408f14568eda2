/**
 * A fast, hand-written acceptance check for `city-plugin.json`, used by discovery before the
 * Schema (issue 9: cold `discover` over 1,000 folders within 1.2× a plain `readdirSync` +
 * `JSON.parse` loop).
 *
 * Why it exists: decoding a manifest with the Schema costs several microseconds (the parser
 * builds a new object, an Either per field and per filter), several times the cost of reading and
 * parsing the file, so a first discovery of 1,000 folders spent most of its time in decoding.
 * Almost every manifest on disk is valid, and for a valid one the decoder's work only confirms it.
 *
 * What it decides: only acceptance. {@link isManifest} says `true` exactly when
 * `Schema.decodeUnknownEither(Manifest)` (with the options of `Manifest.decode`) would succeed;
 * when it says `false`, the caller decodes with the Schema, which alone words the reasons. The
 * Schema therefore stays the single source of the rules' messages and of the published JSON
 * Schema, and a property test (`test/property/manifestGuard.test.ts`) checks that the two agree
 * on generated manifests, valid and invalid, field by field.
 *
 * A rule added to the Schema must be added here too; the property test fails until it is.
 * @since 0.1.0
 */
import type { Manifest } from "./Manifest.ts"
import { supportedApiVersions } from "./Manifest.ts"

const hasOwn = (o: object, key: string) => Object.prototype.hasOwnProperty.call(o, key)

/** Non-null, not an array: what a Schema.Struct accepts. */
const isRecord = (u: unknown): u is { readonly [key: string]: unknown } =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** PluginName: 1 to 64 characters, a letter or digit first, then letters, digits, `.`, `_`, `-`. */
const namePattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

const isName = (u: unknown) => typeof u === "string" && namePattern.test(u)

/** ManifestVersion: non-empty, no white space. */
const isVersion = (u: unknown) => typeof u === "string" && u.length > 0 && !/\s/.test(u)

/** ApiVersion: a number among the supported versions. */
const isApiVersion = (u: unknown) => typeof u === "number" && supportedApiVersions.includes(u)

/** A non-empty string once trimmed (`description`, each of `provides`). */
const isNonBlank = (u: unknown) => typeof u === "string" && u.trim().length > 0

/** EntryPath: non-empty, no NUL, neither POSIX- nor Windows-absolute. */
const isEntry = (u: unknown) =>
  typeof u === "string" && u.length > 0 && !u.includes("\u0000") && !/^(?:[/\\]|[A-Za-z]:[/\\])/.test(u)

/** Every index of the array (holes included, as the Schema reads them) satisfies `ok`. */
const everyIndex = (u: unknown, ok: (item: unknown) => boolean): boolean => {
  if (!Array.isArray(u)) return false
  for (let i = 0; i < u.length; i++) {
    if (!ok(u[i])) return false
  }
  return true
}

/** Skill: a record with a string `name` (extra keys allowed). */
const isSkill = (u: unknown) => isRecord(u) && typeof u["name"] === "string"

/**
 * Whether `json` is a valid manifest: `true` exactly when the `Manifest` Schema would decode it.
 * A `false` says nothing about why: decode with the Schema (`Manifest.decode`) for the reasons.
 * Folder rules (name equals the folder, entry inside it) are not part of it, as they are not
 * part of the Schema.
 * @since 0.1.0
 * @category parsing
 */
export const isManifest = (json: unknown): json is Manifest =>
  isRecord(json) &&
  isName(json["name"]) &&
  isVersion(json["version"]) &&
  isApiVersion(json["apiVersion"]) &&
  isNonBlank(json["description"]) &&
  isEntry(json["entry"]) &&
  (!hasOwn(json, "skills") || everyIndex(json["skills"], isSkill)) &&
  (!hasOwn(json, "provides") || everyIndex(json["provides"], isNonBlank))
