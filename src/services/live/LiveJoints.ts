/**
 * The capability joints with live application (docs/capability-plugin-lifecycle.md, "Applying
 * surfaces to a live endpoint": "Successful `register`, `sync` and `unregister` converge a live
 * agent session to the registered MCP configuration automatically"; "remove-runtime on a live
 * endpoint").
 *
 * Each verb runs the Provisioner's joint unchanged (surfaces written, under the root lock), then,
 * with the lock released, converges every endpoint whose call ended `ok` through the Applier; the
 * outcome gains `application` (`applied | pending | asleep | foreign | failed`) beside its `state`.
 * An endpoint whose runtime the host never reaches (`EndpointHost.unreachable`: no `status`
 * command) is `asleep` without reading its peer file or asking its status (a sweep of hundreds of
 * such endpoints, the default host's, spent a tenth of the `city` process there); a reload owed
 * to it is settled as for any endpoint at rest.
 * An endpoint whose call failed has no application: its surfaces are not known to be in place.
 *
 * `removeRuntime` checks what the Provisioner checks (declared, not the default) before touching a
 * live endpoint, then asks the Applier: removed in the call (`removed`), owed to the daemon
 * (`pending`: the peer keeps the runtime until then), refused (`foreign`), or `failed`.
 * `requestReload` is for verbs that write host-global files, which are not fingerprinted.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { CapabilityError } from "../../schema/CapabilityErrors.ts"
import type { Declaration } from "../../schema/Declaration.ts"
import type { EndpointRemoval } from "../../schema/Live.ts"
import { type EndpointOutcome, identityOf } from "../../schema/Outcome.ts"
import type { Peer } from "../../schema/Peer.ts"
import { RuntimeProfiles } from "../capabilities/RuntimeProfiles.ts"
import { Peers } from "../capabilities/Peers.ts"
import { type JointReport, type JointSettings, Provisioner, type RemovalSettings } from "../capabilities/Provisioner.ts"
import { StateRoot } from "../root/StateRoot.ts"
import { type Applied, Applier } from "./Applier.ts"
import { EndpointHost, type EndpointRef } from "./EndpointHost.ts"
import { makeRefs } from "./Endpoints.ts"
import { Reloads } from "../owed/Reloads.ts"

type P = Provisioner["Type"]
type ErrorOf<F> = F extends (...args: ReadonlyArray<never>) => Effect.Effect<unknown, infer E, unknown> ? E : never

/**
 * What `remove-runtime` on a live endpoint came to: the peer, the joint's report, and the removal.
 * @since 0.1.0
 * @category models
 */
export interface RemoveRuntimeResult {
  /** The peer as it is now (without the runtime once the removal is done). */
  readonly peer: Peer
  /** The report of the unprovisioning joint; empty when the removal is deferred or was done by the daemon. */
  readonly report: JointReport
  /** What the removal came to: removed, pending (after the current Turn), foreign or failed. */
  readonly removal: EndpointRemoval
  /** Why, when the live endpoint decided the removal (pending, foreign, failed, or done by the daemon). */
  readonly detail?: string
}

/**
 * The capability joints with live application: each written endpoint converged, removals at Turn boundaries.
 * @since 0.1.0
 * @category tags
 */
export class LiveJoints extends Context.Tag("effect-city/LiveJoints")<
  LiveJoints,
  {
    readonly register: (
      file: string,
      settings?: JointSettings
    ) => Effect.Effect<{ readonly declaration: Declaration; readonly report: JointReport }, ErrorOf<P["register"]>>
    readonly sync: (name: string, settings?: JointSettings) => Effect.Effect<JointReport, ErrorOf<P["sync"]>>
    readonly unregister: (name: string, settings?: RemovalSettings) => Effect.Effect<JointReport, ErrorOf<P["unregister"]>>
    readonly removeRuntime: (
      personality: string,
      runtime: string,
      options?: { readonly force?: boolean; readonly settings?: JointSettings }
    ) => Effect.Effect<RemoveRuntimeResult, ErrorOf<P["removeRuntime"]>>
    readonly requestReload: (refs: ReadonlyArray<EndpointRef>, reason: string) => Effect.Effect<ReadonlyArray<Applied>>
  }
>() {}

/**
 * Builds the live joints over the Provisioner and the Applier.
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const provisioner = yield* Provisioner
  const applier = yield* Applier
  const endpointHost = yield* EndpointHost
  const reloads = yield* Reloads
  const peers = yield* Peers
  const profiles = yield* RuntimeProfiles
  const refs = makeRefs(profiles, peers, yield* StateRoot)

  /** Converges the endpoints whose surfaces were written, and annotates their outcomes. */
  const apply = (report: JointReport, reason: string, capability: string) =>
    Effect.gen(function*() {
      const written = report.outcomes.filter((o) => o.state === "ok")
      // Endpoints the host never reaches are asleep without asking: no peer file read, no status.
      const resting = written.filter((o) => endpointHost.unreachable?.(o.runtime) === true)
      const reachable = written.filter((o) => endpointHost.unreachable?.(o.runtime) !== true)
      const targets = yield* refs.resolveAll(reachable)
      const found = targets.flatMap((r) => Option.isSome(r) ? [r.value] : [])
      const converged = yield* applier.converge(found, reason, capability)
      const applied = new Map([...converged, ...yield* applier.rest(resting)].map((a) => [a.identity, a]))
      const outcomes = report.outcomes.map((o): EndpointOutcome => {
        if (o.state !== "ok") return o
        const a = applied.get(identityOf(o.runtime, o.personality))
        // An endpoint the peer no longer declares has nothing to apply to.
        if (a === undefined) return { ...o, application: "asleep", application_detail: "not an endpoint any more" }
        return { ...o, application: a.application, ...(a.detail === undefined ? {} : { application_detail: a.detail }) }
      })
      // A sweep whose application failed somewhere (foreign, failed) fails: exit 1.
      const unapplied = outcomes.some((o) => o.application === "foreign" || o.application === "failed")
      return { ...report, outcomes, verdict: unapplied ? "failed" as const : report.verdict }
    })

  const register = (file: string, settings?: JointSettings) =>
    Effect.flatMap(provisioner.register(file, settings), ({ declaration, report }) =>
      Effect.map(apply(report, `register ${declaration.capability}`, declaration.capability), (r) => ({ declaration, report: r })))

  const sync = (name: string, settings?: JointSettings) =>
    Effect.flatMap(provisioner.sync(name, settings), (report) => apply(report, `sync ${name}`, name))

  const unregister = (name: string, settings?: RemovalSettings) =>
    Effect.flatMap(provisioner.unregister(name, settings), (report) => apply(report, `unregister ${name}`, name))

  const removeRuntime = (
    personality: string,
    runtime: string,
    options: { readonly force?: boolean; readonly settings?: JointSettings } = {}
  ) =>
    Effect.gen(function*() {
      const peer = yield* peers.get(personality)
      if (!peer.runtimes.includes(runtime)) return yield* new CapabilityError({ reason: "RuntimeNotWired", personality, runtime })
      if (peer.default_runtime === runtime) return yield* new CapabilityError({ reason: "DefaultRuntimeRemoval", personality, runtime })
      const empty: JointReport = { outcomes: [], invalid: [], verdict: "ok" }
      if (profiles.isAgent(runtime)) {
        const ref = refs.of(peer, runtime)
        const decision = yield* applier.remove(ref, options.force === true)
        switch (decision._tag) {
          case "pending":
            return { peer, report: empty, removal: "pending", detail: "removed after the current Turn" } as const
          case "foreign":
            return { peer, report: empty, removal: "foreign", detail: "owned by an outside service manager; not removed" } as const
          case "failed":
            return { peer, report: empty, removal: "failed", detail: decision.detail } as const
          case "done":
            return { peer: yield* peers.get(personality), report: empty, removal: "removed", detail: "removed by the city daemon" } as const
          case "now":
            break
        }
      }
      const result = yield* provisioner.removeRuntime(personality, runtime, options.settings)
      yield* reloads.completeRemoval({ personality, runtime }).pipe(Effect.ignore)
      return { ...result, removal: "removed" } as const
    })

  return LiveJoints.of({
    register,
    sync,
    unregister,
    removeRuntime,
    requestReload: (targets, reason) => applier.converge(targets, reason)
  })
})

/**
 * The live joints as a layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(LiveJoints, make)
