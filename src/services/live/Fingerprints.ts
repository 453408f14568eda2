/**
 * Fingerprints of launch-read surface files (docs/capability-plugin-lifecycle.md, "Writers outside
 * the core": "the core records what each launch read — a fingerprint of the endpoint's launch-read
 * surface files — and the daemon compares it every few seconds. A difference owes one reload";
 * "A hosting launched before this mechanism has no baseline: its current state is adopted as the
 * baseline").
 *
 * - `record` stores what a launch (or reload) reads now: per file, its content hash (sha256) or
 *   its absence, in `$CITY_ROOT/state/fingerprints/<identity>.json` (atomic write; one writer per
 *   endpoint at a time, so no root lock).
 * - `poll` compares: stat first (size, mtime and inode unchanged since the last look → the file is
 *   unchanged, no read); a changed stat is settled by the content hash, so rewriting identical
 *   bytes owes nothing. A file appearing or disappearing (an opencode fragment) is a difference.
 *   An endpoint without a baseline adopts its current state and owes nothing.
 * - `accept` makes the observed state the baseline. The caller requests the reload first and
 *   accepts after, so a crash in between owes the reload again (coalesced) rather than losing it;
 *   and one difference owes exactly one request.
 * - Host-global files (`~/.codex/config.toml`, `~/.claude.json`) are never fingerprinted: they are
 *   not launch-read files of a profile (schema/LiveProfile.ts).
 *
 * Reading: every look goes through the one file reader (`files/TextFile.ts`: `inspect` is the stat,
 * `readCheckedBytes` the bounded read of the content hash), on the platform `FileSystem`, so
 * nothing on the daemon's path blocks its event loop and a test layer can replace the disk. A file
 * the reader refuses (a FIFO, a device, a folder, over the 16 MiB cap of a launch-read surface
 * file) is fingerprinted as **absent**: the stored record keeps its two states (present with a
 * hash, absent), and a refused file is one the core cannot fingerprint, so a file that becomes
 * refusable owes one reload (like one removed) and is never opened or read whole. The refusal is
 * logged once, when the file turns refused.
 *
 * The stat is the platform's: `mtime` is a `Date`, whole milliseconds, so `mtimeMs` holds whole
 * milliseconds (a baseline written with a finer one differs once, is settled by its hash, and
 * owes nothing). Size, mtime and inode together decide "unchanged": an atomic rewrite (temp file
 * and rename) is a new inode, an edit in place changes the size or the mtime (an edit of the same
 * size within the same millisecond as the last look is the blind spot of any stat comparison,
 * and is caught by the next edit). The stats of a poll run a few at a time (`statConcurrency`);
 * `bench/fingerprint.bench.ts` measures a poll against a plain loop of the same stats.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"
import type { StateRootError } from "../../schema/CapabilityErrors.ts"
import type { FileRefused } from "../../schema/FileErrors.ts"
import { Fingerprint, type FileFingerprint } from "../../schema/Live.ts"
import { RuntimeProfiles } from "../capabilities/RuntimeProfiles.ts"
import * as TextFile from "../files/TextFile.ts"
import { StateRoot } from "../root/StateRoot.ts"
import type { EndpointRef } from "./EndpointHost.ts"
import { filesOf, type Resolved, resolveTemplates } from "./LaunchFiles.ts"
import { layout } from "../root/CityRoot.ts"

/**
 * The folder of the fingerprints, relative to the root.
 * @since 0.1.0
 * @category constants
 */
export const fingerprintsDir = layout.fingerprints

/**
 * An endpoint whose launch-read files differ from its baseline, with what was observed.
 * @since 0.1.0
 * @category models
 */
export interface Change {
  /** The endpoint. */
  readonly ref: EndpointRef
  /** What was observed now of each launch-read file, by path. */
  readonly files: Readonly<Record<string, FileFingerprint>>
  /** The files that differ (added, removed or edited). */
  readonly changed: ReadonlyArray<string>
}

/**
 * Fingerprints of launch-read surface files: recorded at launch, compared by the daemon's watcher.
 * @since 0.1.0
 * @category tags
 */
export class Fingerprints extends Context.Tag("effect-city/Fingerprints")<
  Fingerprints,
  {
    readonly record: (ref: EndpointRef) => Effect.Effect<void, StateRootError>
    readonly poll: (
      refs: ReadonlyArray<EndpointRef>,
      options?: { readonly byContent?: boolean }
    ) => Effect.Effect<ReadonlyArray<Change>, StateRootError>
    readonly accept: (changes: ReadonlyArray<Change>) => Effect.Effect<void, StateRootError>
    /** Forgets the in-memory baseline of an endpoint: the next poll reads the stored one again. */
    readonly forget: (ref: EndpointRef) => Effect.Effect<void>
  }
>() {}

const absent: FileFingerprint = { absent: true }

/**
 * How many stats of one poll are in flight at once: enough to keep libuv's pool busy, few enough
 * that a poll over thousands of files does not queue them all at once.
 * @since 0.1.0
 * @category constants
 */
export const statConcurrency = 16

/** What one stat shows of a file: a regular file within the cap (its stat), absent, or refused. */
const look = (file: string) => Effect.either(TextFile.inspect(file, TextFile.kinds.launchFile))

const mtimeOf = (info: FileSystem.File.Info) => Option.match(info.mtime, { onNone: () => -1, onSome: (d) => d.getTime() })
const inoOf = (info: FileSystem.File.Info) => Option.getOrElse(info.ino, () => -1)

/** Whether a stat shows what `fingerprint` recorded: the same regular file, or no regular file for an absent one. */
const sameStat = (
  fingerprint: FileFingerprint | undefined,
  seen: Either.Either<FileSystem.File.Info, unknown>
): boolean => {
  if (fingerprint === undefined) return false
  if (Either.isLeft(seen) || seen.right.type !== "File") return "absent" in fingerprint
  const info = seen.right
  return !("absent" in fingerprint) && fingerprint.size === Number(info.size) && fingerprint.mtimeMs === mtimeOf(info) &&
    Option.isSome(info.ino) && fingerprint.ino === info.ino.value
}

/**
 * The current fingerprint of one file; `previous` spares the read when its stat is unchanged. A
 * file the reader refuses is absent (logged when it was not absent before).
 */
const observe = (file: string, previous: FileFingerprint | undefined): Effect.Effect<FileFingerprint, never, FileSystem.FileSystem> => {
  const refused = (error: FileRefused) =>
    previous !== undefined && "absent" in previous
      ? Effect.succeed(absent)
      : Effect.as(Effect.logWarning(`not fingerprinted, taken as absent: ${error.message}`), absent)
  return Effect.flatMap(look(file), (seen): Effect.Effect<FileFingerprint, never, FileSystem.FileSystem> => {
    if (Either.isLeft(seen)) return refused(seen.left)
    if (Option.isNone(seen.right)) return Effect.succeed(absent)
    const info = seen.right.value
    if (previous !== undefined && sameStat(previous, Either.right(info))) return Effect.succeed(previous)
    return TextFile.readCheckedBytes(file, TextFile.kinds.launchFile, info).pipe(
      Effect.map(Option.match({
        onNone: () => absent,
        onSome: (bytes): FileFingerprint => ({
          hash: createHash("sha256").update(bytes).digest("hex"),
          size: Number(info.size),
          mtimeMs: mtimeOf(info),
          ino: inoOf(info)
        })
      })),
      Effect.catchAll(refused)
    )
  })
}

const sameContent = (a: FileFingerprint | undefined, b: FileFingerprint | undefined) =>
  a === undefined || b === undefined
    ? a === b
    : "absent" in a || "absent" in b
    ? "absent" in a && "absent" in b
    : a.hash === b.hash

const decode = Schema.decodeUnknownEither(Schema.parseJson(Fingerprint))

/** One endpoint in memory: its baseline per file and its resolved templates. */
interface Entry {
  readonly baseline: Map<string, FileFingerprint>
  resolved: Resolved | undefined
}

/**
 * Builds the Fingerprints service on the state root and the host configuration.
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Fingerprints["Type"], never, StateRoot | RuntimeProfiles | FileSystem.FileSystem> = Effect.gen(function*() {
  const state = yield* StateRoot
  const config = (yield* RuntimeProfiles).config
  const fs = yield* FileSystem.FileSystem
  const context = yield* Effect.context<FileSystem.FileSystem>()
  const entries = new Map<string, Entry>()
  const file = (ref: EndpointRef) => `${fingerprintsDir}/${ref.identity}.json`

  const pathsOf = (ref: EndpointRef, entry: Entry | undefined) => {
    const resolved = resolveTemplates(config, ref, entry?.resolved)
    if (entry !== undefined) entry.resolved = resolved
    return filesOf(resolved, ref)
  }

  const observeAll = (ref: EndpointRef, entry: Entry | undefined) =>
    Effect.suspend(() =>
      Effect.flatMap(pathsOf(ref, entry), (paths) =>
        Effect.map(
          Effect.forEach(paths, (path) => observe(path, entry?.baseline.get(path)), { concurrency: statConcurrency }),
          (observed) => new Map(paths.map((path, i) => [path, observed[i] ?? absent]))
        ))
    ).pipe(Effect.provide(context))

  /** The slow path, once a stat differs: every file observed, differences by content. */
  const differences = (before: Map<string, FileFingerprint>, now: ReadonlyMap<string, FileFingerprint>) => {
    const changed: Array<string> = []
    for (const [path, b] of now) {
      const a = before.get(path)
      if (a === b) continue
      // A path that joined the set while absent is no difference.
      if ((a === undefined || "absent" in a) && "absent" in b) continue
      if (!sameContent(a, b)) changed.push(path)
      else before.set(path, b) // same bytes, new stat: no read next time
    }
    for (const [path, a] of before) {
      if (!now.has(path) && !("absent" in a)) changed.push(path) // a file that left the set
    }
    return changed
  }

  /**
   * Which of these endpoints have files that all show, by one `stat` each, the stat their baseline
   * recorded (no file opened). Only a regular file is compared; anything else matches an absent
   * baseline, and what the reader would refuse is settled by the slow path. The stats of all the
   * endpoints run as one list, a few at a time.
   */
  const unchanged = (known: ReadonlyArray<readonly [EndpointRef, Entry]>) =>
    Effect.gen(function*() {
      const paths = yield* Effect.forEach(known, ([ref, entry]) => pathsOf(ref, entry))
      const flat = paths.flat()
      const seen = yield* Effect.forEach(flat, (path) => Effect.either(fs.stat(path)), { concurrency: statConcurrency })
      let at = 0
      return known.map(([, entry], i) => {
        const own = paths[i] ?? []
        const first = at
        at += own.length
        return own.length === entry.baseline.size &&
          own.every((path, k) => sameStat(entry.baseline.get(path), seen[first + k] ?? Either.left(undefined)))
      })
    })

  /** The slow path for an endpoint whose stats differ: its files observed, compared by content. */
  const changeOf = (ref: EndpointRef, entry: Entry) =>
    Effect.map(observeAll(ref, entry), (now): Change | undefined => {
      const changed = differences(entry.baseline, now)
      return changed.length === 0 ? undefined : { ref, files: Object.fromEntries(now), changed }
    })

  /** Compares one endpoint with its baseline: stats first, content only when a stat differs. */
  const compare = (ref: EndpointRef, entry: Entry) =>
    Effect.flatMap(unchanged([[ref, entry]]), ([same]) => same === true ? Effect.succeed(undefined) : changeOf(ref, entry))

  const store = (ref: EndpointRef, files: ReadonlyMap<string, FileFingerprint>) =>
    Effect.gen(function*() {
      const recorded_at = DateTime.formatIso(yield* DateTime.now)
      yield* state.writeJson(file(ref), { schema: 1, recorded_at, files: Object.fromEntries(files) } satisfies Fingerprint)
      entries.set(ref.identity, { baseline: new Map(files), resolved: entries.get(ref.identity)?.resolved })
    })

  /** The stored baseline into memory, or adoption of the current state when there is none. */
  const loadOrAdopt = (ref: EndpointRef) =>
    Effect.gen(function*() {
      const text = yield* state.readText(file(ref))
      const stored = Option.flatMap(text, (t) => Either.getRight(decode(t)))
      if (Option.isSome(stored)) {
        entries.set(ref.identity, { baseline: new Map(Object.entries(stored.value.files)), resolved: undefined })
        return true
      }
      yield* store(ref, yield* observeAll(ref, undefined))
      return false
    })

  const record = (ref: EndpointRef) =>
    Effect.flatMap(Effect.suspend(() => observeAll(ref, entries.get(ref.identity))), (files) => store(ref, files))

  const poll = (refs: ReadonlyArray<EndpointRef>, options?: { readonly byContent?: boolean }) =>
    Effect.gen(function*() {
      // The endpoints in memory are compared by stat, a few stats at a time; those whose stats
      // differ are read after, and the endpoints not in memory are loaded (or adopted).
      const missing: Array<EndpointRef> = []
      const known: Array<readonly [EndpointRef, Entry]> = []
      for (const ref of refs) {
        const entry = entries.get(ref.identity)
        if (entry === undefined) missing.push(ref)
        else known.push([ref, entry])
      }
      // By content: a watch saw an event, and a write within the same millisecond keeps size and mtime.
      const same = options?.byContent === true ? known.map(() => false) : yield* unchanged(known)
      const changes: Array<Change> = []
      for (const [ref, entry] of known.filter((_, i) => same[i] !== true)) {
        const change = yield* changeOf(ref, entry)
        if (change !== undefined) changes.push(change)
      }
      for (const ref of missing) {
        if (!(yield* loadOrAdopt(ref))) continue // adopted: nothing owed
        const entry = entries.get(ref.identity)
        const change = entry === undefined
          ? undefined
          : yield* (options?.byContent === true ? changeOf(ref, entry) : compare(ref, entry))
        if (change !== undefined) changes.push(change)
      }
      return changes
    }).pipe(Effect.provide(context))

  const accept = (changes: ReadonlyArray<Change>) =>
    Effect.forEach(changes, (c) => store(c.ref, new Map(Object.entries(c.files))), { discard: true })

  const forget = (ref: EndpointRef) => Effect.sync(() => void entries.delete(ref.identity))

  return Fingerprints.of({ record, poll, accept, forget })
})

/**
 * The Fingerprints service as a layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(Fingerprints, make)
