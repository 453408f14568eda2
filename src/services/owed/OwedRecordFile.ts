/**
 * One owed-work record file under the state root (docs/live-application.md, "Owed work"): loaded
 * as absent, valid or invalid (with its one-line reason), read, written (removed once it owes
 * nothing and is not claimed), and, the root lock held, replaced when invalid by one that owes a
 * reload again (logged).
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { StateRootError } from "../../schema/CapabilityErrors.ts"
import type { OwedRecord } from "../../schema/Live.ts"
import { identityOf } from "../../schema/Outcome.ts"
import { documentIssue, fieldRuleLine } from "../../schema/ParseIssue.ts"
import { isRefused, refusedRule, type StateRoot } from "../root/StateRoot.ts"
import { decode, type EndpointKey, type Loaded, owesWork, reloadsDir, transitions } from "./OwedRecords.ts"

/**
 * The record files of a state root.
 * @since 0.1.0
 * @category constructors
 */
export const makeRecordFile = (state: StateRoot["Type"]) => {
  const file = (key: EndpointKey) => `${reloadsDir}/${identityOf(key.runtime, key.personality)}.json`

  /** One record file, by its entry name: absent, valid, or invalid with its one-line reason. */
  const load = (name: string): Effect.Effect<Loaded, StateRootError> => {
    const at = `${reloadsDir}/${name}`
    const invalid = ({ field, rule }: { readonly field: string; readonly rule: string }): Loaded => ({
      _tag: "Invalid",
      invalid: { file: state.resolve(at), identity: name.slice(0, -".json".length), field, rule }
    })
    return state.readText(at).pipe(
      Effect.map((text): Loaded =>
        Option.match(text, {
          onNone: () => ({ _tag: "Absent" }),
          onSome: (t) =>
            Either.match(decode(t), {
              onLeft: (error) => invalid(documentIssue(error)),
              onRight: (record): Loaded => ({ _tag: "Valid", record })
            })
        })
      ),
      Effect.catchIf(isRefused, (e) => Effect.succeed(invalid({ field: "", rule: refusedRule(e) })))
    )
  }
  const nameOf = (key: EndpointKey) => `${identityOf(key.runtime, key.personality)}.json`

  const read = (key: EndpointKey): Effect.Effect<Option.Option<OwedRecord>, StateRootError> =>
    Effect.flatMap(load(nameOf(key)), (loaded) =>
      loaded._tag === "Absent"
        ? Effect.succeed(Option.none())
        : loaded._tag === "Valid"
        ? Effect.succeed(Option.some(loaded.record))
        : Effect.fail(
          new StateRootError({ reason: "StateError", operation: "read", path: loaded.invalid.file, detail: fieldRuleLine(loaded.invalid) })
        ))

  const write = (key: EndpointKey, record: OwedRecord) =>
    owesWork(record) || record.claim !== undefined ? state.writeJson(file(key), record) : state.remove(file(key))

  /**
   * The record to change, the root lock held: an invalid one is replaced at once by one that owes
   * a reload again (so nothing below removes what is in its place), and that is logged.
   */
  const current = (key: EndpointKey, at: string): Effect.Effect<readonly [OwedRecord, boolean], StateRootError> =>
    Effect.flatMap(load(nameOf(key)), (loaded): Effect.Effect<readonly [OwedRecord, boolean], StateRootError> => {
      if (loaded._tag === "Absent") return Effect.succeed([transitions.empty(key, at), false] as const)
      if (loaded._tag === "Valid") return Effect.succeed([loaded.record, false] as const)
      const reason = `owed again: its record could not be read (${fieldRuleLine(loaded.invalid)})`
      const again = transitions.request(transitions.empty(key, at), reason, at)
      return write(key, again).pipe(
        Effect.zipRight(Effect.logWarning(
          `owed-work record ${loaded.invalid.file} is invalid (${fieldRuleLine(loaded.invalid)}): ` +
            "replaced; the reload it may have stood for is owed again"
        ).pipe(Effect.annotateLogs({ endpoint: identityOf(key.runtime, key.personality) }))),
        Effect.as([again, true] as const satisfies readonly [OwedRecord, boolean])
      )
    })

  return { file, nameOf, load, read, write, current }
}
