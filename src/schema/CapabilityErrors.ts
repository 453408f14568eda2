/**
 * Every failure of the capability part that a caller can act on. Messages name
 * the file, the field and the rule. Which of them are refused input (CLI exit 2)
 * is the exit policy's (`ExitPolicy.ts`).
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import type { InvalidFile } from "./FileErrors.ts"

/**
 * A declaration, peer file, `host.json` or endpoint records file that breaks a rule; its `reason`
 * says which.
 * @since 0.1.0
 * @category errors
 */
export { InvalidFile } from "./FileErrors.ts"

/**
 * A name given on the command line that breaks the name rule.
 * @since 0.1.0
 * @category errors
 */
export class InvalidName extends Schema.TaggedError<InvalidName>()("InvalidName", {
  kind: Schema.String,
  value: Schema.String,
  rule: Schema.String
}) {
  override get message() {
    return `invalid ${this.kind} ${JSON.stringify(this.value)}: ${this.rule}`
  }
}

/**
 * A capability name with no stored declaration.
 * @since 0.1.0
 * @category errors
 */
export class UnknownCapability extends Schema.TaggedError<UnknownCapability>()("UnknownCapability", {
  capability: Schema.String,
  file: Schema.String
}) {
  override get message() {
    return `unknown capability ${this.capability}: no declaration at ${this.file}`
  }
}

/**
 * A personality with no peer file.
 * @since 0.1.0
 * @category errors
 */
export class UnknownPeer extends Schema.TaggedError<UnknownPeer>()("UnknownPeer", {
  personality: Schema.String,
  file: Schema.String
}) {
  override get message() {
    return `unknown peer ${this.personality}: no peer file at ${this.file}`
  }
}

/**
 * `peer create` of a personality that already has a peer file.
 * @since 0.1.0
 * @category errors
 */
export class PeerAlreadyExists extends Schema.TaggedError<PeerAlreadyExists>()("PeerAlreadyExists", {
  personality: Schema.String,
  file: Schema.String
}) {
  override get message() {
    return `peer ${this.personality} already exists (${this.file})`
  }
}

/**
 * A runtime this host neither runs as an agent nor knows as a channel (see host.json).
 * @since 0.1.0
 * @category errors
 */
export class UnknownRuntime extends Schema.TaggedError<UnknownRuntime>()("UnknownRuntime", {
  runtime: Schema.String,
  known: Schema.Array(Schema.String)
}) {
  override get message() {
    return `unknown runtime ${this.runtime}: this host knows ${this.known.join(", ")} (host.json)`
  }
}

/**
 * `remove-runtime` of a runtime the peer has not declared.
 * @since 0.1.0
 * @category errors
 */
export class RuntimeNotWired extends Schema.TaggedError<RuntimeNotWired>()("RuntimeNotWired", {
  personality: Schema.String,
  runtime: Schema.String
}) {
  override get message() {
    return `peer ${this.personality} does not declare runtime ${this.runtime}`
  }
}

/**
 * The default runtime cannot be removed; another one must become the default first.
 * @since 0.1.0
 * @category errors
 */
export class DefaultRuntimeRemoval extends Schema.TaggedError<DefaultRuntimeRemoval>()("DefaultRuntimeRemoval", {
  personality: Schema.String,
  runtime: Schema.String
}) {
  override get message() {
    return `runtime ${this.runtime} is the default runtime of peer ${this.personality}: ` +
      `make another runtime the default first (city peer default-runtime)`
  }
}

/**
 * A peer's working directory that is not an existing directory.
 * @since 0.1.0
 * @category errors
 */
export class InvalidCwd extends Schema.TaggedError<InvalidCwd>()("InvalidCwd", {
  path: Schema.String,
  rule: Schema.String
}) {
  override get message() {
    return `invalid --cwd ${this.path}: ${this.rule}`
  }
}

/**
 * Reading or writing the state root failed; `cause` is the underlying failure (e.g. the platform's `SystemError`).
 * @since 0.1.0
 * @category errors
 */
export class StateError extends Schema.TaggedError<StateError>()("StateError", {
  operation: Schema.String,
  path: Schema.String,
  detail: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {
  override get message() {
    return `state root: cannot ${this.operation} ${this.path}: ${this.detail}`
  }
}

/**
 * Another `city` process held the root lock for longer than we were willing to wait.
 * @since 0.1.0
 * @category errors
 */
export class RootLockBusy extends Schema.TaggedError<RootLockBusy>()("RootLockBusy", {
  root: Schema.String,
  waitedMs: Schema.Number
}) {
  override get message() {
    return `state root ${this.root} is locked by another city process (waited ${this.waitedMs} ms)`
  }
}

/**
 * A command for an endpoint was not started: another live `city` process was still running one
 * for the same endpoint after the wait (docs/cli.md, "Commands and signals": one command per
 * endpoint at a time).
 * @since 0.1.0
 * @category errors
 */
export class EndpointBusy extends Schema.TaggedError<EndpointBusy>()("EndpointBusy", {
  endpoint: Schema.String,
  /** The running command's process. */
  pid: Schema.Number,
  /** The `city` process that started it. */
  owner: Schema.Number,
  waitedMs: Schema.Number
}) {
  override get message() {
    return `${this.endpoint} is busy: pid ${this.pid}, started by city pid ${this.owner}, was still running after ${this.waitedMs} ms`
  }
}

/**
 * A verb that needs existing state was pointed at a state root that does not exist (a mistyped `--root`).
 * @since 0.1.0
 * @category errors
 */
export class RootNotFound extends Schema.TaggedError<RootNotFound>()("RootNotFound", {
  root: Schema.String
}) {
  override get message() {
    return `no state root at ${this.root}: nothing has been created there ` +
      `(check --root or $CITY_ROOT; \`city peer create\` and \`city capability register\` create it)`
  }
}

/**
 * A joint setting out of range: a timeout or a concurrency below 1.
 * @since 0.1.0
 * @category errors
 */
export class InvalidJointSettings extends Schema.TaggedError<InvalidJointSettings>()("InvalidJointSettings", {
  setting: Schema.String,
  value: Schema.String,
  rule: Schema.String
}) {
  override get message() {
    return `invalid ${this.setting} ${this.value}: ${this.rule}`
  }
}

/**
 * Every failure of the capability part a verb can fail with.
 * @since 0.1.0
 * @category models
 */
export type CapabilityError =
  | InvalidFile
  | InvalidName
  | InvalidJointSettings
  | UnknownCapability
  | UnknownPeer
  | PeerAlreadyExists
  | UnknownRuntime
  | RuntimeNotWired
  | DefaultRuntimeRemoval
  | InvalidCwd
  | RootNotFound
  | StateError
  | RootLockBusy
