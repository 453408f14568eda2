/**
 * The joints (spec/capability-plugin-lifecycle.md, "Joints (core-owned)"): when
 * and for whom the declared commands run.
 *
 * | joint | command | `{occasion}` |
 * |---|---|---|
 * | peer birth: `createPeer`, `addRuntime`, `defaultRuntime` onto an unwired runtime | provision each new endpoint | `birth` |
 * | `register` / `sync` | provision every endpoint of every registered peer | `sweep-on` |
 * | `removePeer` | unprovision each endpoint, before the state purge | `remove` |
 * | `unregister` | unprovision every endpoint, then delete the declaration | `off-all` |
 *
 * An endpoint is a (peer, runtime) pair whose runtime is declared by the peer,
 * an agent runtime of this host, and listed in the declaration's `runtimes`.
 *
 * Failure policy: at birth and remove a failed call is reported (the caller
 * prints a loud warning) and the flow completes; sweeps attempt every endpoint
 * and report each outcome. Calls run with bounded concurrency. Every call
 * appends one line to the lifecycle log, and the last call per endpoint is kept
 * in `state/endpoints/<capability>.json` for `list`.
 *
 * Decisions where the spec is silent (also in the README):
 * - every joint holds the root lock for its whole run (the state change and its
 *   commands), so joints of concurrent `city` processes never interleave: a peer
 *   created during a sweep is provisioned by one of the two, never by neither;
 * - `add-runtime` on an already-declared runtime is the repair the spec allows:
 *   it provisions that endpoint again (`birth`);
 * - `removeRuntime` unprovisions the endpoints of that runtime with occasion
 *   `remove` (an endpoint is being removed) before dropping it; the default
 *   runtime cannot be removed;
 * - `unregister` deletes the declaration even when some unprovision failed (the
 *   spec's order is unconditional); the failures are listed and exit 1;
 * - commands run with the state root as their working directory (the peer's cwd
 *   is passed as `{cwd}`), so a call never depends on where the operator stood;
 * - a runtime with a private directory gets it created before each call.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import {
  DefaultRuntimeRemoval,
  type InvalidDeclaration,
  InvalidCwd,
  InvalidName,
  type InvalidPeerFile,
  PeerAlreadyExists,
  type RootLockBusy,
  RuntimeNotWired,
  type StateError,
  type UnknownCapability,
  UnknownPeer,
  UnknownRuntime
} from "../../schema/CapabilityErrors.ts"
import type { Declaration } from "../../schema/Declaration.ts"
import { isName, nameRule } from "../../schema/Name.ts"
import { commandOf, type Occasion } from "../../schema/Occasion.ts"
import {
  type EndpointOutcome,
  type EndpointRecord,
  EndpointRecords,
  identityOf,
  type Outcome
} from "../../schema/Outcome.ts"
import type { Peer } from "../../schema/Peer.ts"
import { Capabilities } from "./Capabilities.ts"
import { CommandRunner, type Substitutions, buildArgv } from "./CommandRunner.ts"
import { Host } from "./Host.ts"
import { LifecycleLog } from "./LifecycleLog.ts"
import { Peers } from "./Peers.ts"
import { StateRoot } from "./StateRoot.ts"

/** One endpoint of one capability. */
export interface Endpoint {
  readonly declaration: Declaration
  readonly peer: Peer
  readonly runtime: string
}

/** Per-call settings of a joint. */
export interface JointSettings {
  /** Timeout per call (default 120 s). */
  readonly timeout?: Duration.DurationInput
  /** Calls run at once (default 4). */
  readonly concurrency?: number
  /** Called after each call with (done, total). */
  readonly onProgress?: (done: number, total: number) => Effect.Effect<void>
}

/** What a joint did: each endpoint's outcome, and every invalid file it met (to report loudly). */
export interface JointReport {
  readonly outcomes: ReadonlyArray<EndpointOutcome>
  readonly invalid: ReadonlyArray<InvalidDeclaration | InvalidPeerFile>
}

export interface EndpointView {
  readonly personality: string
  readonly runtime: string
  readonly identity: string
  readonly last: Option.Option<EndpointRecord>
}

export interface CapabilityView {
  readonly declaration: Declaration
  readonly endpoints: ReadonlyArray<EndpointView>
}

export interface Overview {
  readonly capabilities: ReadonlyArray<CapabilityView>
  readonly invalid: ReadonlyArray<InvalidDeclaration | InvalidPeerFile>
}

export interface NewPeer {
  readonly personality: string
  readonly cwd: string
  readonly runtimes: ReadonlyArray<string>
}

type LockErrors = StateError | RootLockBusy
type PeerErrors = UnknownPeer | InvalidPeerFile | LockErrors

export class Provisioner extends Context.Tag("effect-city/Provisioner")<
  Provisioner,
  {
    /** `register <file>`: validate, store (replacing any version), then `sweep-on`. */
    readonly register: (
      file: string,
      settings?: JointSettings
    ) => Effect.Effect<{ readonly declaration: Declaration; readonly report: JointReport }, InvalidDeclaration | LockErrors>
    /** `sync <name>`, the repair: `sweep-on` again. */
    readonly sync: (
      name: string,
      settings?: JointSettings
    ) => Effect.Effect<JointReport, UnknownCapability | InvalidDeclaration | InvalidName | LockErrors>
    /** `unregister <name>`: `off-all`, then delete the declaration and its records. */
    readonly unregister: (
      name: string,
      settings?: JointSettings
    ) => Effect.Effect<JointReport, UnknownCapability | InvalidDeclaration | InvalidName | LockErrors>
    /** Peer birth: store the peer, then provision each endpoint (`birth`). */
    readonly createPeer: (
      peer: NewPeer,
      settings?: JointSettings
    ) => Effect.Effect<
      { readonly peer: Peer; readonly report: JointReport },
      PeerAlreadyExists | InvalidName | UnknownRuntime | InvalidCwd | LockErrors
    >
    /** Declare a runtime (or repair it) and provision its endpoints (`birth`). */
    readonly addRuntime: (
      personality: string,
      runtime: string,
      settings?: JointSettings
    ) => Effect.Effect<{ readonly peer: Peer; readonly report: JointReport }, PeerErrors | InvalidName | UnknownRuntime>
    /** Make a runtime the default; converging onto an unwired runtime wires it (`birth`). */
    readonly defaultRuntime: (
      personality: string,
      runtime: string,
      settings?: JointSettings
    ) => Effect.Effect<
      { readonly peer: Peer; readonly wired: boolean; readonly report: JointReport },
      PeerErrors | InvalidName | UnknownRuntime
    >
    /** Unprovision each endpoint (`remove`), then purge the peer's state. */
    readonly removePeer: (
      personality: string,
      settings?: JointSettings
    ) => Effect.Effect<JointReport, PeerErrors | InvalidName>
    /** Unprovision the runtime's endpoints (`remove`), then drop the runtime. Not live endpoints. */
    readonly removeRuntime: (
      personality: string,
      runtime: string,
      settings?: JointSettings
    ) => Effect.Effect<
      { readonly peer: Peer; readonly report: JointReport },
      PeerErrors | InvalidName | RuntimeNotWired | DefaultRuntimeRemoval
    >
    /** Every declaration with its endpoints and their last recorded state. */
    readonly overview: Effect.Effect<Overview, StateError>
    /** Every peer, and every invalid peer file. */
    readonly peers: Effect.Effect<
      { readonly peers: ReadonlyArray<Peer>; readonly invalid: ReadonlyArray<InvalidPeerFile> },
      StateError
    >
  }
>() {}

/** The endpoints of one declaration among the given peers, in personality then runtime order. */
export const endpointsOf = (
  declaration: Declaration,
  peers: ReadonlyArray<Peer>,
  isAgent: (runtime: string) => boolean
): ReadonlyArray<Endpoint> =>
  [...peers]
    .sort((a, b) => a.personality < b.personality ? -1 : a.personality > b.personality ? 1 : 0)
    .flatMap((peer) =>
      peer.runtimes
        .filter((runtime) => isAgent(runtime) && declaration.runtimes.includes(runtime))
        .map((runtime) => ({ declaration, peer, runtime }))
    )

export const recordsDir = "state/endpoints"

const checkName = (kind: string, value: string) =>
  isName(value) ? Effect.void : Effect.fail(new InvalidName({ kind, value, rule: nameRule }))

export const make: Effect.Effect<
  Provisioner["Type"],
  never,
  StateRoot | Host | Capabilities | Peers | CommandRunner | LifecycleLog | FileSystem.FileSystem | Path.Path
> = Effect.gen(function*() {
  const state = yield* StateRoot
  const host = yield* Host
  const capabilities = yield* Capabilities
  const peersStore = yield* Peers
  const runner = yield* CommandRunner
  const log = yield* LifecycleLog
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path

  const locked = <A, E>(body: Effect.Effect<A, E>): Effect.Effect<A, E | LockErrors> =>
    Effect.scoped(Effect.zipRight(state.lock, body))

  const checkRuntime = (runtime: string) =>
    Effect.zipRight(
      checkName("runtime", runtime),
      host.isKnown(runtime) ? Effect.void : Effect.fail(new UnknownRuntime({ runtime, known: host.known }))
    )

  /** Runs one call: substitute, spawn (or refuse before spawn), log. */
  const call = (endpoint: Endpoint, occasion: Occasion, timeout: Duration.DurationInput) =>
    Effect.gen(function*() {
      const { declaration, peer, runtime } = endpoint
      const privateDir = Option.map(host.privateDir(runtime, peer.personality), state.resolve)
      const values: Substitutions = {
        personality: peer.personality,
        runtime,
        cwd: peer.cwd,
        occasion,
        ...(Option.isSome(privateDir) ? { privateDir: privateDir.value } : {})
      }
      const argv = buildArgv(declaration[commandOf(occasion)], values)
      let outcome: Outcome
      if (Either.isLeft(argv)) {
        outcome = {
          state: "failed",
          ms: 0,
          detail: `{${argv.left}} is not available: runtime ${runtime} has no private directory; refused before spawn`
        }
      } else {
        if (Option.isSome(privateDir)) {
          yield* fs.makeDirectory(privateDir.value, { recursive: true }).pipe(Effect.ignore)
        }
        const [command, ...args] = argv.right
        outcome = yield* runner.run({ command, args, cwd: state.root, privateDir, timeout })
      }
      const identity = identityOf(runtime, peer.personality)
      const now = yield* DateTime.now
      yield* log.append([
        ["ts", DateTime.formatIso(now)],
        ["ev", "capability-provision"],
        ["capability", declaration.capability],
        ["identity", identity],
        ["occasion", occasion],
        ["state", outcome.state],
        ["exit", outcome.exit],
        ["ms", Math.round(outcome.ms)],
        ["detail", outcome.detail]
      ])
      const result: EndpointOutcome = {
        capability: declaration.capability,
        personality: peer.personality,
        runtime,
        identity,
        occasion,
        ...outcome
      }
      return result
    })

  const decodeRecords = Schema.decodeUnknownOption(EndpointRecords)

  const readRecords = (capability: string) =>
    state.readText(`${recordsDir}/${capability}.json`).pipe(
      Effect.map((text) =>
        Option.flatMap(text, (t) => {
          const json = Either.try(() => JSON.parse(t) as unknown)
          return Either.isRight(json) ? decodeRecords(json.right) : Option.none()
        }).pipe(Option.getOrElse((): EndpointRecords => ({})))
      )
    )

  /** Applies `change` to the records of each capability named; drops an emptied file. */
  const updateRecords = (
    capabilities: Iterable<string>,
    change: (capability: string, records: Record<string, EndpointRecord>) => void
  ) =>
    Effect.forEach(new Set(capabilities), (capability) =>
      Effect.gen(function*() {
        const records = { ...(yield* readRecords(capability)) }
        change(capability, records)
        yield* Object.keys(records).length === 0
          ? state.remove(`${recordsDir}/${capability}.json`)
          : state.writeJson(`${recordsDir}/${capability}.json`, records)
      }), { discard: true })

  /** Runs the calls of a joint with bounded concurrency and records each endpoint's last state. */
  const runAll = (endpoints: ReadonlyArray<Endpoint>, occasion: Occasion, settings: JointSettings = {}) =>
    Effect.gen(function*() {
      const timeout = settings.timeout ?? Duration.seconds(120)
      const total = endpoints.length
      let done = 0
      const outcomes = yield* Effect.forEach(
        endpoints,
        (endpoint) =>
          call(endpoint, occasion, timeout).pipe(
            Effect.tap(() => {
              done++
              return settings.onProgress === undefined ? Effect.void : settings.onProgress(done, total)
            })
          ),
        { concurrency: Math.max(1, settings.concurrency ?? 4) }
      )
      const at = DateTime.formatIso(yield* DateTime.now)
      yield* updateRecords(outcomes.map((o) => o.capability), (capability, records) => {
        for (const o of outcomes) {
          if (o.capability !== capability) continue
          records[o.identity] = {
            state: o.state,
            occasion: o.occasion,
            at,
            ...(o.exit === undefined ? {} : { exit: o.exit }),
            ...(o.detail === undefined ? {} : { detail: o.detail })
          }
        }
      })
      return outcomes
    })

  /** Birth/remove of one peer's runtimes: every valid declaration, the given runtimes only. */
  const peerJoint = (peer: Peer, runtimes: ReadonlyArray<string>, occasion: Occasion, settings?: JointSettings) =>
    Effect.gen(function*() {
      const declarations = yield* capabilities.scan
      const endpoints = declarations.valid.flatMap((declaration) =>
        endpointsOf(declaration, [peer], host.isAgent).filter((e) => runtimes.includes(e.runtime))
      )
      const outcomes = yield* runAll(endpoints, occasion, settings)
      return { outcomes, invalid: declarations.invalid } satisfies JointReport
    })

  /** A sweep of one declaration over every registered peer. */
  const sweep = (declaration: Declaration, occasion: Occasion, settings?: JointSettings) =>
    Effect.gen(function*() {
      const peers = yield* peersStore.scan
      const outcomes = yield* runAll(endpointsOf(declaration, peers.valid, host.isAgent), occasion, settings)
      return { outcomes, invalid: peers.invalid } satisfies JointReport
    })

  const register = (file: string, settings?: JointSettings) =>
    Effect.gen(function*() {
      const declaration = yield* capabilities.readFile(file)
      return yield* locked(Effect.gen(function*() {
        yield* capabilities.store(declaration)
        const report = yield* sweep(declaration, "sweep-on", settings)
        return { declaration, report }
      }))
    })

  const sync = (name: string, settings?: JointSettings) =>
    Effect.zipRight(
      checkName("capability", name),
      locked(Effect.flatMap(capabilities.get(name), (declaration) => sweep(declaration, "sweep-on", settings)))
    )

  const unregister = (name: string, settings?: JointSettings) =>
    Effect.zipRight(
      checkName("capability", name),
      locked(Effect.gen(function*() {
        const declaration = yield* capabilities.get(name)
        const report = yield* sweep(declaration, "off-all", settings)
        yield* capabilities.remove(name)
        yield* state.remove(`${recordsDir}/${name}.json`)
        return report
      }))
    )

  const createPeer = (input: NewPeer, settings?: JointSettings) =>
    Effect.gen(function*() {
      yield* checkName("personality", input.personality)
      const runtimes = [...new Set(input.runtimes)]
      const first = runtimes[0]
      if (first === undefined) {
        return yield* new InvalidName({ kind: "runtime list", value: "", rule: "a peer needs at least one --runtime" })
      }
      yield* Effect.forEach(runtimes, checkRuntime, { discard: true })
      const cwd = path.resolve(input.cwd)
      const info = yield* fs.stat(cwd).pipe(
        Effect.mapError(() => new InvalidCwd({ path: cwd, rule: "does not exist" }))
      )
      if (info.type !== "Directory") return yield* new InvalidCwd({ path: cwd, rule: "is not a directory" })
      const peer: Peer = { schema: 1, personality: input.personality, cwd, runtimes, default_runtime: first }
      return yield* locked(Effect.gen(function*() {
        if (yield* peersStore.exists(peer.personality)) {
          return yield* new PeerAlreadyExists({
            personality: peer.personality,
            file: state.resolve(`peers/${peer.personality}.json`)
          })
        }
        yield* peersStore.put(peer)
        const report = yield* peerJoint(peer, peer.runtimes, "birth", settings)
        return { peer, report }
      }))
    })

  const addRuntime = (personality: string, runtime: string, settings?: JointSettings) =>
    Effect.gen(function*() {
      yield* checkName("personality", personality)
      yield* checkRuntime(runtime)
      return yield* locked(Effect.gen(function*() {
        const current = yield* peersStore.get(personality)
        const peer: Peer = current.runtimes.includes(runtime)
          ? current
          : { ...current, runtimes: [...current.runtimes, runtime] }
        if (peer !== current) yield* peersStore.put(peer)
        const report = yield* peerJoint(peer, [runtime], "birth", settings)
        return { peer, report }
      }))
    })

  const defaultRuntime = (personality: string, runtime: string, settings?: JointSettings) =>
    Effect.gen(function*() {
      yield* checkName("personality", personality)
      yield* checkRuntime(runtime)
      return yield* locked(Effect.gen(function*() {
        const current = yield* peersStore.get(personality)
        const wired = !current.runtimes.includes(runtime)
        const peer: Peer = {
          ...current,
          runtimes: wired ? [...current.runtimes, runtime] : current.runtimes,
          default_runtime: runtime
        }
        yield* peersStore.put(peer)
        const report: JointReport = wired
          ? yield* peerJoint(peer, [runtime], "birth", settings)
          : { outcomes: [], invalid: [] }
        return { peer, wired, report }
      }))
    })

  const forgetEndpoints = (outcomes: ReadonlyArray<EndpointOutcome>) =>
    updateRecords(outcomes.map((o) => o.capability), (capability, records) => {
      for (const o of outcomes) if (o.capability === capability) delete records[o.identity]
    })

  const removePeer = (personality: string, settings?: JointSettings) =>
    Effect.zipRight(
      checkName("personality", personality),
      locked(Effect.gen(function*() {
        const peer = yield* peersStore.get(personality)
        const report = yield* peerJoint(peer, peer.runtimes, "remove", settings)
        yield* peersStore.purge(personality)
        yield* forgetEndpoints(report.outcomes)
        return report
      }))
    )

  const removeRuntime = (personality: string, runtime: string, settings?: JointSettings) =>
    Effect.gen(function*() {
      yield* checkName("personality", personality)
      yield* checkName("runtime", runtime)
      return yield* locked(Effect.gen(function*() {
        const current = yield* peersStore.get(personality)
        if (!current.runtimes.includes(runtime)) return yield* new RuntimeNotWired({ personality, runtime })
        if (current.default_runtime === runtime) return yield* new DefaultRuntimeRemoval({ personality, runtime })
        const report = yield* peerJoint(current, [runtime], "remove", settings)
        const peer: Peer = { ...current, runtimes: current.runtimes.filter((r) => r !== runtime) }
        yield* peersStore.put(peer)
        yield* peersStore.purgeRuntime(personality, runtime)
        yield* forgetEndpoints(report.outcomes)
        return { peer, report }
      }))
    })

  const overview = Effect.gen(function*() {
    const declarations = yield* capabilities.scan
    const peers = yield* peersStore.scan
    const views = yield* Effect.forEach(declarations.valid, (declaration) =>
      Effect.map(readRecords(declaration.capability), (records): CapabilityView => ({
        declaration,
        endpoints: endpointsOf(declaration, peers.valid, host.isAgent).map((e) => {
          const identity = identityOf(e.runtime, e.peer.personality)
          return {
            personality: e.peer.personality,
            runtime: e.runtime,
            identity,
            last: Option.fromNullable(records[identity])
          }
        })
      })))
    return { capabilities: views, invalid: [...declarations.invalid, ...peers.invalid] } satisfies Overview
  })

  const peers = Effect.map(peersStore.scan, (scan) => ({ peers: scan.valid, invalid: scan.invalid }))

  return Provisioner.of({
    register,
    sync,
    unregister,
    createPeer,
    addRuntime,
    defaultRuntime,
    removePeer,
    removeRuntime,
    overview,
    peers
  })
})

export const layer = Layer.effect(Provisioner, make)
