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
 * Which endpoints there are and how one call runs is `EndpointCalls`; where the
 * last call per endpoint is kept is `EndpointRecords`; what a joint came to is
 * its `JointReport` and verdict.
 *
 * Failure policy, as each report's `verdict`: "At birth and remove, a failure is
 * a loud warning and the flow continues" (`warned`: the caller prints each
 * failed call, exit 0); "For the sweep verbs, failures are listed per endpoint
 * and the exit code is 1" (`failed`). A sweep that could not read a peer file is
 * `failed` too: some endpoint could not be attempted.
 *
 * Decisions where the spec is silent (also in the README):
 * - every joint holds the root lock for its whole run (the state change and its
 *   commands), so joints of concurrent `city` processes never interleave: a peer
 *   created during a sweep is provisioned by one of the two, never by neither;
 * - only `register` and `createPeer` create the state root; every other joint
 *   fails with `RootNotFound` on a root that does not exist;
 * - `add-runtime` on an already-declared runtime is the repair the spec allows:
 *   it provisions that endpoint again (`birth`);
 * - `removeRuntime` unprovisions the endpoints of that runtime with occasion
 *   `remove` (an endpoint is being removed) before dropping it; the default
 *   runtime cannot be removed;
 * - `unregister` deletes the declaration even when some unprovision failed (the
 *   spec's order is unconditional); the failures are listed and exit 1;
 * - `force` on `removePeer` / `unregister` removes a peer file or a declaration
 *   that is invalid (without it the joint refuses, and the error says so). No
 *   command can run without a valid file, so every endpoint the records show
 *   as provisioned is reported as a `failed` outcome "not unprovisioned"
 *   (a warning for `removePeer`, exit 1 for `unregister`). On a valid file
 *   `force` changes nothing.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import {
  DefaultRuntimeRemoval,
  InvalidCwd,
  InvalidDeclaration,
  InvalidName,
  type InvalidJointSettings,
  InvalidPeerFile,
  PeerAlreadyExists,
  type RootLockBusy,
  type RootNotFound,
  RuntimeNotWired,
  type StateError,
  type UnknownCapability,
  type UnknownPeer,
  UnknownRuntime
} from "../../schema/CapabilityErrors.ts"
import type { Declaration } from "../../schema/Declaration.ts"
import { isName, nameRule } from "../../schema/Name.ts"
import type { Occasion } from "../../schema/Occasion.ts"
import type { Peer } from "../../schema/Peer.ts"
import { Capabilities } from "./Capabilities.ts"
import { checkSettings, EndpointCalls, endpointsOf, type JointSettings } from "./EndpointCalls.ts"
import { EndpointRecords } from "./EndpointRecords.ts"
import { Host } from "./Host.ts"
import { type JointReport, notUnprovisioned, verdictOf, withInvalid } from "./JointReport.ts"
import { spans } from "../Observability.ts"
import { Peers } from "./Peers.ts"
import { StateRoot } from "./StateRoot.ts"

export { type Endpoint, endpointsOf, type JointSettings } from "./EndpointCalls.ts"
export type { JointReport, Verdict } from "./JointReport.ts"

/**
 * The settings of a removal joint: per-call settings, and `force` to remove an invalid file.
 * @since 0.1.0
 * @category models
 */
export interface RemovalSettings extends JointSettings {
  /** Remove the peer file or the declaration even if it is invalid (nothing can be unprovisioned then). */
  readonly force?: boolean
}

/**
 * What `peer create` is given: a personality, a working directory and runtimes.
 * @since 0.1.0
 * @category models
 */
export interface NewPeer {
  /** The new peer's personality, also its file name. */
  readonly personality: string
  /** Its working directory, resolved to an absolute path; it must exist. */
  readonly cwd: string
  /** Its runtimes, at least one; the first is the default runtime. */
  readonly runtimes: ReadonlyArray<string>
}

type LockErrors = StateError | RootLockBusy | RootNotFound | InvalidJointSettings
type PeerErrors = UnknownPeer | InvalidPeerFile | LockErrors

/**
 * The joints: every verb that changes declarations or peers and runs their provisioning calls.
 * @since 0.1.0
 * @category tags
 */
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
      settings?: RemovalSettings
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
      settings?: RemovalSettings
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
  }
>() {}

const checkName = (kind: string, value: string) =>
  isName(value) ? Effect.void : Effect.fail(new InvalidName({ kind, value, rule: nameRule }))

/**
 * Makes the provisioner on the capability services.
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<
  Provisioner["Type"],
  never,
  StateRoot | Host | Capabilities | Peers | EndpointCalls | EndpointRecords | FileSystem.FileSystem | Path.Path
> = Effect.gen(function*() {
  const state = yield* StateRoot
  const host = yield* Host
  const capabilities = yield* Capabilities
  const peersStore = yield* Peers
  const calls = yield* EndpointCalls
  const records = yield* EndpointRecords
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path

  /** Checks the settings, then runs `body` under the root lock. */
  const locked = <A, E>(settings: JointSettings | undefined, body: Effect.Effect<A, E>) =>
    Effect.zipRight(checkSettings(settings), Effect.scoped(Effect.zipRight(state.lock, body)))

  const checkRuntime = (runtime: string) =>
    Effect.zipRight(
      checkName("runtime", runtime),
      host.isKnown(runtime) ? Effect.void : Effect.fail(new UnknownRuntime({ runtime, known: host.known }))
    )

  /** Birth/remove of one peer's runtimes: every valid declaration, the given runtimes only. */
  const peerJoint = (peer: Peer, runtimes: ReadonlyArray<string>, occasion: Occasion, settings?: JointSettings) =>
    Effect.gen(function*() {
      const declarations = yield* capabilities.scan
      const endpoints = declarations.valid.flatMap((declaration) =>
        endpointsOf(declaration, [peer], host.isAgent).filter((e) => runtimes.includes(e.runtime))
      )
      // A few calls at most, and none without a declaration: no spawner is started for nothing.
      if (endpoints.length > 0) yield* calls.prepare
      return verdictOf("joint", yield* calls.run(endpoints, occasion, settings), declarations.invalid)
    }).pipe(Effect.withSpan(spans.joint, { attributes: { peer: peer.personality, runtimes: runtimes.join(","), occasion } }))

  /** A sweep of one declaration over every registered peer. */
  const sweep = (declaration: Declaration, occasion: Occasion, settings?: JointSettings) =>
    Effect.gen(function*() {
      // The runner starts (the spawner process) while the peer files are read.
      yield* calls.prepare
      const peers = yield* peersStore.scan
      const done = yield* calls.run(endpointsOf(declaration, peers.valid, host.isAgent), occasion, settings)
      return verdictOf("sweep", done, peers.invalid)
    }).pipe(Effect.withSpan(spans.joint, { attributes: { capability: declaration.capability, occasion } }))

  const register = (file: string, settings?: JointSettings) =>
    Effect.gen(function*() {
      const declaration = yield* capabilities.readFile(file)
      yield* checkSettings(settings)
      yield* state.ensure
      return yield* locked(settings, Effect.gen(function*() {
        yield* capabilities.store(declaration)
        const report = yield* sweep(declaration, "sweep-on", settings)
        return { declaration, report }
      }))
    })

  const sync = (name: string, settings?: JointSettings) =>
    Effect.zipRight(
      checkName("capability", name),
      locked(settings, Effect.flatMap(capabilities.get(name), (declaration) => sweep(declaration, "sweep-on", settings)))
    )

  /** `unregister --force` of an invalid declaration: nothing can run; say what stays provisioned. */
  const forceUnregister = (name: string, invalid: InvalidDeclaration) =>
    Effect.gen(function*() {
      const recorded = yield* records.get(name)
      const outcomes = notUnprovisioned(recorded.endpoints, "off-all", `the declaration is invalid (${invalid.rule})`)
      yield* capabilities.remove(name)
      yield* records.remove(name)
      return {
        outcomes,
        invalid: [invalid],
        verdict: outcomes.length > 0 ? "failed" : "warned"
      } satisfies JointReport
    })

  const unregister = (name: string, settings?: RemovalSettings) =>
    Effect.zipRight(
      checkName("capability", name),
      locked(settings, Effect.gen(function*() {
        const declaration = yield* Effect.either(capabilities.get(name))
        if (declaration._tag === "Left") {
          const e = declaration.left
          if (e._tag !== "InvalidDeclaration") return yield* e
          if (settings?.force === true) return yield* forceUnregister(name, e)
          return yield* new InvalidDeclaration({
            file: e.file,
            field: e.field,
            rule: e.rule,
            hint: `\`city capability unregister ${name} --force\` deletes it; its endpoints cannot be unprovisioned`
          })
        }
        const report = yield* sweep(declaration.right, "off-all", settings)
        yield* capabilities.remove(name)
        yield* records.remove(name)
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
      yield* checkSettings(settings)
      yield* state.ensure
      return yield* locked(settings, Effect.gen(function*() {
        if (yield* peersStore.exists(peer.personality)) {
          return yield* new PeerAlreadyExists({ personality: peer.personality, file: peersStore.file(peer.personality) })
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
      return yield* locked(settings, Effect.gen(function*() {
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
      return yield* locked(settings, Effect.gen(function*() {
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
          : { outcomes: [], invalid: [], verdict: "ok" }
        return { peer, wired, report }
      }))
    })

  /** `removePeer --force` of an invalid peer file: nothing can run; say what stays provisioned. */
  const forceRemovePeer = (personality: string, invalid: InvalidPeerFile) =>
    Effect.gen(function*() {
      const recorded = yield* records.ofPeer(personality)
      const outcomes = notUnprovisioned(recorded, "remove", `the peer file is invalid (${invalid.rule})`)
      yield* peersStore.purge(personality)
      const invalidRecords = yield* records.forget(recorded)
      return { outcomes, invalid: [invalid, ...invalidRecords], verdict: "warned" } satisfies JointReport
    })

  const removePeer = (personality: string, settings?: RemovalSettings) =>
    Effect.zipRight(
      checkName("personality", personality),
      locked(settings, Effect.gen(function*() {
        const peer = yield* Effect.either(peersStore.get(personality))
        if (peer._tag === "Left") {
          const e = peer.left
          if (e._tag !== "InvalidPeerFile") return yield* e
          if (settings?.force === true) return yield* forceRemovePeer(personality, e)
          return yield* new InvalidPeerFile({
            file: e.file,
            field: e.field,
            rule: e.rule,
            hint: `\`city peer remove ${personality} --force\` removes it; its endpoints cannot be unprovisioned`
          })
        }
        const report = yield* peerJoint(peer.right, peer.right.runtimes, "remove", settings)
        yield* peersStore.purge(personality)
        return withInvalid(report, yield* records.forget(report.outcomes))
      }))
    )

  const removeRuntime = (personality: string, runtime: string, settings?: JointSettings) =>
    Effect.gen(function*() {
      yield* checkName("personality", personality)
      yield* checkName("runtime", runtime)
      return yield* locked(settings, Effect.gen(function*() {
        const current = yield* peersStore.get(personality)
        if (!current.runtimes.includes(runtime)) return yield* new RuntimeNotWired({ personality, runtime })
        if (current.default_runtime === runtime) return yield* new DefaultRuntimeRemoval({ personality, runtime })
        const report = yield* peerJoint(current, [runtime], "remove", settings)
        const peer: Peer = { ...current, runtimes: current.runtimes.filter((r) => r !== runtime) }
        yield* peersStore.put(peer)
        yield* peersStore.purgeRuntime(personality, runtime)
        return { peer, report: withInvalid(report, yield* records.forget(report.outcomes)) }
      }))
    })

  return Provisioner.of({
    register,
    sync,
    unregister,
    createPeer,
    addRuntime,
    defaultRuntime,
    removePeer,
    removeRuntime
  })
})

/**
 * The provisioner as a Layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(Provisioner, make)
