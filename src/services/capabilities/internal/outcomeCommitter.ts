/**
 * The recording of a joint's outcomes (EndpointCalls.ts): each call is recorded shortly after it
 * ends (at most `commitSpacing` later), its endpoint record (synced) then its log line, by one
 * committer that takes every outcome waiting, so calls ending close together share one write.
 * When the calls are over, also on an interruption, `finish` writes what is left and syncs the log.
 * @since 0.1.0
 */
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import type { InvalidFile } from "../../../schema/FileErrors.ts"
import type { EndpointOutcome } from "../../../schema/Outcome.ts"
import type { EndpointRecords } from "../EndpointRecords.ts"
import type { LifecycleLog } from "../LifecycleLog.ts"

/** The most a call's record waits after its end, so calls ending close together share a write. */
const commitSpacing = Duration.millis(200)

/**
 * Starts the committer of one joint, a child of the calling fiber: `offer` an ended call's
 * outcome, `finish` once the calls are over; `invalid` lists the invalid records files met.
 * @since 0.1.0
 * @category constructors
 */
export const startCommitter = (records: EndpointRecords["Type"], log: LifecycleLog["Type"]) =>
  Effect.gen(function*() {
    const ended = yield* Queue.unbounded<EndpointOutcome>()
    const invalid = new Map<string, InvalidFile>()
    const commit = (batch: ReadonlyArray<EndpointOutcome>) =>
      batch.length === 0 ? Effect.void : Effect.uninterruptible(Effect.flatMap(
        Effect.flatMap(DateTime.now, (now) => records.record(batch, DateTime.formatIso(now))),
        (found) => {
          for (const file of found) invalid.set(file.file, file)
          return log.write
        }
      ))
    const committer = yield* Effect.fork(Effect.forever(
      Queue.take(ended).pipe(
        Effect.flatMap((first) => Effect.map(Queue.takeAll(ended), (rest) => [first, ...rest])),
        Effect.flatMap(commit),
        Effect.zipRight(Effect.sleep(commitSpacing))
      )
    ))
    // The committer's failure (the state root cannot be written) fails the joint.
    const finish = Effect.gen(function*() {
      const stopped = yield* Fiber.interrupt(committer)
      if (Exit.isFailure(stopped) && !Exit.isInterrupted(stopped)) yield* Exit.failCause(stopped.cause)
      yield* commit([...yield* Queue.takeAll(ended)])
      yield* log.flush
    })
    return {
      offer: (outcome: EndpointOutcome) => Queue.offer(ended, outcome),
      finish,
      invalid: () => [...invalid.values()]
    }
  })
