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
 * - `poll` compares: stat first (size, mtime, ctime, inode unchanged since the last look → the
 *   file is unchanged, no read); a changed stat is settled by the content hash, so rewriting
 *   identical bytes owes nothing. A file appearing or disappearing (an opencode fragment) is a
 *   difference. An endpoint without a baseline adopts its current state and owes nothing.
 * - `accept` makes the observed state the baseline. The caller requests the reload first and
 *   accepts after, so a crash in between owes the reload again (coalesced) rather than losing it;
 *   and one difference owes exactly one request.
 * - Host-global files (`~/.codex/config.toml`, `~/.claude.json`) are never fingerprinted: they are
 *   not launch-read files of a profile (schema/LiveProfile.ts).
 *
 * Reading: the content hash reads the file through the one file reader (`files/TextFile.ts`,
 * asynchronous, the launch-read surface cap of 16 MiB). A file the reader refuses (a FIFO, a
 * device, a folder, over the cap) is fingerprinted as **absent**: the stored record keeps its
 * two states (present with a hash, absent), and a refused file is one the core cannot fingerprint,
 * so a file that becomes refusable owes one reload (like one removed) and is never opened or read
 * whole. The refusal is logged once, when the file turns refused.
 *
 * The stat comparison stays synchronous (`statSync`): a stat never opens the file, so a FIFO or
 * a device cannot block it or be read by it, and one poll covers every endpoint every few seconds,
 * which `bench/fingerprint.bench.ts` holds to ≤ 1.5× a plain `statSync` loop. The platform's
 * asynchronous stat measured 10-15× that loop over 2,000 files, and its `mtime` is a `Date`
 * (whole milliseconds), coarser than the `mtimeMs` the baselines hold.
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"
import { statSync } from "node:fs"
import type { StateError } from "../../schema/CapabilityErrors.ts"
import { Fingerprint, type FileFingerprint } from "../../schema/Live.ts"
import { Host } from "../capabilities/Host.ts"
import * as TextFile from "../files/TextFile.ts"
import { StateRoot } from "../capabilities/StateRoot.ts"
import type { EndpointRef } from "./EndpointHost.ts"
import { filesOf, type Resolved, resolveTemplates } from "./LaunchFiles.ts"

/**
 * The folder of the fingerprints, relative to the root.
 * @since 0.1.0
 * @category constants
 */
export const fingerprintsDir = "state/fingerprints"

/**
 * An endpoint whose launch-read files differ from its baseline, with what was observed.
 * @since 0.1.0
 * @category model
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
 * @category services
 */
export class Fingerprints extends Context.Tag("effect-city/Fingerprints")<
  Fingerprints,
  {
    readonly record: (ref: EndpointRef) => Effect.Effect<void, StateError>
    readonly poll: (refs: ReadonlyArray<EndpointRef>) => Effect.Effect<ReadonlyArray<Change>, StateError>
    readonly accept: (changes: ReadonlyArray<Change>) => Effect.Effect<void, StateError>
    /** Forgets the in-memory baseline of an endpoint: the next poll reads the stored one again. */
    readonly forget: (ref: EndpointRef) => Effect.Effect<void>
  }
>() {}

const absent: FileFingerprint = { absent: true }

/**
 * The current fingerprint of one file; `previous` spares the read when its stat is unchanged. A
 * file the reader refuses is absent (logged when it was not absent before).
 */
const observe = (file: string, previous: FileFingerprint | undefined): Effect.Effect<FileFingerprint, never, FileSystem.FileSystem> =>
  Effect.suspend(() => {
    const stat = statSync(file, { throwIfNoEntry: false, bigint: false })
    if (stat === undefined || !stat.isFile()) return Effect.succeed(absent)
    if (
      previous !== undefined && !("absent" in previous) && previous.size === stat.size &&
      previous.mtimeMs === stat.mtimeMs && previous.ino === stat.ino
    ) return Effect.succeed(previous)
    return TextFile.readBytes(file, TextFile.kinds.launchFile).pipe(
      Effect.map(Option.match({
        onNone: () => absent,
        onSome: (bytes): FileFingerprint => ({
          hash: createHash("sha256").update(bytes).digest("hex"),
          size: stat.size,
          mtimeMs: stat.mtimeMs,
          ino: stat.ino
        })
      })),
      Effect.catchAll((refused) =>
        previous !== undefined && "absent" in previous
          ? Effect.succeed(absent)
          : Effect.as(Effect.logWarning(`not fingerprinted, taken as absent: ${refused.message}`), absent)
      )
    )
  })

const sameContent = (a: FileFingerprint | undefined, b: FileFingerprint | undefined) =>
  a === undefined || b === undefined
    ? a === b
    : "absent" in a || "absent" in b
    ? "absent" in a && "absent" in b
    : a.hash === b.hash

const decode = Schema.decodeUnknownEither(Schema.parseJson(Fingerprint))

/**
 * The fast path's view of a baseline: the stat fields per path in flat arrays (`ino` -1 for an
 * absent file), valid while the endpoint's path list is the same array and the baseline unchanged.
 */
interface Stats {
  readonly paths: ReadonlyArray<string>
  readonly complete: boolean
  readonly size: Float64Array
  readonly mtimeMs: Float64Array
  readonly ino: Float64Array
}

const statsOf = (paths: ReadonlyArray<string>, before: ReadonlyMap<string, FileFingerprint>): Stats => {
  const size = new Float64Array(paths.length)
  const mtimeMs = new Float64Array(paths.length)
  const ino = new Float64Array(paths.length)
  let complete = paths.length === before.size
  paths.forEach((path, i) => {
    const fp = before.get(path)
    if (fp === undefined) complete = false
    else if ("absent" in fp) ino[i] = -1
    else {
      size[i] = fp.size
      mtimeMs[i] = fp.mtimeMs
      ino[i] = fp.ino
    }
  })
  return { paths, complete, size, mtimeMs, ino }
}

/** One endpoint in memory: its baseline per file, its resolved templates, its fast view. */
interface Entry {
  readonly baseline: Map<string, FileFingerprint>
  resolved: Resolved | undefined
  stats: Stats | undefined
}

/**
 * Builds the Fingerprints service on the state root and the host configuration.
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Fingerprints["Type"], never, StateRoot | Host | FileSystem.FileSystem> = Effect.gen(function*() {
  const state = yield* StateRoot
  const config = (yield* Host).config
  const context = yield* Effect.context<FileSystem.FileSystem>()
  const entries = new Map<string, Entry>()
  const file = (ref: EndpointRef) => `${fingerprintsDir}/${ref.identity}.json`

  const pathsOf = (ref: EndpointRef, entry: Entry | undefined) => {
    const resolved = resolveTemplates(config, ref, entry?.resolved)
    if (entry !== undefined) entry.resolved = resolved
    return filesOf(resolved, ref)
  }

  const observeAll = (ref: EndpointRef, entry: Entry | undefined) =>
    Effect.suspend(() => {
      const paths = pathsOf(ref, entry)
      return Effect.map(
        Effect.forEach(paths, (path) => observe(path, entry?.baseline.get(path))),
        (observed) => new Map(paths.map((path, i) => [path, observed[i] ?? absent]))
      )
    }).pipe(Effect.provide(context))

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
   * Whether one endpoint's files all have the stat its baseline recorded; synchronous: one
   * `statSync` per file (no file is opened).
   */
  const unchanged = (ref: EndpointRef, entry: Entry): boolean => {
    const paths = pathsOf(ref, entry)
    let fast = entry.stats
    if (fast === undefined || fast.paths !== paths) fast = entry.stats = statsOf(paths, entry.baseline)
    let same = fast.complete
    for (let i = 0; same && i < paths.length; i++) {
      const stat = statSync(paths[i] ?? "", { throwIfNoEntry: false })
      same = stat === undefined
        ? fast.ino[i] === -1
        : fast.size[i] === stat.size && fast.mtimeMs[i] === stat.mtimeMs && fast.ino[i] === stat.ino
    }
    if (!same) entry.stats = undefined
    return same
  }

  /** The slow path for an endpoint whose stats differ: its files observed, compared by content. */
  const changeOf = (ref: EndpointRef, entry: Entry) =>
    Effect.map(observeAll(ref, entry), (now): Change | undefined => {
      const changed = differences(entry.baseline, now)
      return changed.length === 0 ? undefined : { ref, files: Object.fromEntries(now), changed }
    })

  /** Compares one endpoint with its baseline: stats first, content only when a stat differs. */
  const compare = (ref: EndpointRef, entry: Entry) =>
    Effect.suspend(() => unchanged(ref, entry) ? Effect.succeed(undefined) : changeOf(ref, entry))

  const store = (ref: EndpointRef, files: ReadonlyMap<string, FileFingerprint>) =>
    Effect.gen(function*() {
      const recorded_at = DateTime.formatIso(yield* DateTime.now)
      yield* state.writeJson(file(ref), { schema: 1, recorded_at, files: Object.fromEntries(files) } satisfies Fingerprint)
      entries.set(ref.identity, { baseline: new Map(files), resolved: entries.get(ref.identity)?.resolved, stats: undefined })
    })

  /** The stored baseline into memory, or adoption of the current state when there is none. */
  const loadOrAdopt = (ref: EndpointRef) =>
    Effect.gen(function*() {
      const text = yield* state.readText(file(ref))
      const stored = Option.flatMap(text, (t) => Either.getRight(decode(t)))
      if (Option.isSome(stored)) {
        entries.set(ref.identity, { baseline: new Map(Object.entries(stored.value.files)), resolved: undefined, stats: undefined })
        return true
      }
      yield* store(ref, yield* observeAll(ref, undefined))
      return false
    })

  const record = (ref: EndpointRef) =>
    Effect.flatMap(Effect.suspend(() => observeAll(ref, entries.get(ref.identity))), (files) => store(ref, files))

  const poll = (refs: ReadonlyArray<EndpointRef>) =>
    Effect.gen(function*() {
      // One synchronous stat loop over the endpoints in memory; those whose stats differ are read
      // after, and the endpoints not in memory are loaded (or adopted).
      const missing: Array<EndpointRef> = []
      const differing: Array<readonly [EndpointRef, Entry]> = []
      yield* Effect.sync(() => {
        for (const ref of refs) {
          const entry = entries.get(ref.identity)
          if (entry === undefined) missing.push(ref)
          else if (!unchanged(ref, entry)) differing.push([ref, entry])
        }
      })
      const changes: Array<Change> = []
      for (const [ref, entry] of differing) {
        const change = yield* changeOf(ref, entry)
        if (change !== undefined) changes.push(change)
      }
      for (const ref of missing) {
        if (!(yield* loadOrAdopt(ref))) continue // adopted: nothing owed
        const entry = entries.get(ref.identity)
        const change = entry === undefined ? undefined : yield* compare(ref, entry)
        if (change !== undefined) changes.push(change)
      }
      return changes
    })

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
