/**
 * The joints (docs/capability-plugin-lifecycle.md, "Joints (core-owned)"): when
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
 * its `JointReport` and verdict. The pieces: the shared lock, checks and call
 * shapes are `JointRunner`; the peer joints are `PeerJoints`; the capability
 * joints are here, and `make` composes them.
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
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type {
  CapabilityError
} from "../../schema/CapabilityErrors.ts"
import type { Declaration } from "../../schema/Declaration.ts"
import type { InvalidFile } from "../../schema/FileErrors.ts"
import type { Peer } from "../../schema/Peer.ts"
import type { JointSettings } from "./EndpointCalls.ts"
import type { LockErrors, NewPeer, PeerErrors, RemovalSettings } from "./JointRunner.ts"
import type { JointReport } from "./JointReport.ts"
import * as internal from "./internal/provisioner.ts"

export type { Endpoint, JointSettings } from "./EndpointCalls.ts"
export type { NewPeer, RemovalSettings } from "./JointRunner.ts"
export { JointReport } from "./JointReport.ts"
export type { Verdict } from "./JointReport.ts"

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
    ) => Effect.Effect<{ readonly declaration: Declaration; readonly report: JointReport }, InvalidFile | LockErrors>
    /** `sync <name>`, the repair: `sweep-on` again. */
    readonly sync: (
      name: string,
      settings?: JointSettings
    ) => Effect.Effect<JointReport, CapabilityError | InvalidFile | LockErrors>
    /** `unregister <name>`: `off-all`, then delete the declaration and its records. */
    readonly unregister: (
      name: string,
      settings?: RemovalSettings
    ) => Effect.Effect<JointReport, CapabilityError | InvalidFile | LockErrors>
    /** Peer birth: store the peer, then provision each endpoint (`birth`). */
    readonly createPeer: (
      peer: NewPeer,
      settings?: JointSettings
    ) => Effect.Effect<
      { readonly peer: Peer; readonly report: JointReport },
      CapabilityError | LockErrors
    >
    /** Declare a runtime (or repair it) and provision its endpoints (`birth`). */
    readonly addRuntime: (
      personality: string,
      runtime: string,
      settings?: JointSettings
    ) => Effect.Effect<{ readonly peer: Peer; readonly report: JointReport }, PeerErrors | CapabilityError>
    /** Make a runtime the default; converging onto an unwired runtime wires it (`birth`). */
    readonly defaultRuntime: (
      personality: string,
      runtime: string,
      settings?: JointSettings
    ) => Effect.Effect<
      { readonly peer: Peer; readonly wired: boolean; readonly report: JointReport },
      PeerErrors | CapabilityError
    >
    /** Unprovision each endpoint (`remove`), then purge the peer's state. */
    readonly removePeer: (
      personality: string,
      settings?: RemovalSettings
    ) => Effect.Effect<JointReport, PeerErrors | CapabilityError>
    /** Unprovision the runtime's endpoints (`remove`), then drop the runtime. Not live endpoints. */
    readonly removeRuntime: (
      personality: string,
      runtime: string,
      settings?: JointSettings
    ) => Effect.Effect<
      { readonly peer: Peer; readonly report: JointReport },
      PeerErrors | CapabilityError
    >
  }
>() {}

/**
 * The provisioner as a Layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(Provisioner, internal.make)
