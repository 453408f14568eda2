/**
 * The declarations store, `$CITY_ROOT/capabilities/<name>.json`
 * (docs/capability-plugin-lifecycle.md, "Declaration"): "The plugin never writes
 * this file directly. Its installer runs `iapeer capability register <file>`,
 * which validates the declaration and stores it." and "A violation refuses
 * `register`; an invalid file found on disk is reported loudly and never skipped
 * silently."
 *
 * A `DocumentStore` of `Declaration`s. Beside the Schema's rules, one rule
 * depends on this host: "`runtimes` is a non-empty list of the agent runtimes
 * the plugin supports", so a runtime this host knows as a channel runtime is
 * refused (such a declaration would never have an endpoint). A name this host
 * does not know at all is accepted: a declaration is portable across hosts, and
 * a runtime another host runs as an agent simply has no endpoint here. The rule
 * holds for `register` and for every stored declaration read back (a `host.json`
 * changed later makes a stored declaration invalid, reported like any other).
 *
 * The file given to `register` is read through the one file reader with the
 * declaration cap (1 MiB, `files/TextFile.ts`): a FIFO, a device, a folder, a
 * larger file or invalid UTF-8 is an `InvalidFile` (`Declaration`) naming the file and the
 * reader's rule; a missing file is one too ("does not exist").
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { type StateError, UnknownCapability } from "../../schema/CapabilityErrors.ts"
import { Declaration } from "../../schema/Declaration.ts"
import { InvalidFile } from "../../schema/FileErrors.ts"
import { defaultHostConfig, type HostConfig } from "../../schema/HostConfig.ts"
import { isName } from "../../schema/Name.ts"
import * as DocumentStore from "./DocumentStore.ts"
import * as TextFile from "../files/TextFile.ts"
import { Runtimes } from "./Runtimes.ts"
import type { StateRoot } from "./StateRoot.ts"

/**
 * The folder of the stored declarations, under the state root.
 * @since 0.1.0
 * @category constants
 */
export const capabilitiesDir = "capabilities"

export type { Scan } from "./DocumentStore.ts"

/**
 * The stored capability declarations: read, validate, store and delete them.
 * @since 0.1.0
 * @category tags
 */
export class Capabilities extends Context.Tag("effect-city/Capabilities")<
  Capabilities,
  {
    /** Reads and validates a declaration file anywhere on disk (the input of `register`). */
    readonly readFile: (file: string) => Effect.Effect<Declaration, InvalidFile>
    /** Stores a validated declaration, replacing any previous version. Caller holds the root lock. */
    readonly store: (declaration: Declaration) => Effect.Effect<void, StateError>
    /** The stored declaration of `name`. */
    readonly get: (name: string) => Effect.Effect<Declaration, UnknownCapability | InvalidFile | StateError>
    /** Deletes the stored declaration. Caller holds the root lock. */
    readonly remove: (name: string) => Effect.Effect<void, StateError>
    /** The absolute path of the stored declaration of `name`. */
    readonly file: (name: string) => string
    /** Every declaration on disk, valid or not, in name order. */
    readonly scan: Effect.Effect<DocumentStore.Scan<Declaration, InvalidFile>, StateError>
  }
>() {}

const invalid: DocumentStore.InvalidFileError<InvalidFile> = (file, field, rule) =>
  new InvalidFile({ reason: "Declaration", file, field, rule })

/**
 * The host-dependent rule: no runtime this host knows as a channel runtime.
 * @since 0.1.0
 * @category utils
 */
export const checkRuntimes = (host: HostConfig) => (declaration: Declaration) => {
  const index = declaration.runtimes.findIndex((runtime) => host.channel_runtimes.includes(runtime))
  return index === -1 ? Option.none() : Option.some({
    field: `runtimes[${index}]`,
    rule: `${declaration.runtimes[index]} is a channel runtime of this host (host.json), never an endpoint: ` +
      `list agent runtimes only`
  })
}

/**
 * The declaration store's options (also used by tests to validate text).
 * @since 0.1.0
 * @category utils
 */
export const storeOptions = (host: HostConfig): DocumentStore.DocumentStoreOptions<
  Declaration,
  typeof Declaration.Encoded,
  InvalidFile
> => ({
  dir: capabilitiesDir,
  schema: Declaration,
  invalid,
  key: { field: "capability", of: (d) => d.capability },
  isStem: isName,
  namingRule: "is not a declaration: expected <name>.json",
  check: checkRuntimes(host)
})

/**
 * Validates the text of a declaration file on this host: JSON, every Schema rule, "equals the file
 * stem", no channel runtime.
 * @since 0.1.0
 * @category utils
 */
export const validate = (
  file: string,
  stem: string,
  text: string,
  host: HostConfig = defaultHostConfig
): Effect.Effect<Declaration, InvalidFile> => DocumentStore.decoder(storeOptions(host))(file, stem, text)

/**
 * Makes the declaration store on the state root.
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Capabilities["Type"], never, Runtimes | StateRoot | FileSystem.FileSystem | Path.Path> =
  Effect.gen(function*() {
    const host = yield* Runtimes
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const store = yield* DocumentStore.make(storeOptions(host.config))

    const readFile = (file: string) => {
      const absolute = path.resolve(file)
      const stem = path.basename(absolute, path.extname(absolute))
      return TextFile.read(absolute, TextFile.kinds.declaration).pipe(
        Effect.provideService(FileSystem.FileSystem, fs),
        Effect.mapError((e) => invalid(absolute, "", e.rule)),
        Effect.flatMap(Option.match({
          onNone: () => Effect.fail(invalid(absolute, "", "does not exist")),
          onSome: (text) => store.decode(absolute, stem, text)
        }))
      )
    }

    const get = (name: string) =>
      Effect.flatMap(store.read(name), (found) =>
        Option.match(found, {
          onNone: () => Effect.fail(new UnknownCapability({ capability: name, file: store.file(name) })),
          onSome: Effect.succeed
        }))

    return Capabilities.of({ readFile, store: store.write, get, remove: store.remove, file: store.file, scan: store.list })
  })

/**
 * The declaration store as a Layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(Capabilities, make)
