/**
 * How every joint of `Provisioner` runs (docs/capability-plugin-lifecycle.md,
 * "Joints (core-owned)"): the capability services it runs on, the root lock
 * around a joint's whole run, the name and runtime checks, and the two shapes a
 * joint's calls take: `peerJoint` (birth/remove of one peer's runtimes, a
 * warning on failure) and `sweep` (one declaration over every registered peer,
 * exit 1 on failure). `Provisioner` composes the capability joints and
 * `PeerJoints` on one runner; the policy is documented in `Provisioner`'s header.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import {
  type StateRootError,
  CapabilityError
} from "../../schema/CapabilityErrors.ts"
import type { Declaration } from "../../schema/Declaration.ts"
import type { InvalidFile } from "../../schema/FileErrors.ts"
import { isName, nameRule } from "../../schema/Name.ts"
import type { Occasion } from "../../schema/Occasion.ts"
import type { Peer } from "../../schema/Peer.ts"
import { Capabilities } from "./Capabilities.ts"
import { checkSettings, EndpointCalls, endpointsOf, type JointSettings } from "./EndpointCalls.ts"
import { EndpointRecords } from "./EndpointRecords.ts"
import { RuntimeProfiles } from "./RuntimeProfiles.ts"
import { type JointReport, verdictOf } from "./JointReport.ts"
import { spans } from "../Observability.ts"
import { Peers } from "./Peers.ts"
import { ProcessRecords } from "./ProcessRecords.ts"
import { StateRoot } from "../root/StateRoot.ts"

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

/**
 * The failures of any joint that takes the root lock: state, lock, missing root, settings.
 * @since 0.1.0
 * @category models
 */
export type LockErrors = StateRootError | CapabilityError

/**
 * The failures of a joint on an existing peer: unknown or invalid peer file, and the lock's.
 * @since 0.1.0
 * @category models
 */
export type PeerErrors = CapabilityError | InvalidFile | LockErrors

/**
 * Fails with `InvalidName` unless `value` is a valid name; `kind` says what was named.
 * @since 0.1.0
 * @category utils
 */
export const checkName = (kind: string, value: string) =>
  isName(value) ? Effect.void : Effect.fail(new CapabilityError({ reason: "InvalidName", kind, value, rule: nameRule }))

/**
 * What a joint runs with: the services, the root lock, the checks, and the two call shapes.
 * @since 0.1.0
 * @category models
 */
export interface JointRunner {
  /** The state root: `ensure` creates it, `lock` holds it. */
  readonly state: StateRoot["Type"]
  /** The declaration files. */
  readonly capabilities: Capabilities["Type"]
  /** The peer files. */
  readonly peers: Peers["Type"]
  /** The last call per endpoint. */
  readonly records: EndpointRecords["Type"]
  /** To check a new peer's working directory. */
  readonly fs: FileSystem.FileSystem
  /** To resolve a new peer's working directory. */
  readonly path: Path.Path
  /** Checks the settings, then runs `body` under the root lock. */
  readonly locked: <A, E>(
    settings: JointSettings | undefined,
    body: Effect.Effect<A, E>
  ) => Effect.Effect<A, E | LockErrors>
  /** Fails unless `runtime` is a valid name the host knows. */
  readonly checkRuntime: (runtime: string) => Effect.Effect<void, CapabilityError>
  /** Birth/remove of one peer's runtimes: every valid declaration, the given runtimes only. */
  readonly peerJoint: (
    peer: Peer,
    runtimes: ReadonlyArray<string>,
    occasion: Occasion,
    settings?: JointSettings
  ) => Effect.Effect<JointReport, StateRootError>
  /** A sweep of one declaration over every registered peer. */
  readonly sweep: (
    declaration: Declaration,
    occasion: Occasion,
    settings?: JointSettings
  ) => Effect.Effect<JointReport, StateRootError>
}

/**
 * The capability services a joint runs on.
 * @since 0.1.0
 * @category models
 */
export type JointServices =
  | StateRoot
  | RuntimeProfiles
  | Capabilities
  | Peers
  | EndpointCalls
  | EndpointRecords
  | ProcessRecords
  | FileSystem.FileSystem
  | Path.Path

/**
 * Makes the joint runner on the capability services.
 * @since 0.1.0
 * @category constructors
 */
export const makeJointRunner: Effect.Effect<JointRunner, never, JointServices> = Effect.gen(function*() {
  const state = yield* StateRoot
  const profiles = yield* RuntimeProfiles
  const capabilities = yield* Capabilities
  const peers = yield* Peers
  const calls = yield* EndpointCalls
  const records = yield* EndpointRecords
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const processes = yield* ProcessRecords

  // Under the lock, first what a `city` that is gone left running is ended (ProcessRecords.ts).
  const locked = <A, E>(settings: JointSettings | undefined, body: Effect.Effect<A, E>) =>
    Effect.zipRight(
      checkSettings(settings),
      Effect.scoped(Effect.zipRight(Effect.zipRight(state.lock, processes.recover), body))
    )

  const checkRuntime = (runtime: string) =>
    Effect.zipRight(
      checkName("runtime", runtime),
      profiles.isKnown(runtime) ? Effect.void : Effect.fail(new CapabilityError({ reason: "UnknownRuntime", runtime, known: profiles.known }))
    )

  const peerJoint = (peer: Peer, runtimes: ReadonlyArray<string>, occasion: Occasion, settings?: JointSettings) =>
    Effect.gen(function*() {
      const declarations = yield* capabilities.scan
      const endpoints = declarations.valid.flatMap((declaration) =>
        endpointsOf(declaration, [peer], profiles.isAgent).filter((e) => runtimes.includes(e.runtime))
      )
      return verdictOf("joint", yield* calls.run(endpoints, occasion, settings), declarations.invalid)
    }).pipe(Effect.withSpan(spans.joint, { attributes: { peer: peer.personality, runtimes: runtimes.join(","), occasion } }))

  const sweep = (declaration: Declaration, occasion: Occasion, settings?: JointSettings) =>
    Effect.gen(function*() {
      const scanned = yield* peers.scan
      const done = yield* calls.run(endpointsOf(declaration, scanned.valid, profiles.isAgent), occasion, settings)
      return verdictOf("sweep", done, scanned.invalid)
    }).pipe(Effect.withSpan(spans.joint, { attributes: { capability: declaration.capability, occasion } }))

  return { state, capabilities, peers, records, fs, path, locked, checkRuntime, peerJoint, sweep }
})
