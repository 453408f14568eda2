/**
 * The endpoints part of the status board (docs/status-page.md): every endpoint of every
 * declaration as the state root records it (Listings) with its owed reload or removal (Reloads),
 * and what changed between two reads, as the board's events and log lines.
 *
 * Decisions:
 * - An endpoint's standing is `failing` once an attempt at its owed work failed, `pending` while
 *   work is owed, `failed` when nothing is owed but its last provisioning call did not succeed (a
 *   failed provision owes no reload: the standing is where the operator sees it), else `applied`.
 * - Owed work of an endpoint no declaration lists any more (its capability or peer removed) is an
 *   entry of its own, with no capability, listed last.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { StateRootError } from "../../schema/CapabilityErrors.ts"
import type { OwedRecord } from "../../schema/Live.ts"
import { endpointKey, type EndpointStanding, type StatusEndpoint, type StatusEvent } from "../../schema/StatusDocument.ts"
import type { CapabilityListing } from "../capabilities/Listings.ts"
import { isOwed } from "../owed/Reloads.ts"

/** What is owed decides; with nothing owed, the last provisioning call: `failed` unless it was `ok`. */
const standingOf = (owed: OwedRecord | undefined, lastState?: string): EndpointStanding =>
  owed === undefined || (!isOwed(owed) && owed.removal === undefined)
    ? (lastState === undefined || lastState === "ok" ? "applied" : "failed")
    : (owed.attempts ?? 0) > 0 || owed.last_error !== undefined
    ? "failing"
    : "pending"

const owedPart = (owed: OwedRecord | undefined): StatusEndpoint["owed"] =>
  owed === undefined || standingOf(owed) === "applied" || standingOf(owed) === "failed" ? null : {
    reload: isOwed(owed),
    removal: owed.removal !== undefined,
    reason: owed.reason,
    attempts: owed.attempts ?? 0,
    last_error: owed.last_error ?? null,
    next_attempt_at: owed.next_attempt_at ?? null
  }

/**
 * The endpoints' order on the page: by capability (the ones of no declaration last), peer, runtime.
 * @since 0.1.0
 * @category utils
 */
export const byKey = (a: StatusEndpoint, b: StatusEndpoint): number => {
  if ((a.capability === null) !== (b.capability === null)) return a.capability === null ? 1 : -1
  for (const [x, y] of [[a.capability ?? "", b.capability ?? ""], [a.peer, b.peer], [a.runtime, b.runtime]] as const) {
    if (x !== y) return x < y ? -1 : 1
  }
  return 0
}

/** One line saying what changed in an endpoint's entry, or none when nothing a reader cares about did. */
const endpointLine = (before: StatusEndpoint | undefined, after: StatusEndpoint): Option.Option<string> => {
  const name = `${after.runtime}-${after.peer}` + (after.capability === null ? "" : ` (${after.capability})`)
  const parts: Array<string> = []
  if (after.last !== null && (before?.last === null || before?.last?.at !== after.last.at)) {
    parts.push(`provision ${after.last.occasion}: ${after.last.state}` + (after.last.exit === null ? "" : ` exit ${after.last.exit}`))
  }
  if (before !== undefined && before.standing !== after.standing) parts.push(`${before.standing} → ${after.standing}`)
  else if (before === undefined && after.standing !== "applied") parts.push(after.standing)
  if (after.standing === "failing" && after.owed?.last_error !== before?.owed?.last_error && after.owed?.last_error != null) {
    parts.push(`failed: ${after.owed.last_error.slice(0, 300)}`)
  }
  return parts.length === 0 ? Option.none() : Option.some(`${name}: ${parts.join("; ")}`)
}

/**
 * The endpoints as the state root has them now, by `endpointKey`: every endpoint of every
 * declaration with its last provisioning call and its owed work, then the owed work of endpoints no
 * declaration lists any more.
 * @since 0.1.0
 * @category utils
 */
export const read = (
  capabilities: Effect.Effect<CapabilityListing, StateRootError>,
  owedWork: Effect.Effect<ReadonlyArray<OwedRecord>, StateRootError>
): Effect.Effect<Map<string, StatusEndpoint>, StateRootError> =>
  Effect.gen(function*() {
    const listing = yield* capabilities
    const owed = yield* owedWork
    const owedBy = new Map(owed.map((r) => [JSON.stringify([r.personality, r.runtime]), r]))
    const next = new Map<string, StatusEndpoint>()
    const listed = new Set<string>()
    for (const c of listing.capabilities) {
      for (const e of c.endpoints) {
        const pair = JSON.stringify([e.personality, e.runtime])
        listed.add(pair)
        const o = owedBy.get(pair)
        const entry: StatusEndpoint = {
          capability: c.declaration.capability,
          peer: e.personality,
          runtime: e.runtime,
          standing: standingOf(o, Option.getOrUndefined(Option.map(e.last, (l) => l.state))),
          last: Option.match(e.last, {
            onNone: () => null,
            onSome: (l) => ({ state: l.state, occasion: l.occasion, at: l.at, exit: l.exit ?? null, detail: l.detail ?? null })
          }),
          owed: owedPart(o)
        }
        next.set(endpointKey(entry), entry)
      }
    }
    // Owed work of an endpoint no declaration lists any more (its capability or peer removed).
    for (const r of owed) {
      if (listed.has(JSON.stringify([r.personality, r.runtime]))) continue
      const entry: StatusEndpoint = {
        capability: null,
        peer: r.personality,
        runtime: r.runtime,
        standing: standingOf(r),
        last: null,
        owed: owedPart(r)
      }
      next.set(endpointKey(entry), entry)
    }
    return next
  })

const sameEndpoint = (a: StatusEndpoint, b: StatusEndpoint): boolean => JSON.stringify(a) === JSON.stringify(b)

/**
 * What changed from `before` to `next`: an `endpoint` event for each new or changed entry, with the
 * log line that says what a reader cares about (when anything), and an `endpoint-removed` event
 * for each entry gone.
 * @since 0.1.0
 * @category utils
 */
export const changes = (
  before: ReadonlyMap<string, StatusEndpoint>,
  next: ReadonlyMap<string, StatusEndpoint>
): Array<readonly [StatusEvent, Option.Option<string>]> => {
  const out: Array<readonly [StatusEvent, Option.Option<string>]> = []
  for (const [key, entry] of next) {
    const was = before.get(key)
    if (was !== undefined && sameEndpoint(was, entry)) continue
    out.push([{ _tag: "endpoint", endpoint: entry }, endpointLine(was, entry)])
  }
  for (const [key, entry] of before) {
    if (next.has(key)) continue
    out.push([{ _tag: "endpoint-removed", capability: entry.capability, peer: entry.peer, runtime: entry.runtime }, Option.none()])
  }
  return out
}
