/**
 * The declarations store, `$CITY_ROOT/capabilities/<name>.json`
 * (spec/capability-plugin-lifecycle.md, "Declaration"): "The plugin never writes
 * this file directly. Its installer runs `iapeer capability register <file>`,
 * which validates the declaration and stores it." and "A violation refuses
 * `register`; an invalid file found on disk is reported loudly and never skipped
 * silently."
 *
 * `scan` returns the valid declarations and one `InvalidDeclaration` per bad
 * entry of the folder (bad JSON, a broken rule, a stem that differs from
 * `capability`, an entry that is not `<name>.json`). Temp files of an
 * interrupted atomic write (`*.tmp`) are ours and are not reported.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { InvalidDeclaration, type StateError, UnknownCapability } from "../../schema/CapabilityErrors.ts"
import { Declaration } from "../../schema/Declaration.ts"
import { isName } from "../../schema/Name.ts"
import { firstIssue } from "../../schema/ParseIssue.ts"
import { type Scan, scanDocuments, StateRoot } from "./StateRoot.ts"

export const capabilitiesDir = "capabilities"

export type { Scan } from "./StateRoot.ts"

export class Capabilities extends Context.Tag("effect-city/Capabilities")<
  Capabilities,
  {
    /** Reads and validates a declaration file anywhere on disk (the input of `register`). */
    readonly readFile: (file: string) => Effect.Effect<Declaration, InvalidDeclaration | StateError>
    /** Stores a validated declaration, replacing any previous version. Caller holds the root lock. */
    readonly store: (declaration: Declaration) => Effect.Effect<void, StateError>
    /** The stored declaration of `name`. */
    readonly get: (name: string) => Effect.Effect<Declaration, UnknownCapability | InvalidDeclaration | StateError>
    /** Deletes the stored declaration. Caller holds the root lock. */
    readonly remove: (name: string) => Effect.Effect<void, StateError>
    /** Every declaration on disk, valid or not, in name order. */
    readonly scan: Effect.Effect<Scan<Declaration, InvalidDeclaration>, StateError>
  }
>() {}

const decodeDeclaration = Schema.decodeUnknown(Declaration, { onExcessProperty: "error" })

/** Validates the text of a declaration file: JSON, every Schema rule, then "equals the file stem". */
export const validate = (file: string, stem: string, text: string): Effect.Effect<Declaration, InvalidDeclaration> =>
  Effect.try({
    try: () => JSON.parse(text) as unknown,
    catch: (e) => new InvalidDeclaration({ file, field: "", rule: `not valid JSON (${String(e)})` })
  }).pipe(
    Effect.filterOrFail(
      (json) => typeof json === "object" && json !== null && !Array.isArray(json),
      () => new InvalidDeclaration({ file, field: "", rule: "must be a JSON object" })
    ),
    Effect.flatMap((json) =>
      decodeDeclaration(json).pipe(Effect.mapError((e) => new InvalidDeclaration({ file, ...firstIssue(e) })))
    ),
    Effect.filterOrFail(
      (declaration) => declaration.capability === stem,
      (declaration) =>
        new InvalidDeclaration({
          file,
          field: "capability",
          rule: `must equal the file stem "${stem}", got "${declaration.capability}"`
        })
    )
  )

export const make: Effect.Effect<Capabilities["Type"], never, StateRoot | FileSystem.FileSystem | Path.Path> = Effect
  .gen(function*() {
    const state = yield* StateRoot
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const relative = (name: string) => `${capabilitiesDir}/${name}.json`

    const readFile = (file: string) => {
      const absolute = path.resolve(file)
      const stem = path.basename(absolute, path.extname(absolute))
      return fs.readFileString(absolute).pipe(
        Effect.mapError((e) =>
          new InvalidDeclaration({ file: absolute, field: "", rule: `cannot be read (${e.message})` })
        ),
        Effect.flatMap((text) => validate(absolute, stem, text))
      )
    }

    const store = (declaration: Declaration) => state.writeJson(relative(declaration.capability), declaration)

    const get = (name: string) =>
      state.readText(relative(name)).pipe(
        Effect.flatMap((text): Effect.Effect<Declaration, UnknownCapability | InvalidDeclaration> =>
          Option.isNone(text)
            ? Effect.fail(new UnknownCapability({ name, file: state.resolve(relative(name)) }))
            : validate(state.resolve(relative(name)), name, text.value)
        )
      )

    const remove = (name: string) => state.remove(relative(name))

    const scan = scanDocuments(state, capabilitiesDir, {
      invalid: (file, rule) => new InvalidDeclaration({ file, field: "", rule }),
      validate,
      isStem: isName,
      namingRule: "is not a declaration: expected <name>.json"
    })

    return Capabilities.of({ readFile, store, get, remove, scan })
  })

export const layer = Layer.effect(Capabilities, make)
