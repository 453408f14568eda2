/**
 * The endpoint list of the daemon (docs/live-application.md, "Fingerprints"): every endpoint of the
 * state root, as `makeRefs(...).all` reads it, read again only when the `peers/` folder may have
 * changed. The daemon asks for the list at every poll (to host new endpoints, to watch their
 * launch-read folders); with thousands of peers, reading every peer file each time was most of an
 * idle daemon's work.
 *
 * The peer files are read again when any of these holds (else the last list is the answer, the
 * same array): an event of the watch on `peers/` since the last read (a peer file added, removed,
 * renamed over or edited in place); the folder's mtime differs from the last read's (what a watch
 * set up late would miss: an add, a remove, an atomic write); the watch is not running (the folder
 * did not exist, the system refused it: it is set up again at the next ask, and meanwhile every ask
 * reads, as without the watch); `refresh` has passed since the last read (the safety net, as for the
 * launch-read files); the last read failed.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberHandle from "effect/FiberHandle"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { EndpointRef } from "./EndpointHost.ts"

/**
 * A list of every endpoint, read again only when `folder` may have changed (see the module
 * comment): `read` is how the list is read, `folder` the absolute path of `peers/`. The returned
 * effect is the list now.
 * @since 0.1.0
 * @category constructors
 */
export const make = <E>(
  read: Effect.Effect<ReadonlyArray<EndpointRef>, E>,
  folder: string,
  refresh: Duration.DurationInput
): Effect.Effect<Effect.Effect<ReadonlyArray<EndpointRef>, E>, never, FileSystem.FileSystem | Scope.Scope> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const handle = yield* FiberHandle.make<void, never>()
    const every = Duration.toMillis(Duration.decode(refresh))
    let changed = true
    let watching = false
    let last: { readonly refs: ReadonlyArray<EndpointRef>; readonly mtime: number; readonly at: number } | undefined

    /** The watch of the folder: an event marks the list changed; a watch that ends leaves it to the next ask. */
    const watch = fs.watch(folder).pipe(
      Stream.runForEach(() => Effect.sync(() => void (changed = true))),
      Effect.ignore,
      Effect.ensuring(Effect.sync(() => {
        watching = false
        changed = true
      }))
    )

    const mtimeOf = Effect.map(
      Effect.either(fs.stat(folder)),
      (info) => info._tag === "Right" ? Option.getOrElse(Option.map(info.right.mtime, (d) => d.getTime()), () => -1) : -1
    )

    return Effect.gen(function*() {
      if (!watching) {
        watching = true
        yield* FiberHandle.run(handle, watch, { onlyIfMissing: true })
      }
      const mtime = yield* mtimeOf
      const now = yield* Clock.currentTimeMillis
      if (last !== undefined && !changed && watching && last.mtime === mtime && mtime !== -1 && now - last.at < every) {
        return last.refs
      }
      // Cleared before reading: an event during the read marks the list changed again.
      changed = false
      const refs = yield* Effect.tapError(read, () => Effect.sync(() => void (changed = true)))
      last = { refs, mtime, at: now }
      return refs
    })
  })
