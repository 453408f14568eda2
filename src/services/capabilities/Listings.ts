/**
 * The read-only views behind `city capability list` and `city peer list`: every
 * declaration with its endpoints and their last recorded call, and every peer.
 * Every invalid file met is returned beside the valid ones (reported loudly,
 * never skipped). Reading never creates anything: on a root that does not exist
 * both fail with `RootNotFound`, so a mistyped root is not shown as an empty one.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type { StateRootError } from "../../schema/CapabilityErrors.ts"
import type { Declaration } from "../../schema/Declaration.ts"
import type { InvalidFile } from "../../schema/FileErrors.ts"
import type { EndpointRecord } from "../../schema/Outcome.ts"
import type { Peer } from "../../schema/Peer.ts"
import * as internal from "./internal/listings.ts"

/**
 * One endpoint of a capability, with its last recorded call.
 * @since 0.1.0
 * @category models
 */
export interface ListedEndpoint {
  /** The peer's personality. */
  readonly personality: string
  /** The runtime. */
  readonly runtime: string
  /** The last recorded provisioning call, if any. */
  readonly last: Option.Option<EndpointRecord>
}

/**
 * One declaration and its endpoints.
 * @since 0.1.0
 * @category models
 */
export interface ListedCapability {
  /** The capability's declaration. */
  readonly declaration: Declaration
  /** Its endpoints, each with its last recorded call. */
  readonly endpoints: ReadonlyArray<ListedEndpoint>
}

/**
 * What `city capability list` shows: every declaration and the invalid files found.
 * @since 0.1.0
 * @category models
 */
export interface CapabilityListing {
  /** Every valid declaration with its endpoints. */
  readonly capabilities: ReadonlyArray<ListedCapability>
  /** Every invalid file found, reported beside the valid ones. */
  readonly invalid: ReadonlyArray<InvalidFile>
}

/**
 * What `city peer list` shows: every peer and the invalid files found.
 * @since 0.1.0
 * @category models
 */
export interface PeerListing {
  /** Every valid peer. */
  readonly peers: ReadonlyArray<Peer>
  /** Every invalid peer file found. */
  readonly invalid: ReadonlyArray<InvalidFile>
}

/**
 * The read-only views of the state root, for the list verbs.
 * @since 0.1.0
 * @category tags
 */
export class Listings extends Context.Tag("effect-city/Listings")<
  Listings,
  {
    /** Every declaration with its endpoints and their last recorded call. */
    readonly capabilities: Effect.Effect<CapabilityListing, StateRootError>
    /** Every peer, and every invalid peer file. */
    readonly peers: Effect.Effect<PeerListing, StateRootError>
  }
>() {}

/**
 * The overview as a Layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(Listings, internal.make)
