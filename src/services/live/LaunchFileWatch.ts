/**
 * Watching the launch-read files (docs/live-application.md, "Fingerprints"): an event in a folder
 * that holds an endpoint's launch-read file marks that endpoint, so the fingerprint watcher compares
 * it at once rather than at its next poll.
 *
 * Folders are watched, not files: an editor's save by rename-over gives the file a new inode, which
 * a watch on the file would lose. Each watched folder's parent is watched too, for the folder's own
 * name: a folder deleted and created again, or replaced by a rename, is watched afresh (the old
 * watch sees nothing of the new folder) and its endpoints are marked. A folder that does not exist
 * yet is waited for at its nearest existing ancestor. An event is a signal only: what changed is
 * settled by the fingerprints, never by the event's kind. A watch is Node's `fs.watch`, armed
 * before the check that follows it (see `arm`); folders are looked at through the platform
 * `FileSystem`. What watching misses (a network file system, a watch the system refuses when its
 * inotify limit is reached) is left to the poll, the slow safety net; a watch that cannot be set
 * up is logged once and tried again at the next `set`.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as FiberMap from "effect/FiberMap"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import { dirname, sep } from "node:path"
import type { EndpointRef } from "./EndpointHost.ts"
import * as FolderWatch from "./internal/folderWatch.ts"
import { makeMarks } from "./internal/marks.ts"
import type { Place } from "./LaunchFiles.ts"

/**
 * The watch of a set of endpoints' launch-read folders.
 * @since 0.1.0
 * @category models
 */
export interface LaunchFileWatch {
  /** Watches exactly these endpoints from now on, each with its places (`LaunchFiles.placesOf`). */
  readonly set: (endpoints: ReadonlyArray<readonly [EndpointRef, ReadonlyArray<Place>]>) => Effect.Effect<void>
  /** Waits until an endpoint is marked, then takes every endpoint marked since the last take. */
  readonly take: Effect.Effect<ReadonlyArray<EndpointRef>>
}

/** A change to what is watched: a folder placed (newly wanted, or its watch lost), moved (an event named it), released. */
type Change =
  | { readonly _tag: "Placed"; readonly folder: string }
  | { readonly _tag: "Moved"; readonly folder: string }
  | { readonly _tag: "Released"; readonly folder: string }

/** The first path component of `folder` below `parent` (`parent` is an ancestor of `folder`). */
const nextBelow = (parent: string, folder: string): string => {
  const rest = folder.slice(parent === sep ? 1 : parent.length + 1)
  const at = rest.indexOf(sep)
  return at === -1 ? rest : rest.slice(0, at)
}

/**
 * A watch over the endpoints `set` names, for the life of the current Scope.
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<LaunchFileWatch, never, FileSystem.FileSystem | Scope.Scope> = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const fibers = yield* FiberMap.make<string>()
  /** Changes to what is watched, applied one at a time by one fiber. */
  const structure = yield* Queue.unbounded<Change>()
  const endpoints = new Map<string, EndpointRef>()
  const { mark, take } = yield* makeMarks(endpoints)
  /** Wanted folder → the endpoints with launch-read files there, and which names are theirs. */
  const wanted = new Map<string, Map<string, (name: string) => boolean>>()
  /** Wanted folder → the paths watched for it: its anchor (itself, or its nearest existing ancestor) and the anchor's parent. */
  const watchedFor = new Map<string, ReadonlyArray<string>>()
  /** Watched path → the wanted folders that watch it. */
  const users = new Map<string, Set<string>>()
  const refused = new Set<string>()
  /** Watched paths whose watch ended or was refused: set up again at the next `set`. */
  const lost = new Set<string>()
  /** The list of the last `set`: given the same array again, only the lost watches are set up again. */
  let previous: ReadonlyArray<readonly [EndpointRef, ReadonlyArray<Place>]> | undefined

  const markFolder = (folder: string) => mark(wanted.get(folder)?.keys() ?? [])

  /** An event in a watched path, naming `name` in it (`undefined` when the system gave no name: every name). */
  const onEvent = (path: string, name: string | undefined) =>
    Effect.suspend(() => {
      const touched: Array<string> = []
      const moved: Array<string> = []
      for (const folder of users.get(path) ?? []) {
        if (folder === path) {
          for (const [identity, matches] of wanted.get(folder) ?? []) if (name === undefined || matches(name)) touched.push(identity)
        } else if (name === undefined || nextBelow(path, folder) === name) {
          moved.push(folder)
        }
      }
      return Effect.zipRight(
        mark(touched),
        Effect.forEach(moved, (folder) => Queue.offer(structure, { _tag: "Moved", folder }), { discard: true })
      )
    })

  const refuse = (path: string, cause: unknown) =>
    Effect.gen(function*() {
      lost.add(path)
      if (!refused.has(path)) {
        refused.add(path)
        yield* Effect.logDebug(`launch-read files not watched, left to the poll: ${path}: ${String(cause)}`)
      }
      yield* Effect.forEach([...(users.get(path) ?? [])], markFolder, { discard: true })
    })

  /** The events of an armed watch until interrupted; a failed watch marks its folders, is logged once, and is set up again at the next `set`. */
  const consume = (path: string, armed: FolderWatch.Armed) =>
    Effect.catchAll(FolderWatch.run(armed, (name) => onEvent(path, name)), (error) => refuse(path, error))

  const anchorOf = (folder: string) => FolderWatch.nearestFolder(fs, folder)

  /** Stops watching `paths` for `folder`; a path no folder needs any more is no longer watched. */
  const unwatch = (folder: string, paths: ReadonlyArray<string>) =>
    Effect.forEach(paths, (path) => {
      const set = users.get(path)
      set?.delete(folder)
      if (set !== undefined && set.size > 0) return Effect.void
      users.delete(path)
      return FiberMap.remove(fibers, path)
    }, { discard: true })

  const release = (folder: string) =>
    Effect.zipRight(unwatch(folder, watchedFor.get(folder) ?? []), Effect.sync(() => void watchedFor.delete(folder)))

  /**
   * Finds where a wanted folder is watched from now, watches it there, and marks its endpoints. The
   * new paths are watched before the old ones are let go, so a path both need is never unwatched.
   */
  const place = (folder: string, moved: boolean): Effect.Effect<void> =>
    Effect.gen(function*() {
      if (!wanted.has(folder)) return yield* release(folder)
      const anchor = yield* anchorOf(folder)
      const paths = dirname(anchor) === anchor ? [anchor] : [anchor, dirname(anchor)]
      const before = watchedFor.get(folder) ?? []
      watchedFor.set(folder, paths)
      for (const path of paths) {
        const set = users.get(path) ?? new Set<string>()
        set.add(folder)
        users.set(path, set)
        refused.delete(path)
        lost.delete(path)
        // A folder that moved is watched afresh: it may be a new one under the old name. The watch
        // is armed before the folder's endpoints are marked below, so nothing falls between.
        if (moved && path === folder || !(yield* FiberMap.has(fibers, path))) {
          const armed = yield* Effect.either(FolderWatch.arm(path))
          if (armed._tag === "Left") yield* refuse(path, armed.left)
          else yield* FiberMap.run(fibers, path, consume(path, armed.right))
        }
      }
      yield* unwatch(folder, before.filter((path) => !paths.includes(path)))
      yield* markFolder(folder)
      // A new folder under the old name: the wanted folders inside it are new too.
      if (moved && anchor === folder) {
        const inside = [...wanted.keys()].filter((other) => other.startsWith(folder + sep))
        yield* Effect.forEach(inside, (other) => place(other, true), { discard: true })
      }
    })

  const apply = (change: Change): Effect.Effect<void> =>
    change._tag === "Released" ? release(change.folder) : place(change.folder, change._tag === "Moved")

  yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(structure), apply)))

  const set = (list: ReadonlyArray<readonly [EndpointRef, ReadonlyArray<Place>]>) =>
    Effect.gen(function*() {
      // A watch that ended or was refused is tried again.
      const retried = [...lost].flatMap((path) => [...(users.get(path) ?? [])].map((folder): Change => ({ _tag: "Placed", folder })))
      lost.clear()
      if (list === previous) return yield* Queue.offerAll(structure, retried)
      previous = list
      const next = new Map<string, Map<string, (name: string) => boolean>>()
      endpoints.clear()
      for (const [ref, places] of list) {
        endpoints.set(ref.identity, ref)
        for (const { folder, matches } of places) {
          const own = next.get(folder) ?? new Map<string, (name: string) => boolean>()
          own.set(ref.identity, matches)
          next.set(folder, own)
        }
      }
      const gone = [...wanted.keys()].filter((folder) => !next.has(folder))
      const added = [...next.keys()].filter((folder) => !wanted.has(folder))
      wanted.clear()
      for (const [folder, own] of next) wanted.set(folder, own)
      yield* Queue.offerAll(structure, [
        ...gone.map((folder): Change => ({ _tag: "Released", folder })),
        ...added.map((folder): Change => ({ _tag: "Placed", folder })),
        ...retried
      ])
    })

  return { set, take }
})
