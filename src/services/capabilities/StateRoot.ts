/**
 * The state root, `$CITY_ROOT` (default `~/.city`): plain files an operator can
 * read. JSON documents are written atomically (temp file in the same directory,
 * fsync, rename, fsync of the directory), and every mutation of shared state
 * holds the cross-process root lock (design.md, "State and durability": "JSON
 * documents written atomically (temp file + fsync + rename) ... Mutations of
 * shared state take the root lock (cross-process)").
 *
 * The lock is `proper-lockfile` on the root directory (lock directory
 * `<root>/.lock`, refreshed while held, stale after 10 s so a crashed holder
 * never blocks the root forever), wrapped as a scoped resource. It is not
 * re-entrant: a joint takes it once.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as lockfile from "proper-lockfile"
import { RootLockBusy, StateError } from "../../schema/CapabilityErrors.ts"

export interface StateRootConfig {
  /** Absolute path of the root. */
  readonly root: string
  /** How long to wait for another process's lock before failing with `RootLockBusy` (default 10 minutes). */
  readonly lockWait?: Duration.DurationInput
}

export class StateRoot extends Context.Tag("effect-city/StateRoot")<
  StateRoot,
  {
    readonly root: string
    /** Absolute path of a root-relative path. */
    readonly resolve: (relative: string) => string
    /** The text of a file, or `None` when it does not exist. */
    readonly readText: (relative: string) => Effect.Effect<Option.Option<string>, StateError>
    /** Writes `value` as JSON atomically: temp file, fsync, rename. */
    readonly writeJson: (relative: string, value: unknown) => Effect.Effect<void, StateError>
    /** Creates a directory and its parents. */
    readonly makeDirectory: (relative: string) => Effect.Effect<void, StateError>
    /** Removes a file or directory tree; a missing path is not an error. */
    readonly remove: (relative: string) => Effect.Effect<void, StateError>
    /** The entry names of a directory, sorted; a missing directory has none. */
    readonly list: (relative: string) => Effect.Effect<ReadonlyArray<string>, StateError>
    /** Holds the cross-process root lock for the caller's Scope. */
    readonly lock: Effect.Effect<void, StateError | RootLockBusy, Scope.Scope>
  }
>() {}

const describe = (cause: unknown): string =>
  cause instanceof Error ? cause.message : typeof cause === "object" && cause !== null && "message" in cause
    ? String((cause as { readonly message: unknown }).message)
    : String(cause)

const isLocked = (cause: unknown): boolean =>
  typeof cause === "object" && cause !== null && "code" in cause &&
  (cause as { readonly code: unknown }).code === "ELOCKED"

export const make = (config: StateRootConfig): Effect.Effect<
  StateRoot["Type"],
  StateError,
  FileSystem.FileSystem | Path.Path
> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const root = path.resolve(config.root)
    const lockWait = Duration.decode(config.lockWait ?? Duration.minutes(10))
    const resolve = (relative: string) => path.join(root, relative)
    const fail = (operation: string, file: string) => (cause: unknown) =>
      new StateError({ operation, path: file, detail: describe(cause) })

    yield* fs.makeDirectory(root, { recursive: true }).pipe(Effect.mapError(fail("create", root)))

    let counter = 0
    const writeJson = (relative: string, value: unknown) => {
      const target = resolve(relative)
      const dir = path.dirname(target)
      const tmp = `${target}.${process.pid}.${++counter}.tmp`
      const bytes = new TextEncoder().encode(`${JSON.stringify(value, null, 2)}\n`)
      return Effect.gen(function*() {
        yield* fs.makeDirectory(dir, { recursive: true })
        yield* Effect.scoped(
          Effect.flatMap(fs.open(tmp, { flag: "w", mode: 0o644 }), (file) =>
            Effect.zipRight(file.writeAll(bytes), file.sync))
        )
        yield* fs.rename(tmp, target)
        // Make the rename itself durable; some file systems refuse to fsync a directory.
        yield* Effect.scoped(Effect.flatMap(fs.open(dir, { flag: "r" }), (d) => d.sync)).pipe(Effect.ignore)
      }).pipe(
        Effect.tapError(() => fs.remove(tmp).pipe(Effect.ignore)),
        Effect.mapError(fail("write", target))
      )
    }

    const readText = (relative: string) => {
      const file = resolve(relative)
      return fs.readFileString(file).pipe(
        Effect.map(Option.some),
        Effect.catchIf(
          (e) => e._tag === "SystemError" && e.reason === "NotFound",
          () => Effect.succeed(Option.none<string>())
        ),
        Effect.mapError(fail("read", file))
      )
    }

    const remove = (relative: string) => {
      const file = resolve(relative)
      return fs.remove(file, { recursive: true, force: true }).pipe(Effect.mapError(fail("remove", file)))
    }

    const makeDirectory = (relative: string) => {
      const dir = resolve(relative)
      return fs.makeDirectory(dir, { recursive: true }).pipe(Effect.mapError(fail("create", dir)))
    }

    const list = (relative: string) => {
      const dir = resolve(relative)
      return fs.readDirectory(dir).pipe(
        Effect.map((names) => names.slice().sort()),
        Effect.catchIf(
          (e) => e._tag === "SystemError" && e.reason === "NotFound",
          () => Effect.succeed<ReadonlyArray<string>>([])
        ),
        Effect.mapError(fail("list", dir))
      )
    }

    const attempt = Effect.tryPromise({
      try: () =>
        lockfile.lock(root, {
          realpath: false,
          lockfilePath: path.join(root, ".lock"),
          stale: 10_000,
          update: 2_000,
          retries: 0,
          // The default handler throws from a timer and would crash the process.
          onCompromised: (err) => process.emitWarning(`city: root lock compromised: ${err.message}`)
        }),
      catch: (cause) => cause
    })
    const retryWhileLocked = Schedule.exponential(Duration.millis(5), 1.5).pipe(
      Schedule.union(Schedule.spaced(Duration.millis(100))),
      Schedule.jittered,
      Schedule.upTo(lockWait)
    )
    const lock = Effect.acquireRelease(
      attempt.pipe(
        Effect.retry({ schedule: retryWhileLocked, while: isLocked }),
        Effect.mapError((cause) =>
          isLocked(cause)
            ? new RootLockBusy({ root, waitedMs: Duration.toMillis(lockWait) })
            : fail("lock", root)(cause)
        )
      ),
      // A release that fails (the lock was already taken over as stale) must not fail the joint.
      (release) => Effect.tryPromise(() => release()).pipe(Effect.ignore)
    ).pipe(Effect.asVoid)

    return StateRoot.of({ root, resolve, readText, writeJson, makeDirectory, remove, list, lock })
  })

export const layer = (config: StateRootConfig) => Layer.effect(StateRoot, make(config))

/** What a scan of a folder of `<name>.json` documents found: the valid ones and every invalid file. */
export interface Scan<A, E> {
  readonly valid: ReadonlyArray<A>
  readonly invalid: ReadonlyArray<E>
}

/**
 * Reads every `<name>.json` document of a folder under the root, validating each one; nothing is
 * skipped silently: an entry that is not `<name>.json`, or cannot be read, or is invalid, comes back
 * as an `invalid` item. Temp files of atomic writes (`*.tmp`) and files deleted meanwhile are ignored.
 */
export const scanDocuments = <A, E>(
  state: StateRoot["Type"],
  dir: string,
  options: {
    /** An invalid entry: `rule` says what is wrong with the file as a whole. */
    readonly invalid: (file: string, rule: string) => E
    /** The `<name>.json` files that exist: decode and check one. */
    readonly validate: (file: string, stem: string, text: string) => Effect.Effect<A, E>
    /** What a valid file name stem is. */
    readonly isStem: (stem: string) => boolean
    /** The rule an entry breaks when its name is wrong, e.g. "is not a peer file: expected <personality>.json". */
    readonly namingRule: string
  }
): Effect.Effect<Scan<A, E>, StateError> =>
  Effect.gen(function*() {
    const entries = yield* state.list(dir)
    const checked = yield* Effect.forEach(entries, (entry): Effect.Effect<Option.Option<Either.Either<A, E>>> => {
      const file = state.resolve(`${dir}/${entry}`)
      if (entry.endsWith(".tmp")) return Effect.succeed(Option.none<Either.Either<A, E>>())
      const stem = entry.slice(0, -5)
      if (!entry.endsWith(".json") || !options.isStem(stem)) {
        return Effect.succeed(Option.some(Either.left(options.invalid(file, options.namingRule))))
      }
      return state.readText(`${dir}/${entry}`).pipe(
        Effect.mapError((e) => options.invalid(file, `cannot be read (${e.detail})`)),
        // A file deleted between the listing and the read is simply gone.
        Effect.flatMap((text) =>
          Option.isNone(text)
            ? Effect.succeed(Option.none<Either.Either<A, E>>())
            : Effect.map(options.validate(file, stem, text.value), (a) => Option.some(Either.right(a)))
        ),
        Effect.catchAll((invalid) => Effect.succeed(Option.some(Either.left(invalid))))
      )
    }, { concurrency: 16 })
    const found = Arr.getSomes(checked)
    return { valid: Arr.getRights(found), invalid: Arr.getLefts(found) }
  })
