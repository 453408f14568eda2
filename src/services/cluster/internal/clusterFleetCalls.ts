/**
 * `FleetCalls` on the cluster (ClusterFleetCalls.ts holds the decisions): the listing of every
 * host's endpoints from the SQL stores, by the one-host rule (`endpointsOf`) applied to each host
 * with its own stored profiles, and the call as a `Provision` to the endpoint's entity.
 * @since 0.1.0
 */
import type * as Sharding from "@effect/cluster/Sharding"
import * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Order from "effect/Order"
import type * as SqlClient from "@effect/sql/SqlClient"
import { StateRootError } from "../../../schema/CapabilityErrors.ts"
import { printedTag } from "../../../schema/ErrorFamily.ts"
import type { Declaration } from "../../../schema/Declaration.ts"
import * as Faults from "../../../schema/Faults.ts"
import { InvalidFile } from "../../../schema/FileErrors.ts"
import { oneLine } from "../../../schema/OneLine.ts"
import { Capabilities } from "../../capabilities/Capabilities.ts"
import { endpointsOf } from "../../capabilities/EndpointCalls.ts"
import { fromConfig } from "../../capabilities/RuntimeProfiles.ts"
import { EndpointEntity, entityIdOf } from "../EndpointEntity.ts"
import { FleetCalls, type FleetEndpoint, type FleetRequest } from "../FleetCalls.ts"
import { ClusterError } from "../../../schema/Live.ts"
import type { FleetPeer } from "../SqlPeers.ts"
import { fleet } from "../SqlPeers.ts"
import { type HostEntry, Hosts } from "../SqlHosts.ts"
import { locator as hostLocator } from "./sqlHosts.ts"

const byEndpoint = Order.combine(
  Order.combine(
    Order.mapInput(Order.string, (e: FleetEndpoint) => e.host),
    Order.mapInput(Order.string, (e: FleetEndpoint) => e.personality)
  ),
  Order.mapInput(Order.string, (e: FleetEndpoint) => e.runtime)
)

/**
 * Every host's endpoints of a declaration: for each host with a valid row, the one-host rule over
 * its peers and its own profiles; the peers of a host with no row are reported as that host's
 * missing row (its profiles are unknown), those of a host whose row is invalid are left to that
 * row's error. In host, personality then runtime order.
 * @since 0.1.0
 * @category internals
 */
export const endpointsAcross = (
  declaration: Declaration,
  peers: ReadonlyArray<FleetPeer>,
  hosts: ReadonlyArray<HostEntry>,
  invalidHosts: ReadonlyArray<InvalidFile>
): { readonly endpoints: ReadonlyArray<FleetEndpoint>; readonly missing: ReadonlyArray<InvalidFile> } => {
  const byHost = new Map<string, Array<FleetPeer["peer"]>>()
  for (const { host, peer } of peers) byHost.set(host, [...(byHost.get(host) ?? []), peer])
  const endpoints = hosts.flatMap((entry) =>
    endpointsOf(declaration, byHost.get(entry.host) ?? [], fromConfig(entry.profiles).isAgent).map(
      (e): FleetEndpoint => ({ host: entry.host, runtime: e.runtime, personality: e.peer.personality })
    )
  )
  const rows = new Set([...hosts.map((h) => hostLocator(h.host)), ...invalidHosts.map((e) => e.file)])
  const missing = Arr.sort([...byHost.keys()].filter((host) => !rows.has(hostLocator(host))), Order.string).map((host) =>
    new InvalidFile({
      reason: "HostConfig",
      file: hostLocator(host),
      ...Faults.one("", "is missing: the host has peers in city_peers but never announced itself (its daemon announces it when it starts)")
    })
  )
  return { endpoints: Arr.sort(endpoints, byEndpoint), missing }
}

/**
 * Why a send failed, in one line: the carrier's error (`MailboxFull`, `PersistenceError`, …) or the
 * transport's defect, with its message.
 * @since 0.1.0
 * @category internals
 */
export const reasonOf = (cause: Cause.Cause<unknown>): string => {
  const failed = Option.isSome(Cause.failureOption(cause))
  const error = Cause.squash(cause)
  const printed = printedTag(error)
  const tag = printed === undefined ? "" : `${printed}: `
  const message = error instanceof Error ? error.message : String(error)
  return oneLine(`${failed ? "the send failed" : "the transport died"}: ${tag}${message}`, 300)
}

/**
 * Builds the fleet's calls on the stores and `Sharding`.
 * @since 0.1.0
 * @category internals
 */
export const make: Effect.Effect<
  FleetCalls["Type"],
  never,
  Capabilities | Hosts | SqlClient.SqlClient | Sharding.Sharding
> = Effect.gen(function*() {
  const declarations = yield* Capabilities
  const hosts = yield* Hosts
  const context = yield* Effect.context<SqlClient.SqlClient>()
  const client = yield* EndpointEntity.client

  const endpoints = (capability: string) =>
    Effect.gen(function*() {
      const declaration = yield* declarations.get(capability).pipe(
        Effect.map((d) => ({ _tag: "Valid" as const, declaration: d })),
        Effect.catchTags({
          InvalidFile: (invalid) => Effect.succeed({ _tag: "Invalid" as const, invalid }),
          CapabilityError: (unknown) =>
            Effect.fail(
              new StateRootError({ reason: "StateError", operation: "read", path: unknown.file ?? capability, detail: "no declaration: nothing to sweep" })
            )
        })
      )
      const peers = yield* Effect.provide(fleet, context)
      const listed = yield* hosts.list
      const invalid = [...peers.invalid, ...listed.invalid]
      if (declaration._tag === "Invalid") return { endpoints: [], invalid: [declaration.invalid, ...invalid] }
      const found = endpointsAcross(
        declaration.declaration,
        peers.valid,
        listed.valid,
        listed.invalid
      )
      return { endpoints: found.endpoints, invalid: [...invalid, ...found.missing] }
    })

  const call = (endpoint: FleetEndpoint, request: FleetRequest) =>
    client(entityIdOf(endpoint)).Provision({
      verb: request.verb,
      capability: request.capability,
      revision: request.revision
    }).pipe(
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause)
          ? Effect.interrupt
          : Effect.fail(new ClusterError({ reason: "HostUnavailable", host: endpoint.host, detail: reasonOf(cause) }))
      )
    )

  return FleetCalls.of({ endpoints, call })
})
