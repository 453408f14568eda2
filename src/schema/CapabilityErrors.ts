/**
 * Every failure of the capability part that a caller can act on. Messages name
 * the file, the field and the rule. Which of them are refused input (CLI exit 2)
 * is the exit policy's (`ExitPolicy.ts`).
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { FamilyTypeId } from "./ErrorFamily.ts"
import type { InvalidFile } from "./FileErrors.ts"

/**
 * A declaration, peer file, `host.json` or endpoint records file that breaks a rule; its `reason`
 * says which.
 * @since 0.1.0
 * @category errors
 */
export { InvalidFile } from "./FileErrors.ts"

/**
 * Why a capability or peer verb refused its input (refused input: CLI exit 2), each reason with
 * the fields it fills: `InvalidName` (`kind`, `value`, `rule`: a name given on the command line
 * that breaks the name rule), `UnknownCapability` (`capability`, `file`: no stored declaration),
 * `UnknownPeer` (`personality`, `file`: no peer file), `PeerAlreadyExists` (`personality`, `file`:
 * `peer create` of a personality that has one), `UnknownRuntime` (`runtime`, `known`: neither an
 * agent runtime nor a channel of this host, see host.json), `RuntimeNotWired` (`personality`,
 * `runtime`: `remove-runtime` of a runtime the peer has not declared), `DefaultRuntimeRemoval`
 * (`personality`, `runtime`: the default runtime cannot be removed), `InvalidCwd` (`path`, `rule`:
 * a peer's working directory that is not an existing directory), `InvalidJointSettings`
 * (`setting`, `value`, `rule`: a timeout or a concurrency below 1).
 * @since 0.1.0
 * @category models
 */
const CapabilityErrorReason = Schema.Literal(
  "InvalidName",
  "UnknownCapability",
  "UnknownPeer",
  "PeerAlreadyExists",
  "UnknownRuntime",
  "RuntimeNotWired",
  "DefaultRuntimeRemoval",
  "InvalidCwd",
  "InvalidJointSettings"
)

/**
 * Why a capability or peer verb refused its input.
 * @since 0.1.0
 * @category models
 */
type CapabilityErrorReason = typeof CapabilityErrorReason.Type

/**
 * A capability or peer verb that refused its input; `reason` says why (`CapabilityErrorReason`),
 * and its `name` is the reason, the tag `--json` prints (docs/cli.md, "Error tags and the
 * library's error families").
 * @since 0.1.0
 * @category errors
 */
export class CapabilityError extends Schema.TaggedError<CapabilityError>()("CapabilityError", {
  reason: CapabilityErrorReason,
  /** `InvalidName`: what the name names (`capability`, `peer`, `runtime`). */
  kind: Schema.optional(Schema.String),
  /** `InvalidName`, `InvalidJointSettings`: the value given. */
  value: Schema.optional(Schema.String),
  /** `InvalidName`, `InvalidCwd`, `InvalidJointSettings`: the rule it breaks. */
  rule: Schema.optional(Schema.String),
  /** `UnknownCapability`: the capability. */
  capability: Schema.optional(Schema.String),
  /** `UnknownCapability`, `UnknownPeer`, `PeerAlreadyExists`: the file looked for, or found. */
  file: Schema.optional(Schema.String),
  /** `UnknownPeer`, `PeerAlreadyExists`, `RuntimeNotWired`, `DefaultRuntimeRemoval`: the peer. */
  personality: Schema.optional(Schema.String),
  /** `UnknownRuntime`, `RuntimeNotWired`, `DefaultRuntimeRemoval`: the runtime. */
  runtime: Schema.optional(Schema.String),
  /** `UnknownRuntime`: the runtimes this host knows. */
  known: Schema.optional(Schema.Array(Schema.String)),
  /** `InvalidCwd`: the path given. */
  path: Schema.optional(Schema.String),
  /** `InvalidJointSettings`: the setting (`--timeout-ms`, `--concurrency`). */
  setting: Schema.optional(Schema.String)
}) {
  /** Marks a family's error (`ErrorFamily.printedTag`). */
  get [FamilyTypeId](): true {
    return true
  }
  /** The reason: the tag these failures had before they were one family, printed by `--json`. */
  override get name(): CapabilityErrorReason {
    return this.reason
  }
  override get message() {
    switch (this.reason) {
      case "InvalidName":
        return `invalid ${this.kind} ${JSON.stringify(this.value)}: ${this.rule}`
      case "UnknownCapability":
        return `unknown capability ${this.capability}: no declaration at ${this.file}`
      case "UnknownPeer":
        return `unknown peer ${this.personality}: no peer file at ${this.file}`
      case "PeerAlreadyExists":
        return `peer ${this.personality} already exists (${this.file})`
      case "UnknownRuntime":
        return `unknown runtime ${this.runtime}: this host knows ${(this.known ?? []).join(", ")} (host.json)`
      case "RuntimeNotWired":
        return `peer ${this.personality} does not declare runtime ${this.runtime}`
      case "DefaultRuntimeRemoval":
        return `runtime ${this.runtime} is the default runtime of peer ${this.personality}: ` +
          `make another runtime the default first (city peer default-runtime)`
      case "InvalidCwd":
        return `invalid --cwd ${this.path}: ${this.rule}`
      case "InvalidJointSettings":
        return `invalid ${this.setting} ${this.value}: ${this.rule}`
    }
  }
}

/**
 * Why the state root failed a verb: `StateError` (`operation`, `path`, `detail`, `cause`: reading
 * or writing it failed, `cause` the underlying failure, e.g. the platform's `SystemError`),
 * `RootLockBusy` (`root`, `waitedMs`: another `city` process held the root lock for longer than we
 * were willing to wait), `EndpointBusy` (`endpoint`, `pid`, `owner`, `waitedMs`: a command for an
 * endpoint was not started, another live `city` process was still running one for it after the
 * wait, docs/cli.md, "Commands and signals"), `RootNotFound` (`root`: a verb that needs existing
 * state was pointed at a state root that does not exist, a mistyped `--root`; refused input).
 * @since 0.1.0
 * @category models
 */
const StateRootErrorReason = Schema.Literal("StateError", "RootLockBusy", "EndpointBusy", "RootNotFound")

/**
 * Why the state root failed a verb.
 * @since 0.1.0
 * @category models
 */
type StateRootErrorReason = typeof StateRootErrorReason.Type

/**
 * The state root failed a verb; `reason` says how (`StateRootErrorReason`), and its `name` is the
 * reason, the tag `--json` prints (docs/cli.md, "Error tags and the library's error families").
 * @since 0.1.0
 * @category errors
 */
export class StateRootError extends Schema.TaggedError<StateRootError>()("StateRootError", {
  reason: StateRootErrorReason,
  /** `StateError`: what could not be done (`read`, `write`, ...). */
  operation: Schema.optional(Schema.String),
  /** `StateError`: the file or folder. */
  path: Schema.optional(Schema.String),
  /** `StateError`: what went wrong, on one line. */
  detail: Schema.optional(Schema.String),
  /** `StateError`: the underlying failure. */
  cause: Schema.optional(Schema.Defect),
  /** `RootLockBusy`, `RootNotFound`: the state root. */
  root: Schema.optional(Schema.String),
  /** `RootLockBusy`, `EndpointBusy`: how long it waited. */
  waitedMs: Schema.optional(Schema.Number),
  /** `EndpointBusy`: the endpoint. */
  endpoint: Schema.optional(Schema.String),
  /** `EndpointBusy`: the running command's process. */
  pid: Schema.optional(Schema.Number),
  /** `EndpointBusy`: the `city` process that started it. */
  owner: Schema.optional(Schema.Number)
}) {
  /** Marks a family's error (`ErrorFamily.printedTag`). */
  get [FamilyTypeId](): true {
    return true
  }
  /** The reason: the tag these failures had before they were one family, printed by `--json`. */
  override get name(): StateRootErrorReason {
    return this.reason
  }
  override get message() {
    switch (this.reason) {
      case "StateError":
        return `state root: cannot ${this.operation} ${this.path}: ${this.detail}`
      case "RootLockBusy":
        return `state root ${this.root} is locked by another city process (waited ${this.waitedMs} ms)`
      case "EndpointBusy":
        return `${this.endpoint} is busy: pid ${this.pid}, started by city pid ${this.owner}, was still running after ${this.waitedMs} ms`
      case "RootNotFound":
        return `no state root at ${this.root}: nothing has been created there ` +
          `(check --root or $CITY_ROOT; \`city peer create\` and \`city capability register\` create it)`
    }
  }
}

/**
 * Every failure of the capability part a verb can fail with.
 * @since 0.1.0
 * @category models
 */
export type CapabilityFailure = InvalidFile | CapabilityError | StateRootError
