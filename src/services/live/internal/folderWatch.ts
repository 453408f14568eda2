/**
 * One watched folder of the launch-file watch (LaunchFileWatch.ts): Node's `fs.watch` armed at
 * once, its events through a queue, closed when the fiber reading them ends.
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import { type FSWatcher, watch } from "node:fs"
import { dirname } from "node:path"

/**
 * A watch's events: a name in the watched folder (`undefined` when the system gave none), or its
 * failure.
 * @since 0.1.0
 * @category models
 */
export type Event = { readonly name: string | undefined } | { readonly error: unknown }

/**
 * An armed watch and its events.
 * @since 0.1.0
 * @category models
 */
export interface Armed {
  readonly watcher: FSWatcher
  readonly events: Queue.Queue<Event>
}

/**
 * Arms a watch on `path` now. Node's `fs.watch` has set the watch up when it returns; the
 * platform's `FileSystem.watch` sets it up inside its stream, with no sign of when, so a change
 * made between the check that follows a placement and the arming would be lost.
 * @since 0.1.0
 * @category constructors
 */
export const arm = (path: string): Effect.Effect<Armed, unknown> =>
  Effect.flatMap(Queue.unbounded<Event>(), (events) =>
    Effect.try({
      try: () => {
        // unsafe: Node calls back outside any fiber; an unbounded queue's offer never suspends.
        const watcher = watch(path, (_, name) => void Queue.unsafeOffer(events, { name: name ?? undefined }))
        // unsafe: as above, for the watcher's failure.
        watcher.on("error", (error) => void Queue.unsafeOffer(events, { error }))
        return { watcher, events }
      },
      catch: (error) => error
    }))

/**
 * Hands every event of an armed watch to `onEvent` until interrupted or failed; the watch is
 * closed then.
 * @since 0.1.0
 * @category constructors
 */
export const run = (armed: Armed, onEvent: (name: string | undefined) => Effect.Effect<void>): Effect.Effect<never, unknown> =>
  Effect.forever(Effect.flatMap(Queue.take(armed.events), (event) => "error" in event ? Effect.fail(event.error) : onEvent(event.name)))
    .pipe(Effect.ensuring(Effect.sync(() => armed.watcher.close())))

/**
 * The folder itself when it exists, else its nearest existing ancestor.
 * @since 0.1.0
 * @category getters
 */
export const nearestFolder = (fs: FileSystem.FileSystem, folder: string): Effect.Effect<string> =>
  Effect.flatMap(
    Effect.map(Effect.either(fs.stat(folder)), (info) => info._tag === "Right" && info.right.type === "Directory"),
    (exists) => exists || dirname(folder) === folder ? Effect.succeed(folder) : nearestFolder(fs, dirname(folder))
  )
