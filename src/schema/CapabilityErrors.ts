/**
 * Every failure of the capability part that a caller can act on. Messages name
 * the file, the field and the rule. `refusedTags` are the ones the CLI maps to
 * exit 2 (refused input); the others (state I/O, a busy root) exit 1.
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

const where = (file: string, field: string): string => field === "" ? file : `${file}: field "${field}"`

/** A declaration that breaks a rule; `field` is empty when the file as a whole is unusable. */
export class InvalidDeclaration extends Schema.TaggedError<InvalidDeclaration>()("InvalidDeclaration", {
  file: Schema.String,
  field: Schema.String,
  rule: Schema.String
}) {
  override get message() {
    return `invalid capability declaration ${where(this.file, this.field)}: ${this.rule}`
  }
}

/** A peer file on disk that breaks a rule. */
export class InvalidPeerFile extends Schema.TaggedError<InvalidPeerFile>()("InvalidPeerFile", {
  file: Schema.String,
  field: Schema.String,
  rule: Schema.String
}) {
  override get message() {
    return `invalid peer file ${where(this.file, this.field)}: ${this.rule}`
  }
}

/** `host.json` breaks a rule. */
export class InvalidHostConfig extends Schema.TaggedError<InvalidHostConfig>()("InvalidHostConfig", {
  file: Schema.String,
  field: Schema.String,
  rule: Schema.String
}) {
  override get message() {
    return `invalid host configuration ${where(this.file, this.field)}: ${this.rule}`
  }
}

/** A name given on the command line that breaks the name rule. */
export class InvalidName extends Schema.TaggedError<InvalidName>()("InvalidName", {
  kind: Schema.String,
  value: Schema.String,
  rule: Schema.String
}) {
  override get message() {
    return `invalid ${this.kind} ${JSON.stringify(this.value)}: ${this.rule}`
  }
}

export class UnknownCapability extends Schema.TaggedError<UnknownCapability>()("UnknownCapability", {
  name: Schema.String,
  file: Schema.String
}) {
  override get message() {
    return `unknown capability ${this.name}: no declaration at ${this.file}`
  }
}

export class UnknownPeer extends Schema.TaggedError<UnknownPeer>()("UnknownPeer", {
  personality: Schema.String,
  file: Schema.String
}) {
  override get message() {
    return `unknown peer ${this.personality}: no peer file at ${this.file}`
  }
}

export class PeerAlreadyExists extends Schema.TaggedError<PeerAlreadyExists>()("PeerAlreadyExists", {
  personality: Schema.String,
  file: Schema.String
}) {
  override get message() {
    return `peer ${this.personality} already exists (${this.file})`
  }
}

/** A runtime this host neither runs as an agent nor knows as a channel (see host.json). */
export class UnknownRuntime extends Schema.TaggedError<UnknownRuntime>()("UnknownRuntime", {
  runtime: Schema.String,
  known: Schema.Array(Schema.String)
}) {
  override get message() {
    return `unknown runtime ${this.runtime}: this host knows ${this.known.join(", ")} (host.json)`
  }
}

export class RuntimeNotWired extends Schema.TaggedError<RuntimeNotWired>()("RuntimeNotWired", {
  personality: Schema.String,
  runtime: Schema.String
}) {
  override get message() {
    return `peer ${this.personality} does not declare runtime ${this.runtime}`
  }
}

/** The default runtime cannot be removed; another one must become the default first. */
export class DefaultRuntimeRemoval extends Schema.TaggedError<DefaultRuntimeRemoval>()("DefaultRuntimeRemoval", {
  personality: Schema.String,
  runtime: Schema.String
}) {
  override get message() {
    return `runtime ${this.runtime} is the default runtime of peer ${this.personality}: ` +
      `make another runtime the default first (city peer default-runtime)`
  }
}

/** A peer's working directory that is not an existing directory. */
export class InvalidCwd extends Schema.TaggedError<InvalidCwd>()("InvalidCwd", {
  path: Schema.String,
  rule: Schema.String
}) {
  override get message() {
    return `invalid --cwd ${this.path}: ${this.rule}`
  }
}

/** Reading or writing the state root failed. */
export class StateError extends Schema.TaggedError<StateError>()("StateError", {
  operation: Schema.String,
  path: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `state root: cannot ${this.operation} ${this.path}: ${this.detail}`
  }
}

/** Another `city` process held the root lock for longer than we were willing to wait. */
export class RootLockBusy extends Schema.TaggedError<RootLockBusy>()("RootLockBusy", {
  root: Schema.String,
  waitedMs: Schema.Number
}) {
  override get message() {
    return `state root ${this.root} is locked by another city process (waited ${this.waitedMs} ms)`
  }
}

/** Tags of the errors that mean "refused input" (CLI exit 2). */
export const refusedTags: ReadonlySet<string> = new Set([
  "InvalidDeclaration",
  "InvalidPeerFile",
  "InvalidHostConfig",
  "InvalidName",
  "UnknownCapability",
  "UnknownPeer",
  "PeerAlreadyExists",
  "UnknownRuntime",
  "RuntimeNotWired",
  "DefaultRuntimeRemoval",
  "InvalidCwd"
])
