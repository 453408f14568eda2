/**
 * A read of the files of some folders, made again only when one of the folders may have changed
 * (docs/live-application.md, "Fingerprints"): the daemon's endpoint list over `peers/`, the status
 * page's endpoints over the declarations, the peers and the endpoint records. With thousands of
 * documents, reading every one at each poll was most of an idle daemon's work.
 *
 * The files are read again when any of these holds (else the last answer is the answer, the same
 * value): an event of the watch on one of the folders since the last read (a file added, removed,
 * renamed over or edited in place); a folder's mtime differs from the last read's (what a watch set
 * up late would miss: an add, a remove, an atomic write; a folder created or removed); the watch of
 * an existing folder is not running (the system refused it, it ended: it is set up again at the next
 * ask, and meanwhile every ask reads, as without the watch); a folder's stat failed otherwise than
 * by its absence; `refresh` has passed since the last read (the safety net, as for the launch-read
 * files); the last read failed. A folder that does not exist needs no watch: its creation is a new
 * mtime at the next ask.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberMap from "effect/FiberMap"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

/** A folder's stat as an ask sees it: its mtime, `absent`, or `unknown` (the stat failed otherwise: read). */
type Seen = number | "absent" | "unknown"

/**
 * `read`, answered from its last result while none of `folders` (absolute paths) may have changed
 * (see the module comment). The returned effect is the answer now.
 * @since 0.1.0
 * @category constructors
 */
export const make = <A, E, R>(
  read: Effect.Effect<A, E, R>,
  folders: ReadonlyArray<string>,
  refresh: Duration.DurationInput
): Effect.Effect<Effect.Effect<A, E, R>, never, FileSystem.FileSystem | Scope.Scope> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const watches = yield* FiberMap.make<string, void, never>()
    const every = Duration.toMillis(Duration.decode(refresh))
    let changed = true
    /** Folder → the token of its running watch (a replaced watch that ends clears nothing). */
    const watching = new Map<string, object>()
    let last: { readonly value: A; readonly seen: ReadonlyArray<Seen>; readonly at: number } | undefined

    /** The watch of one folder: an event marks the answer changed; a watch that ends leaves it to the next ask. */
    const watch = (folder: string, token: object) =>
      fs.watch(folder).pipe(
        Stream.runForEach(() => Effect.sync(() => void (changed = true))),
        Effect.ignore,
        Effect.ensuring(Effect.sync(() => {
          if (watching.get(folder) !== token) return
          watching.delete(folder)
          changed = true
        }))
      )

    const seenOf = (folder: string): Effect.Effect<Seen> =>
      Effect.map(Effect.either(fs.stat(folder)), (info): Seen =>
        info._tag === "Right"
          ? Option.getOrElse(Option.map(info.right.mtime, (d): Seen => d.getTime()), (): Seen => "unknown")
          : info.left._tag === "SystemError" && info.left.reason === "NotFound"
          ? "absent"
          : "unknown")

    return Effect.gen(function*() {
      const seen = yield* Effect.forEach(folders, seenOf)
      let stale = changed || last === undefined
      for (let i = 0; i < folders.length; i++) {
        const folder = folders[i]!
        if (seen[i] === "unknown" || seen[i] !== last?.seen[i]) stale = true
        if (seen[i] === "absent" || watching.has(folder)) continue
        // An existing folder not watched (yet, or any more): watched from now on, read this time.
        const token = {}
        watching.set(folder, token)
        stale = true
        yield* FiberMap.run(watches, folder, watch(folder, token))
      }
      const now = yield* Clock.currentTimeMillis
      if (!stale && last !== undefined && now - last.at < every) return last.value
      // Cleared before reading: an event during the read marks the answer changed again.
      changed = false
      const value = yield* Effect.tapError(read, () => Effect.sync(() => void (changed = true)))
      last = { value, seen, at: now }
      return value
    })
  })
