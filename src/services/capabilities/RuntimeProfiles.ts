/**
 * This host's runtimes and their profiles (`$CITY_ROOT/host.json`, defaults in
 * `schema/HostConfig.ts`): which runtimes are "hostable as an agent by this
 * core" (docs/capability-plugin-lifecycle.md, "Joints (core-owned)") and which
 * runtime has a core-owned private directory ("`{privateDir}` is the core-owned
 * private directory of the endpoint (OpenCode: `<root>/state/opencode/<p>/`)").
 * An invalid `host.json` is refused with an `InvalidFile` (`HostConfig`) naming every fault; it is read with the
 * host-configuration cap (1 MiB, `files/TextFile.ts`). Its `redact` patterns, with the defaults,
 * make `redact`, applied where a command's output becomes text (schema/Redaction.ts).
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { StateRootError } from "../../schema/CapabilityErrors.ts"
import { InvalidFile } from "../../schema/FileErrors.ts"
import { defaultHostConfig, HostConfig } from "../../schema/HostConfig.ts"
import { makeRedact, type Redact } from "../../schema/Redaction.ts"
import * as TextFile from "../files/TextFile.ts"
import { decodeDocument } from "./DocumentStore.ts"
import { StateRoot } from "../root/StateRoot.ts"
import { layout } from "../root/CityRoot.ts"

/**
 * The host's runtimes: which are agents, which are channels, and their private directories.
 * @since 0.1.0
 * @category tags
 */
export class RuntimeProfiles extends Context.Tag("effect-city/RuntimeProfiles")<
  RuntimeProfiles,
  {
    readonly config: HostConfig
    /** An agent runtime of this host: can be an endpoint. */
    readonly isAgent: (runtime: string) => boolean
    /** Known at all: an agent or a channel runtime. */
    readonly isKnown: (runtime: string) => boolean
    /** Every known runtime, agents first. */
    readonly known: ReadonlyArray<string>
    /** The root-relative private directory of (runtime, personality), if the runtime has one. */
    readonly privateDir: (runtime: string, personality: string) => Option.Option<string>
    /** Replaces secret values in a command's output: the default patterns, then `host.json`'s `redact` (schema/Redaction.ts). */
    readonly redact: Redact
  }
>() {}

/**
 * Builds the service from a configuration (also used by tests).
 * @since 0.1.0
 * @category constructors
 */
export const fromConfig = (config: HostConfig): RuntimeProfiles["Type"] => {
  const known = [...config.agent_runtimes, ...config.channel_runtimes]
  return RuntimeProfiles.of({
    config,
    isAgent: (runtime) => config.agent_runtimes.includes(runtime),
    isKnown: (runtime) => known.includes(runtime),
    known,
    privateDir: (runtime, personality) =>
      Option.fromNullable(config.profiles[runtime]?.private_dir).pipe(
        Option.map((template) => template.split("{personality}").join(personality))
      ),
    redact: makeRedact(config.redact)
  })
}

const parse = decodeDocument(HostConfig, (file, faults) => new InvalidFile({ reason: "HostConfig", file, ...faults }))

/**
 * Reads `host.json` (or takes the defaults when it is absent).
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<RuntimeProfiles["Type"], InvalidFile | StateRootError, StateRoot> = Effect.gen(function*() {
  const state = yield* StateRoot
  const text = yield* state.readText(layout.host, TextFile.kinds.hostConfig)
  const config = Option.isNone(text) ? defaultHostConfig : yield* parse(state.resolve(layout.host), text.value)
  return fromConfig(config)
})

/**
 * The host as a Layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(RuntimeProfiles, make)
