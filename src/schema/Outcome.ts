/**
 * What one provisioning call came to (docs/capability-plugin-lifecycle.md,
 * "Joints (core-owned)"; docs/design.md "Capabilities"): `ok`, `failed` (exit code and
 * the tail of stderr), `timeout` or `not-executable`.
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { Application } from "./Live.ts"
import { Name } from "./Name.ts"
import { Occasion } from "./Occasion.ts"

/**
 * How one provisioning call ended: `ok`, `failed`, `timeout` or `not-executable`.
 * @since 0.1.0
 * @category schemas
 */
export const ProvisionState = Schema.Literal("ok", "failed", "timeout", "not-executable")
/**
 * How one provisioning call ended: `ok`, `failed`, `timeout` or `not-executable`.
 * @since 0.1.0
 * @category models
 */
export type ProvisionState = typeof ProvisionState.Type

/**
 * The result of one command run. `exit` is present when the process exited with a code.
 * @since 0.1.0
 * @category schemas
 */
export const Outcome = Schema.Struct({
  state: ProvisionState,
  exit: Schema.optional(Schema.Number),
  ms: Schema.Number,
  detail: Schema.optional(Schema.String)
})
/**
 * The result of one command run, as decoded.
 * @since 0.1.0
 * @category models
 */
export type Outcome = typeof Outcome.Type

/**
 * One endpoint's outcome at one joint, as reported. An endpoint is the (personality, runtime) pair.
 * @since 0.1.0
 * @category schemas
 */
export const EndpointOutcome = Schema.Struct({
  capability: Name,
  personality: Name,
  runtime: Name,
  occasion: Occasion,
  ...Outcome.fields,
  // Live application: set after the surfaces were written (`ok`) and the endpoint converged.
  application: Schema.optional(Application),
  application_detail: Schema.optional(Schema.String)
})
/**
 * One endpoint's outcome at one joint, as decoded.
 * @since 0.1.0
 * @category models
 */
export type EndpointOutcome = typeof EndpointOutcome.Type

/**
 * The last recorded call for one endpoint of one capability.
 * @since 0.1.0
 * @category schemas
 */
export const EndpointRecord = Schema.Struct({
  state: ProvisionState,
  occasion: Occasion,
  at: Schema.String,
  exit: Schema.optional(Schema.Number),
  detail: Schema.optional(Schema.String)
})
/**
 * The last recorded call for one endpoint, as decoded.
 * @since 0.1.0
 * @category models
 */
export type EndpointRecord = typeof EndpointRecord.Type

/**
 * `state/endpoints/<capability>.json`: personality → runtime → last record. Keyed by the pair, never
 * by the spec's `<runtime>-<personality>` identity, which is ambiguous when a name contains `-`
 * (`x-y` + `z` and `x` + `y-z`).
 * @since 0.1.0
 * @category schemas
 */
export const EndpointRecords = Schema.Struct({
  schema: Schema.Literal(1).annotations({ message: () => "must be 1" }),
  capability: Name,
  endpoints: Schema.Record({ key: Name, value: Schema.Record({ key: Name, value: EndpointRecord }) })
})
/**
 * `state/endpoints/<capability>.json`, as decoded.
 * @since 0.1.0
 * @category models
 */
export type EndpointRecords = typeof EndpointRecords.Type

/**
 * An endpoint, by its two names: the one key of an endpoint everywhere (its owed work, its records
 * per capability add the capability's name: `EndpointRecords.CapabilityEndpoint`).
 * @since 0.1.0
 * @category models
 */
export interface EndpointKey {
  /** The peer's personality. */
  readonly personality: string
  /** The runtime. */
  readonly runtime: string
}

/**
 * The spec's endpoint identity, `<runtime>-<personality>`, written only to the lifecycle log (its
 * `identity=` field). It is not unique (see `EndpointRecords`): nothing is keyed by it.
 * @since 0.1.0
 * @category utils
 */
export const identityOf = (runtime: string, personality: string): string => `${runtime}-${personality}`
