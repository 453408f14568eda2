/**
 * The fingerprint watcher of the daemon (docs/capability-plugin-lifecycle.md, "Writers outside the
 * core": "the daemon compares it every few seconds. A difference owes one reload, applied at the
 * next turn boundary exactly as above").
 *
 * Each pass polls every endpoint's launch-read files (Fingerprints). A difference is first checked
 * against the stored baseline (a `city` verb in another process may have accepted its own writes
 * as the baseline meanwhile); what still differs owes one reload if the endpoint is live (idle or
 * busy), and nothing if it is asleep or stopped (its next launch reads the files) or foreign. The
 * observed state then becomes the baseline, so one difference owes exactly one reload.
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { Runtimes } from "../capabilities/Runtimes.ts"
import { Peers } from "../capabilities/Peers.ts"
import { StateRoot } from "../capabilities/StateRoot.ts"
import { Applier } from "./Applier.ts"
import { EndpointHost } from "./EndpointHost.ts"
import { makeRefs } from "./Endpoints.ts"
import { Fingerprints } from "./Fingerprints.ts"
import { Reloads } from "./Reloads.ts"

/**
 * One pass; the identities that were owed a reload.
 * @since 0.1.0
 * @category constructors
 */
export const pass = Effect.gen(function*() {
  const fingerprints = yield* Fingerprints
  const reloads = yield* Reloads
  const host = yield* EndpointHost
  const applier = yield* Applier
  const refs = makeRefs(yield* Runtimes, yield* Peers, yield* StateRoot)
  const first = yield* fingerprints.poll(yield* refs.all)
  if (first.length === 0) return []
  yield* Effect.forEach(first, (c) => fingerprints.forget(c.ref), { discard: true })
  const changes = yield* fingerprints.poll(first.map((c) => c.ref))
  const owed: Array<string> = []
  for (const change of changes) {
    const state = yield* Effect.either(host.status(change.ref))
    if (state._tag === "Left") {
      yield* Effect.logWarning(`surfaces changed, status unknown: ${state.left.message}`).pipe(
        Effect.annotateLogs({ endpoint: change.ref.identity })
      )
      continue // retried at the next pass: the baseline is not accepted
    }
    if (state.right === "idle" || state.right === "busy") {
      yield* reloads.request([change.ref], `surfaces changed: ${change.changed.join(", ")}`)
      owed.push(change.ref.identity)
    }
    yield* fingerprints.accept([change])
    yield* Effect.logInfo(
      state.right === "idle" || state.right === "busy" ? "surfaces changed: reload owed" : `surfaces changed: endpoint ${state.right}, nothing owed`
    ).pipe(Effect.annotateLogs({ endpoint: change.ref.identity, files: change.changed.join(",") }))
  }
  if (owed.length > 0) yield* applier.wake
  return owed
})

/**
 * Runs `pass` every `interval` for ever (failures are logged, the loop goes on).
 * @since 0.1.0
 * @category constructors
 */
export const run = (interval: Duration.DurationInput) =>
  Effect.forever(
    Effect.zipRight(
      pass.pipe(Effect.catchAll((e) => Effect.logError(`fingerprint pass failed: ${e.message}`))),
      Effect.sleep(interval)
    )
  )
