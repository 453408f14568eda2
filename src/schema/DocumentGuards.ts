/**
 * Fast, hand-written acceptance checks for the state root's documents that a sweep reads by the
 * hundred: peer files (`peers/<personality>.json`) and endpoint records
 * (`state/endpoints/<capability>.json`, one entry per endpoint). Used by `DocumentStore` before the
 * Schema (measured: a `city capability sync` over 500 endpoints read and decoded 250 peer files
 * twice and a 500-entry records file, and the decoding was a tenth of the process's CPU).
 *
 * What they decide: only acceptance, of a value `JSON.parse` produced. {@link isPeer} (and
 * {@link isEndpointRecords}) says `true` exactly when `Schema.decodeUnknownEither(Peer,
 * { onExcessProperty: "error" })` would succeed, and then the value is the document as it is (the
 * Schemas have no transformations). When a guard says `false`, the store decodes with the Schema,
 * which alone words the reasons (file, field, rule). A property test
 * (`test/property/documentGuards.test.ts`) checks that each guard and its Schema agree on
 * generated documents, valid and invalid.
 *
 * A rule added to `Peer` or `EndpointRecords` must be added here too; the property test fails
 * until it is.
 * @since 0.1.0
 */
import { isName } from "./Name.ts"
import type { EndpointRecords } from "./Outcome.ts"
import type { Peer } from "./Peer.ts"

/** Non-null, not an array: what a Schema.Struct or Schema.Record accepts. */
const isRecord = (u: unknown): u is { readonly [key: string]: unknown } =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const isNameValue = (u: unknown): u is string => typeof u === "string" && isName(u)

/** Every own key of `o` is one of `allowed` (excess properties are refused). */
const onlyKeys = (o: object, allowed: ReadonlySet<string>): boolean => {
  for (const key of Object.keys(o)) {
    if (!allowed.has(key)) return false
  }
  return true
}

const hasOwn = (o: object, key: string) => Object.prototype.hasOwnProperty.call(o, key)

const peerKeys: ReadonlySet<string> = new Set(["schema", "personality", "cwd", "runtimes", "default_runtime"])

/**
 * True exactly when the `Peer` Schema accepts `u` (excess properties refused): schema 1, names
 * for the personality, each runtime and the default runtime, an absolute `cwd`, a non-empty list
 * of runtimes without repeats that includes the default.
 * @since 0.1.0
 * @category guards
 */
export const isPeer = (u: unknown): u is Peer => {
  if (!isRecord(u) || !onlyKeys(u, peerKeys)) return false
  const { cwd, default_runtime, personality, runtimes, schema } = u
  if (schema !== 1 || !isNameValue(personality) || typeof cwd !== "string" || !cwd.startsWith("/")) return false
  if (!Array.isArray(runtimes) || runtimes.length === 0 || !isNameValue(default_runtime)) return false
  for (let i = 0; i < runtimes.length; i++) {
    if (!isNameValue(runtimes[i])) return false
  }
  return new Set(runtimes).size === runtimes.length && runtimes.includes(default_runtime)
}

const provisionStates: ReadonlySet<unknown> = new Set(["ok", "failed", "timeout", "not-executable"])
const occasions: ReadonlySet<unknown> = new Set(["birth", "sweep-on", "remove", "off-all"])
const recordKeys: ReadonlySet<string> = new Set(["state", "occasion", "at", "exit", "detail"])
const recordsKeys: ReadonlySet<string> = new Set(["schema", "capability", "endpoints"])

/** One endpoint's last call: `EndpointRecord`. */
const isEndpointRecord = (u: unknown): boolean => {
  if (!isRecord(u) || !onlyKeys(u, recordKeys)) return false
  if (!provisionStates.has(u["state"]) || !occasions.has(u["occasion"]) || typeof u["at"] !== "string") return false
  if (hasOwn(u, "exit") && typeof u["exit"] !== "number") return false
  return !hasOwn(u, "detail") || typeof u["detail"] === "string"
}

/**
 * True exactly when the `EndpointRecords` Schema accepts `u` (excess properties refused): schema
 * 1, a capability name, and `endpoints` keyed by personality, then runtime (both names), each an
 * endpoint record.
 * @since 0.1.0
 * @category guards
 */
export const isEndpointRecords = (u: unknown): u is EndpointRecords => {
  if (!isRecord(u) || !onlyKeys(u, recordsKeys)) return false
  if (u["schema"] !== 1 || !isNameValue(u["capability"])) return false
  const endpoints = u["endpoints"]
  if (!isRecord(endpoints)) return false
  for (const personality of Object.keys(endpoints)) {
    const runtimes = endpoints[personality]
    if (!isName(personality) || !isRecord(runtimes)) return false
    for (const runtime of Object.keys(runtimes)) {
      if (!isName(runtime) || !isEndpointRecord(runtimes[runtime])) return false
    }
  }
  return true
}
