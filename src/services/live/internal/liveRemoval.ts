/**
 * remove-runtime on a live endpoint (docs/capability-plugin-lifecycle.md, "remove-runtime on a
 * live endpoint"): foreign → refused; `force` → kill now; idle → retired now; asleep / stopped →
 * nothing to retire; busy → an owed removal. An endpoint hosted by another process (the daemon)
 * always gets an owed removal, which that process carries out.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { EndpointState } from "../../../schema/Live.ts"
import type { EndpointHostShape, EndpointRef } from "../EndpointHost.ts"
import type { Reloads } from "../../owed/Reloads.ts"

/**
 * What `remove` decided for a live endpoint: removed now by the caller, already done by the daemon, owed, refused, or failed.
 * @since 0.1.0
 * @category models
 */
export type RemovalDecision =
  | { readonly _tag: "now"; readonly state: EndpointState }
  | { readonly _tag: "done" }
  | { readonly _tag: "pending" }
  | { readonly _tag: "foreign" }
  | { readonly _tag: "failed"; readonly detail: string }

/**
 * `remove` over the endpoint host and the owed-work store; `wake` wakes the worker.
 * @since 0.1.0
 * @category internals
 */
export const makeRemove = (deps: {
  readonly endpointHost: EndpointHostShape
  readonly reloads: Reloads["Type"]
  readonly wake: Effect.Effect<void>
}) => {
  const { endpointHost, reloads, wake } = deps
  const remove = (ref: EndpointRef, force: boolean) =>
    Effect.gen(function*() {
      const s = yield* endpointHost.status(ref)
      if (s === "foreign") return { _tag: "foreign" } as const
      if (endpointHost.appliedElsewhere?.(ref) === true && (s === "idle" || s === "busy")) {
        // The daemon hosting it retires (or, forced, kills) and removes it; wait for it (bounded).
        yield* reloads.requestRemoval(ref, force)
        yield* endpointHost.retire(ref)
        const left = yield* reloads.get(ref)
        return Option.isNone(left) ? { _tag: "done" } as const : { _tag: "pending" } as const
      }
      if (force) {
        yield* endpointHost.kill(ref)
        return { _tag: "now", state: s } as const
      }
      if (s === "busy") {
        yield* reloads.requestRemoval(ref)
        yield* wake
        return { _tag: "pending" } as const
      }
      if (s === "idle") yield* endpointHost.retire(ref)
      return { _tag: "now", state: s } as const
    }).pipe(Effect.catchAll((e) => Effect.succeed<RemovalDecision>({ _tag: "failed", detail: e.message })))
  return remove
}
