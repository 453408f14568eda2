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
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { StateRootError, CapabilityError } from "../../schema/CapabilityErrors.ts"
import type { Declaration } from "../../schema/Declaration.ts"
import type { InvalidFile } from "../../schema/FileErrors.ts"
import type * as DocumentStore from "./DocumentStore.ts"
import * as internal from "./internal/capabilities.ts"

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
    readonly store: (declaration: Declaration) => Effect.Effect<void, StateRootError>
    /** The stored declaration of `name`. */
    readonly get: (name: string) => Effect.Effect<Declaration, CapabilityError | InvalidFile | StateRootError>
    /** Deletes the stored declaration. Caller holds the root lock. */
    readonly remove: (name: string) => Effect.Effect<void, StateRootError>
    /** The absolute path of the stored declaration of `name`. */
    readonly file: (name: string) => string
    /** Every declaration on disk, valid or not, in name order. */
    readonly scan: Effect.Effect<DocumentStore.Scan<Declaration, InvalidFile>, StateRootError>
  }
>() {}

/**
 * The declaration store as a Layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(Capabilities, internal.make)
