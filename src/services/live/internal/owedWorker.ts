/**
 * The owed-work worker (docs/capability-plugin-lifecycle.md, "Applying surfaces to a live
 * endpoint": owed reloads and removals carried out at Turn boundaries): `drain` applies one
 * endpoint's owed work, serialized per endpoint; `pass` drains every endpoint whose next attempt
 * is due (RetryBackoff.ts), in the worker if one runs; `start` runs the worker, a pass every
 * interval and on `wake`. A pass first recovers the record files that cannot be read (Reloads.ts):
 * each is replaced by one owing a reload again, or, naming no endpoint, logged once and left; the
 * other endpoints' work goes on either way.
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberMap from "effect/FiberMap"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import type { OwedRecord } from "../../../schema/Live.ts"
import { oneLine } from "../../../schema/OneLine.ts"
import { fieldRuleLine } from "../../../schema/ParseIssue.ts"
import type { EndpointHostShape } from "../EndpointHost.ts"
import type { makeRefs } from "../Endpoints.ts"
import type { makeOwedWork } from "../OwedWork.ts"
import { type EndpointKey, type InvalidOwedRecord, isDue, isOwed, keysOfIdentity, type Reloads } from "../../owed/Reloads.ts"

/**
 * The worker over the endpoint host, the owed-work store and the owed-work steps.
 * @since 0.1.0
 * @category internals
 */
export const makeOwedWorker = (deps: {
  readonly endpointHost: EndpointHostShape
  readonly reloads: Reloads["Type"]
  readonly refs: ReturnType<typeof makeRefs>
  readonly owedWork: ReturnType<typeof makeOwedWork>
  readonly serialized: (identity: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}) => {
  const { endpointHost, refs, reloads, serialized } = deps
  const { failed, finishRemoval, recordApplied, reloadOwed } = deps.owedWork
  let worker: { readonly fibers: FiberMap.FiberMap<string>; readonly signal: Queue.Queue<void> } | undefined

  const active = new Set<string>()
  /** One endpoint's owed work, per its record. */
  const apply = (key: EndpointKey, record: OwedRecord) =>
    Effect.gen(function*() {
      const ref = yield* refs.resolve(key)
      // The endpoint is gone (peer removed, runtime dropped): nothing is owed to it any more.
      if (Option.isNone(ref)) return yield* reloads.completeRemoval(key)
      if (record.removal !== undefined) return yield* finishRemoval(ref.value, record.removal.force === true)
      if (!isOwed(record)) return
      const s = yield* endpointHost.status(ref.value).pipe(Effect.catchAll((e) => failed(ref.value, "reload", e.message)))
      if (s === "asleep" || s === "stopped" || s === "foreign") {
        yield* reloads.settle(ref.value)
        return yield* Effect.logInfo(`owed reload settled: endpoint is ${s}`)
      }
      active.add(ref.value.identity)
      yield* Effect.ensuring(reloadOwed(ref.value), Effect.sync(() => active.delete(ref.value.identity)))
    }).pipe(Effect.annotateLogs(record.capability === undefined ? {} : { capability: record.capability }))

  const drain = (key: EndpointKey): Effect.Effect<void> =>
    serialized(`${key.runtime}-${key.personality}`)(
      // A reload this process ran and could not record is recorded first (OwedWork.ts).
      Effect.zipRight(
        recordApplied(key),
        Effect.flatMap(reloads.get(key), (record) => Option.isNone(record) ? Effect.void : apply(key, record.value))
      )
    ).pipe(
      // One line per attempt: a failed attempt's message says which, and when the next one is.
      Effect.catchAll((e) =>
        Effect.logWarning(e._tag === "EndpointError" && e.reason === "OwedWorkFailed" ? e.message : `owed work not applied: ${oneLine(e.message, 300)}`)
      ),
      Effect.annotateLogs({ endpoint: `${key.runtime}-${key.personality}` })
    )

  /** The invalid record files already logged, with the reason logged: each is logged once. */
  const reported = new Map<string, string>()

  /**
   * A record file that cannot be read: replaced, owing a reload again, for each endpoint its name
   * may belong to (`Reloads.recover` logs that); else logged once per file and reason, and left.
   */
  const recoverInvalid = (bad: InvalidOwedRecord) =>
    Effect.gen(function*() {
      let recovered = false
      for (const key of keysOfIdentity(bad.identity)) {
        if (Option.isNone(yield* refs.resolve(key))) continue
        recovered = (yield* reloads.recover(key)) || recovered
      }
      if (recovered) return reported.delete(bad.file)
      const line = `owed-work record ${bad.file} is invalid (${fieldRuleLine(bad)}) and names no endpoint of this root: left as it is`
      if (reported.get(bad.file) === line) return
      reported.set(bad.file, line)
      yield* Effect.logWarning(line)
    }).pipe(
      Effect.catchAll((e) => {
        const line = `owed-work record ${bad.file} is invalid (${fieldRuleLine(bad)}) and could not be replaced: ${oneLine(e.message, 300)}`
        return reported.get(bad.file) === line ? Effect.void : Effect.zipRight(
          Effect.sync(() => void reported.set(bad.file, line)),
          Effect.logWarning(line)
        )
      }),
      Effect.annotateLogs({ endpoint: bad.identity })
    )

  const pass = Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const scanned = yield* reloads.scan
    for (const file of reported.keys()) if (!scanned.invalid.some((bad) => bad.file === file)) reported.delete(file)
    yield* Effect.forEach(scanned.invalid, recoverInvalid, { discard: true })
    const owed = (scanned.invalid.length === 0 ? scanned.valid : yield* reloads.list).filter((record) => isDue(record, now))
    const w = worker
    if (w === undefined) return yield* Effect.forEach(owed, drain, { discard: true, concurrency: 4 })
    for (const record of owed) {
      yield* FiberMap.run(w.fibers, `${record.runtime}-${record.personality}`, drain(record), { onlyIfMissing: true })
    }
  })

  const wake = Effect.suspend(() => worker === undefined ? Effect.void : Queue.offer(worker.signal, undefined)).pipe(
    Effect.asVoid
  )

  const start = (interval: Duration.DurationInput) =>
    Effect.gen(function*() {
      const fibers = yield* FiberMap.make<string>()
      const signal = yield* Queue.sliding<void>(1)
      worker = { fibers, signal }
      yield* Effect.addFinalizer(() => Effect.sync(() => void (worker = undefined)))
      const loop = Effect.gen(function*() {
        for (;;) {
          yield* pass.pipe(Effect.catchAll((e) => Effect.logError(`owed-work pass failed: ${e.message}`)))
          yield* Effect.raceFirst(Queue.take(signal), Effect.sleep(interval))
        }
      })
      yield* Effect.forkScoped(loop)
    })

  return { drain, pass, start, wake, inFlight: () => [...active].sort() }
}
