/**
 * The last call per endpoint, `$CITY_ROOT/state/endpoints/<capability>.json`,
 * shown by `city capability list`: personality → runtime → `{ state, occasion,
 * at, exit?, detail? }`. Keyed by the (personality, runtime) pair: the spec's
 * `<runtime>-<personality>` identity is for the log only (two endpoints can
 * share it).
 *
 * The records hold stderr tails, stored by the one rule of `schema/StoredText.ts`
 * (escaped, capped), in 0600 files in a 0700 folder like everything under the
 * root (`StateRoot`). They are a record of what happened, not
 * state a joint depends on: an invalid records file (bad JSON, a broken rule, or
 * a file the one reader refuses: not UTF-8, over the cap, a FIFO, a directory)
 * is reported (never read as empty in silence) and replaced by the next write,
 * which then holds only the calls made since (a directory in its place is set
 * aside, StateRoot.ts).
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { StateRootError } from "../../schema/CapabilityErrors.ts"
import { InvalidFile } from "../../schema/FileErrors.ts"
import { isName } from "../../schema/Name.ts"
import type { EndpointKey, EndpointOutcome, EndpointRecord, EndpointRecords as Records } from "../../schema/Outcome.ts"
import { EndpointRecords as RecordsSchema } from "../../schema/Outcome.ts"
import { storedText } from "../../schema/StoredText.ts"
import * as DocumentStore from "./DocumentStore.ts"
import type { StateRoot } from "../root/StateRoot.ts"
import { layout } from "../root/CityRoot.ts"

/**
 * One endpoint of one capability: the endpoint's key (`EndpointKey`) and the capability's name.
 * @since 0.1.0
 * @category models
 */
export interface CapabilityEndpoint extends EndpointKey {
  /** The capability's name. */
  readonly capability: string
}

/**
 * The records of one capability as read: the last call per endpoint, and the file if it was invalid.
 * @since 0.1.0
 * @category models
 */
export interface CapabilityRecords {
  /** The last recorded call of an endpoint, if any. */
  readonly last: (personality: string, runtime: string) => Option.Option<EndpointRecord>
  /** Every recorded endpoint, in personality then runtime order. */
  readonly endpoints: ReadonlyArray<CapabilityEndpoint & { readonly record: EndpointRecord }>
  /** The records file, if it was invalid (then no endpoint has a record). */
  readonly invalid: Option.Option<InvalidFile>
}

/**
 * The last call per endpoint, one file per capability.
 * @since 0.1.0
 * @category tags
 */
export class EndpointRecords extends Context.Tag("effect-city/EndpointRecords")<
  EndpointRecords,
  {
    /** The records of one capability (none recorded: empty). */
    readonly get: (capability: string) => Effect.Effect<CapabilityRecords, StateRootError>
    /** Records each outcome as its endpoint's last call, at `at`. Caller holds the root lock. */
    readonly record: (
      outcomes: ReadonlyArray<EndpointOutcome>,
      at: string
    ) => Effect.Effect<ReadonlyArray<InvalidFile>, StateRootError>
    /** Forgets these endpoints (a removed peer or runtime). Caller holds the root lock. */
    readonly forget: (endpoints: ReadonlyArray<CapabilityEndpoint>) => Effect.Effect<ReadonlyArray<InvalidFile>, StateRootError>
    /** Every recorded endpoint of one personality, over all capabilities. */
    readonly ofPeer: (personality: string) => Effect.Effect<ReadonlyArray<CapabilityEndpoint & { readonly record: EndpointRecord }>, StateRootError>
    /** Deletes the records of a capability. Caller holds the root lock. */
    readonly remove: (capability: string) => Effect.Effect<void, StateRootError>
  }
>() {}

const entriesOf = (records: Records) =>
  Object.keys(records.endpoints).sort().flatMap((personality) => {
    const runtimes = records.endpoints[personality] ?? {}
    return Object.keys(runtimes).sort().flatMap((runtime) => {
      const record = runtimes[runtime]
      return record === undefined ? [] : [{ capability: records.capability, personality, runtime, record }]
    })
  })

/**
 * Makes the endpoint records on the state root.
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<EndpointRecords["Type"], never, StateRoot> = Effect.gen(function*() {
  const store = yield* DocumentStore.make({
    dir: layout.endpoints,
    schema: RecordsSchema,
    invalid: (file, faults) => new InvalidFile({ reason: "EndpointRecords", file, ...faults }),
    key: { field: "capability", of: (records) => records.capability },
    isStem: isName,
    namingRule: "is not an endpoint records file: expected <capability>.json"
  })

  const empty = (capability: string): Records => ({ schema: 1, capability, endpoints: {} })

  /** The records of a capability; an invalid file reads as empty and is returned beside them. */
  const load = (capability: string) =>
    store.read(capability).pipe(
      Effect.map((found) => ({
        records: Option.getOrElse(found, () => empty(capability)),
        invalid: Option.none<InvalidFile>()
      })),
      Effect.catchTag("InvalidFile", (invalid) =>
        Effect.succeed({ records: empty(capability), invalid: Option.some(invalid) }))
    )

  const get = (capability: string) =>
    Effect.map(load(capability), ({ invalid, records }): CapabilityRecords => ({
      last: (personality, runtime) => Option.fromNullable(records.endpoints[personality]?.[runtime]),
      endpoints: entriesOf(records),
      invalid
    }))

  /** Applies `change` to the records of each capability named; an emptied file is deleted. */
  const update = (
    capabilities: Iterable<string>,
    change: (capability: string, endpoints: Record<string, Record<string, EndpointRecord>>) => void
  ) =>
    Effect.map(
      Effect.forEach(new Set(capabilities), (capability) =>
        Effect.gen(function*() {
          const { invalid, records } = yield* load(capability)
          const endpoints: Record<string, Record<string, EndpointRecord>> = {}
          for (const [personality, runtimes] of Object.entries(records.endpoints)) endpoints[personality] = { ...runtimes }
          change(capability, endpoints)
          for (const [personality, runtimes] of Object.entries(endpoints)) {
            if (Object.keys(runtimes).length === 0) delete endpoints[personality]
          }
          // An invalid file is replaced before an emptied one is deleted: a directory in its place
          // is set aside by the write (StateRoot.ts), never deleted with what it holds.
          if (Option.isSome(invalid) || Object.keys(endpoints).length > 0) yield* store.write({ schema: 1, capability, endpoints })
          if (Object.keys(endpoints).length === 0) yield* store.remove(capability)
          return invalid
        })),
      (invalid) => invalid.flatMap(Option.toArray)
    )

  const record = (outcomes: ReadonlyArray<EndpointOutcome>, at: string) =>
    update(outcomes.map((o) => o.capability), (capability, endpoints) => {
      for (const o of outcomes) {
        if (o.capability !== capability) continue
        const runtimes = endpoints[o.personality] ?? {}
        runtimes[o.runtime] = {
          state: o.state,
          occasion: o.occasion,
          at,
          ...(o.exit === undefined ? {} : { exit: o.exit }),
          ...(o.detail === undefined ? {} : { detail: storedText(o.detail) })
        }
        endpoints[o.personality] = runtimes
      }
    })

  const forget = (keys: ReadonlyArray<CapabilityEndpoint>) =>
    update(keys.map((k) => k.capability), (capability, endpoints) => {
      for (const k of keys) if (k.capability === capability) delete endpoints[k.personality]?.[k.runtime]
    })

  const ofPeer = (personality: string) =>
    Effect.map(store.list, (scan) =>
      scan.valid.flatMap(entriesOf).filter((entry) => entry.personality === personality))

  return EndpointRecords.of({ get, record, forget, ofPeer, remove: store.remove })
})

/**
 * The endpoint records as a Layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(EndpointRecords, make)
