/**
 * One JSON document store for the state root: a folder of `<name>.json`
 * documents of one Schema (declarations, peers, endpoint records), each decoded
 * with its Schema (excess properties refused), its stem checked against the name
 * it carries, every fault of a document reported at once (schema/Faults.ts), and
 * written atomically through `StateRoot` (0600 in a 0700 folder, as everything
 * under the root).
 *
 * `list` reads the whole folder and returns the valid documents and one invalid
 * item per bad entry (docs/capability-plugin-lifecycle.md, "Declaration": "an
 * invalid file found on disk is reported loudly and never skipped silently"):
 * bad JSON, a broken rule, a stem that differs from the name inside, an entry
 * that is not `<name>.json`, a file that cannot be read (the one reader refuses
 * it: not UTF-8, over its cap, a FIFO, a directory). `read` gives the same invalid
 * item for a file it cannot read, so one bad document is a fact about that
 * document, never a failure of its folder or of the verb. Temp files of an
 * interrupted atomic write (`*.tmp`) and entries set aside by a write
 * (`*.invalid-<time>`, StateRoot.ts) are ours and are not reported; a file
 * deleted between the listing and the read is simply gone.
 *
 * The Schema is the only judge of a document. A sweep reads the same small
 * documents again and again (a `city capability sync` reads every peer file
 * per capability), so a store remembers each document it decoded, or refused,
 * by its path, size, modification time and inode (one `stat`, through the one
 * file reader): an unchanged file is neither read nor decoded again, and any
 * rewrite changes one of them (an atomic write is a new inode). A document the
 * store itself writes or removes is forgotten at once. The memory is bounded
 * by the folder: it holds as many documents as the last `list` found entries
 * (at least `rememberedDocuments`), the oldest forgotten first. A fixed bound
 * below the folder's size would forget, at every `list`, the documents the
 * next `list` reads first (a daemon of 5,000 peers re-read ~900 of them at
 * every poll). A file whose stat has no inode or no mtime is never remembered.
 *
 * A store is a value built on the `StateRoot` service (it is generic in its
 * Schema, so it is not a service itself); `Capabilities`, `Peers` and
 * `EndpointRecords` each build one, `RuntimeProfiles` decodes its single file with
 * `decodeDocument`. Each store reads with its kind's size cap (`kind`, files/TextFile.ts): a stored
 * declaration with the 1 MiB cap `register` applies to its input, the state documents with 16 MiB.
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { StateRootError } from "../../schema/CapabilityErrors.ts"
import * as Faults from "../../schema/Faults.ts"
import { stemRule } from "../../schema/Name.ts"
import { documentIssues } from "../../schema/ParseIssue.ts"
import type * as TextFile from "../files/TextFile.ts"
import { isRefused, isSetAside, refusedRule, StateRoot } from "../root/StateRoot.ts"

/**
 * What a scan of a folder of `<name>.json` documents found: the valid ones and every invalid file.
 * @since 0.1.0
 * @category models
 */
export interface Scan<A, E> {
  /** The documents that decoded. */
  readonly valid: ReadonlyArray<A>
  /** One error per file that did not decode, naming the file, the field and the rule. */
  readonly invalid: ReadonlyArray<E>
}

/**
 * Builds the error for an invalid file from its faults (`Faults.one` for a file unusable as a whole).
 * @since 0.1.0
 * @category models
 */
export type InvalidFileError<E> = (file: string, faults: Faults.Faults) => E

const parseJson = Schema.decodeUnknownEither(Schema.parseJson())

/**
 * Decodes the text of one JSON document with its Schema, every fault at once (`errors: "all"`;
 * excess properties are refused), then runs `checks` on the parsed JSON whatever the Schema found:
 * a failure names the file and each field and rule (Faults.ts). Text that is not JSON is one fault.
 * @since 0.1.0
 * @category utils
 */
export const decodeDocument = <A, I, E>(
  schema: Schema.Schema<A, I>,
  invalid: InvalidFileError<E>,
  checks: ReadonlyArray<Faults.Check> = []
) => {
  const decode = Schema.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "error" })
  return (file: string, text: string, more: ReadonlyArray<Faults.Check> = []): Effect.Effect<A, E> =>
    Effect.suspend(() => {
      const json = parseJson(text)
      if (Either.isLeft(json)) return Effect.fail(invalid(file, Faults.collect(documentIssues(json.left))))
      const decoded = decode(json.right)
      const checked = [...more, ...checks].flatMap((check) => check(json.right))
      if (Either.isLeft(decoded)) return Effect.fail(invalid(file, Faults.collect([...documentIssues(decoded.left), ...checked])))
      return Arr.isNonEmptyReadonlyArray(checked) ? Effect.fail(invalid(file, Faults.collect(checked))) : Effect.succeed(decoded.right)
    })
}

/**
 * What a document store needs: its folder, its Schema and how to name an invalid file.
 * @since 0.1.0
 * @category models
 */
export interface DocumentStoreOptions<A, I, E> {
  /** The folder under the root, e.g. `peers`. */
  readonly dir: string
  /** The Schema each document is decoded with (excess properties refused). */
  readonly schema: Schema.Schema<A, I>
  /** Makes the error for an invalid file from its path, field and rule. */
  readonly invalid: InvalidFileError<E>
  /** The name a document is stored under, and the field that carries it (it must equal the stem). */
  readonly key: { readonly field: string; readonly of: (document: A) => string }
  /** What a valid stem is. */
  readonly isStem: (stem: string) => boolean
  /** The rule an entry breaks when its name is wrong, e.g. "is not a peer file: expected <personality>.json". */
  readonly namingRule: string
  /** The kind of file its documents are, with its size cap (default: a state document, 16 MiB). */
  readonly kind?: TextFile.FileKind
  /**
   * The rules the Schema cannot state alone (one depends on this host), judged on the parsed
   * document whatever the Schema found (Faults.ts, `Faults.check`).
   */
  readonly checks?: ReadonlyArray<Faults.Check>
}

/**
 * The JSON documents of one folder: read, write, delete and list them, reporting invalid files.
 * @since 0.1.0
 * @category models
 */
export interface DocumentStore<A, E> {
  /** The absolute path of a document. */
  readonly file: (name: string) => string
  /** Decodes and checks the text of a document named `stem`, found at `file`. */
  readonly decode: (file: string, stem: string, text: string) => Effect.Effect<A, E>
  /** The document stored under `name`; `None` when there is none. */
  readonly read: (name: string) => Effect.Effect<Option.Option<A>, E | StateRootError>
  /** Writes a document atomically under its own name. Caller holds the root lock. */
  readonly write: (document: A) => Effect.Effect<void, StateRootError>
  /** Removes the document of `name`; a missing one is not an error. Caller holds the root lock. */
  readonly remove: (name: string) => Effect.Effect<void, StateRootError>
  /** Every document of the folder, valid or not, in name order. */
  readonly list: Effect.Effect<Scan<A, E>, StateRootError>
}

/**
 * The rule that a document's name equals its file stem, judged when the name is a valid stem.
 * @since 0.1.0
 * @category utils
 */
export const stemCheck = (key: { readonly field: string }, isStem: (stem: string) => boolean) => {
  const name = Schema.Struct({ [key.field]: Schema.String.pipe(Schema.filter(isStem)) })
  return (stem: string): Faults.Check =>
    Faults.check(name, (fields) => {
      const got = fields[key.field] ?? ""
      return got === stem ? [] : [{ field: key.field, rule: stemRule(stem, got) }]
    })
}

/**
 * Decodes and checks the text of the document named `stem` found at `file`: the Schema, the stem
 * rule and the store's own `checks`, every fault at once.
 * @since 0.1.0
 * @category utils
 */
export const decoder = <A, I, E>(options: DocumentStoreOptions<A, I, E>) => {
  const decode = decodeDocument(options.schema, options.invalid, options.checks)
  const stem = stemCheck(options.key, options.isStem)
  return (path: string, name: string, text: string): Effect.Effect<A, E> => decode(path, text, [stem(name)])
}

/**
 * How many decoded documents one store remembers at least; a folder whose last `list` found more
 * entries raises the bound to their number (see the module comment).
 * @since 0.1.0
 * @category constants
 */
export const rememberedDocuments = 4096

/** How many documents `list` looks at at once. */
const listConcurrency = 16

interface Remembered<A, E> {
  readonly size: bigint
  readonly mtime: number
  readonly ino: number
  readonly result: Either.Either<A, E>
}

/** The stat fields a remembered document is valid for; `None` when the stat cannot vouch for it. */
const stamp = (info: FileSystem.File.Info) =>
  Option.all({ mtime: Option.map(info.mtime, (d) => d.getTime()), ino: info.ino })

/**
 * Makes a store of the JSON documents of one folder of the state root.
 * @since 0.1.0
 * @category constructors
 */
export const make = <A, I, E>(
  options: DocumentStoreOptions<A, I, E>
): Effect.Effect<DocumentStore<A, E>, never, StateRoot> =>
  Effect.gen(function*() {
    const state = yield* StateRoot
    const relative = (name: string) => `${options.dir}/${name}.json`
    const file = (name: string) => state.resolve(relative(name))
    const decode = decoder(options)
    const encode = Schema.encode(Schema.parseJson(options.schema, { space: 2 }))
    const memo = new Map<string, Remembered<A, E>>()
    /** The memory's bound: the entries of the folder's last `list`, at least `rememberedDocuments`. */
    let capacity = rememberedDocuments

    const remember = (at: string, entry: Remembered<A, E>) => {
      memo.delete(at)
      for (const oldest of memo.keys()) {
        if (memo.size < capacity) break
        memo.delete(oldest)
      }
      memo.set(at, entry)
    }

    /** What a look at one document found, and what the memory learns from it (`note`). */
    interface Looked {
      readonly found: Option.Option<Either.Either<A, E>>
      readonly note: () => void
    }
    const nothingToNote = () => {}

    /**
     * The document at `at` (root-relative) named `stem`, decoded or refused; `None` when there is
     * none. Read and decoded only when its stat differs from the one it was remembered with. The
     * memory is changed by `note`, not here, so `list` can look at many documents at once and
     * still remember them in name order (the oldest forgotten first stays the first listed).
     */
    const look = (at: string, stem: string): Effect.Effect<Looked, StateRootError> =>
      Effect.flatMap(state.inspect(at, options.kind), (found): Effect.Effect<Looked, StateRootError> => {
        if (Option.isNone(found)) return Effect.succeed({ found: Option.none(), note: () => void memo.delete(at) })
        const info = found.value
        const stamped = stamp(info)
        const known = memo.get(at)
        if (
          known !== undefined && Option.isSome(stamped) && known.size === info.size &&
          known.mtime === stamped.value.mtime && known.ino === stamped.value.ino
        ) return Effect.succeed({ found: Option.some(known.result), note: nothingToNote })
        return Effect.flatMap(state.readInspected(at, info, options.kind), (text): Effect.Effect<Looked> => {
          if (Option.isNone(text)) return Effect.succeed({ found: Option.none(), note: nothingToNote })
          return Effect.map(Effect.either(decode(state.resolve(at), stem, text.value)), (result) => ({
            found: Option.some(result),
            note: Option.isSome(stamped) ? () => remember(at, { size: info.size, ...stamped.value, result }) : nothingToNote
          }))
        })
      })

    const load = (at: string, stem: string): Effect.Effect<Option.Option<Either.Either<A, E>>, StateRootError> =>
      Effect.map(look(at, stem), ({ found, note }) => {
        note()
        return found
      })

    /** A file the reader refused, as the store's invalid item: the document, not the folder, is bad. */
    const refused = (at: string) => (e: StateRootError) =>
      Either.left(options.invalid(state.resolve(at), Faults.one("", refusedRule(e))))

    const read = (name: string): Effect.Effect<Option.Option<A>, E | StateRootError> =>
      Effect.flatMap(
        Effect.catchIf(load(relative(name), name), isRefused, (e) => Effect.succeed(Option.some(refused(relative(name))(e)))),
        (found) =>
        Option.match(found, {
          onNone: () => Effect.succeed(Option.none()),
          onSome: Either.match({ onLeft: Effect.fail, onRight: (a) => Effect.succeed(Option.some(a)) })
        }))

    const textOf = (document: A, name: string): Effect.Effect<string, StateRootError> =>
      Effect.mapError(
        encode(document),
        (e) => new StateRootError({ reason: "StateError", operation: "encode", path: file(name), detail: e.message, cause: e })
      )

    // What was written is remembered with the file's new stat (a rename gives it a new inode), so
    // the next read of it is a stat, not a read and a decode (a joint records every call so).
    const write = (document: A) => {
      const name = options.key.of(document)
      const at = relative(name)
      return Effect.flatMap(textOf(document, name), (text) =>
        state.writeText(at, `${text}\n`).pipe(
          Effect.onError(() => Effect.sync(() => memo.delete(at))),
          Effect.zipRight(Effect.catchAll(state.inspect(at), () => Effect.succeed(Option.none()))),
          Effect.map((found) => {
            const stamped = Option.flatMap(found, stamp)
            if (Option.isSome(found) && Option.isSome(stamped)) {
              remember(at, { size: found.value.size, ...stamped.value, result: Either.right(document) })
            } else memo.delete(at)
          })
        ))
    }

    const remove = (name: string) =>
      Effect.ensuring(state.remove(relative(name)), Effect.sync(() => memo.delete(relative(name))))

    // The documents are looked at `listConcurrency` at a time (a sweep's start reads every peer
    // file: one at a time, each stat, open, read and close waits for the one before), and the
    // memory learns from them in name order afterwards.
    const list = Effect.gen(function*() {
      const entries = yield* state.list(options.dir)
      capacity = Math.max(rememberedDocuments, entries.length)
      const looked = yield* Effect.forEach(entries, (entry): Effect.Effect<Looked> => {
        const at = `${options.dir}/${entry}`
        if (entry.endsWith(".tmp") || isSetAside(entry)) return Effect.succeed({ found: Option.none(), note: nothingToNote })
        const stem = entry.slice(0, -5)
        if (!entry.endsWith(".json") || !options.isStem(stem)) {
          return Effect.succeed({
            found: Option.some(Either.left(options.invalid(state.resolve(at), Faults.one("", options.namingRule)))),
            note: nothingToNote
          })
        }
        return look(at, stem).pipe(
          Effect.catchAll((e) => Effect.succeed({ found: Option.some(refused(at)(e)), note: nothingToNote }))
        )
      }, { concurrency: listConcurrency })
      for (const { note } of looked) note()
      const found = Arr.getSomes(looked.map(({ found }) => found))
      return { valid: Arr.getRights(found), invalid: Arr.getLefts(found) }
    })

    return { file, decode, read, write, remove, list }
  })
