/**
 * The declarations store's implementation (Capabilities.ts): its `DocumentStore` options, the
 * host-dependent rule on `runtimes`, and `make`.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { CapabilityError } from "../../../schema/CapabilityErrors.ts"
import { Declaration } from "../../../schema/Declaration.ts"
import { declarationRules } from "../../../schema/DeclarationRules.ts"
import * as Faults from "../../../schema/Faults.ts"
import { InvalidFile } from "../../../schema/FileErrors.ts"
import { defaultHostConfig, type HostConfig } from "../../../schema/HostConfig.ts"
import { isName } from "../../../schema/Name.ts"
import { layout } from "../../root/CityRoot.ts"
import * as TextFile from "../../files/TextFile.ts"
import * as DocumentStore from "../DocumentStore.ts"
import { RuntimeProfiles } from "../RuntimeProfiles.ts"

const invalid: DocumentStore.InvalidFileError<InvalidFile> = (file, faults) =>
  new InvalidFile({ reason: "Declaration", file, ...faults })

/** `runtimes` as a list: each entry is judged whatever the list's own rules (no repeats, names) say of the others. */
const Runtimes = Schema.Struct({ runtimes: Schema.Array(Schema.Unknown) })

/**
 * The host-dependent rule: no runtime this host knows as a channel runtime (each one is a fault),
 * judged whenever `runtimes` is a list, beside the list's own faults (a repeat, a bad name).
 * @since 0.1.0
 * @category utils
 */
export const checkRuntimes = (host: HostConfig): Faults.Check =>
  Faults.check(Runtimes, ({ runtimes }) =>
    runtimes.flatMap((runtime, index) =>
      typeof runtime === "string" && host.channel_runtimes.includes(runtime)
        ? [{ field: `runtimes[${index}]`, rule: `${runtime} ${declarationRules.agentRuntimes.sentence}` }]
        : []
    ))

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
  dir: layout.capabilities,
  schema: Declaration,
  invalid,
  key: { field: "capability", of: (d) => d.capability },
  isStem: isName,
  namingRule: "is not a declaration: expected <name>.json",
  // The stored copy is held to the cap `register` applies to its input (1 MiB), not the state documents' 16 MiB.
  kind: TextFile.kinds.declaration,
  checks: [checkRuntimes(host)]
})

/**
 * Validates the text of a declaration file on this host: JSON, every Schema rule, "equals the file
 * stem", no channel runtime; every fault at once.
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
 * Reads and validates a declaration file anywhere on disk (the input of `register`), through the
 * one file reader with the declaration cap, on this host's rules; every store reads it so.
 * @since 0.1.0
 * @category utils
 */
export const readFile = (host: HostConfig) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const decode = DocumentStore.decoder(storeOptions(host))
    return (file: string): Effect.Effect<Declaration, InvalidFile> => {
      const absolute = path.resolve(file)
      const stem = path.basename(absolute, path.extname(absolute))
      return TextFile.read(absolute, TextFile.kinds.declaration).pipe(
        Effect.provideService(FileSystem.FileSystem, fs),
        Effect.mapError((e) => invalid(absolute, Faults.one("", e.rule))),
        Effect.flatMap(Option.match({
          onNone: () => Effect.fail(invalid(absolute, Faults.one("", "does not exist"))),
          onSome: (text) => decode(absolute, stem, text)
        }))
      )
    }
  })

/**
 * Makes the declaration store on the state root.
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const profiles = yield* RuntimeProfiles
  const store = yield* DocumentStore.make(storeOptions(profiles.config))
  const read = yield* readFile(profiles.config)

  const get = (name: string) =>
    Effect.flatMap(store.read(name), (found) =>
      Option.match(found, {
        onNone: () => Effect.fail(new CapabilityError({ reason: "UnknownCapability", capability: name, file: store.file(name) })),
        onSome: Effect.succeed
      }))

  return { readFile: read, store: store.write, get, remove: store.remove, file: store.file, scan: store.list }
})
