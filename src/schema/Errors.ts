/**
 * Every failure a caller of the City core can act on, as `Schema.TaggedError`s that carry the
 * facts and read well without a stack (design.md "Errors and output").
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Schema from "effect/Schema"

/** A Cause carried as data: printed with `Cause.pretty` in messages. */
export const AnyCause = Schema.CauseFromSelf({ error: Schema.Unknown, defect: Schema.Unknown })

const firstLine = (cause: Cause.Cause<unknown>): string => {
  const text = Cause.pretty(cause, { renderErrorCause: true })
  const line = text.split("\n").find((l) => l.trim().length > 0) ?? "unknown cause"
  return line.trim()
}

/** The first line of a Cause's pretty rendering: the readable part of a message. */
export const describeCause = firstLine

export class InvalidPluginName extends Schema.TaggedError<InvalidPluginName>()("InvalidPluginName", {
  name: Schema.String,
  reason: Schema.String
}) {
  override get message() {
    return `Invalid plugin name ${JSON.stringify(this.name)}: ${this.reason}`
  }
}

export class PluginAlreadyRegistered extends Schema.TaggedError<PluginAlreadyRegistered>()(
  "PluginAlreadyRegistered",
  { name: Schema.String }
) {
  override get message() {
    return `Plugin already exists in City: ${this.name}`
  }
}

export class PluginInitializeFailed extends Schema.TaggedError<PluginInitializeFailed>()(
  "PluginInitializeFailed",
  {
    name: Schema.String,
    reason: Schema.Literal("failed", "died", "timed-out", "interrupted"),
    cause: AnyCause,
    /** Releasing what the failed initialize had acquired failed too. */
    release: Schema.optional(AnyCause)
  }
) {
  override get message() {
    const release = this.release === undefined ? "" : `; releasing what it acquired failed too: ${firstLine(this.release)}`
    return `Plugin ${this.name} failed to initialize (${this.reason}): ${firstLine(this.cause)}${release}`
  }
}

export class PluginDisposeFailed extends Schema.TaggedError<PluginDisposeFailed>()("PluginDisposeFailed", {
  name: Schema.String,
  reason: Schema.Literal("failed", "timed-out", "still-leased"),
  cause: AnyCause
}) {
  override get message() {
    return `Plugin ${this.name} failed to dispose (${this.reason}): ${firstLine(this.cause)}`
  }
}

/** A Promise/class plugin's callback threw or rejected. */
export class PluginCallbackFailed extends Schema.TaggedError<PluginCallbackFailed>()("PluginCallbackFailed", {
  plugin: Schema.String,
  callback: Schema.String,
  error: Schema.Unknown
}) {
  override get message() {
    const detail = this.error instanceof Error ? this.error.message : String(this.error)
    return `Plugin ${this.plugin}: ${this.callback} threw: ${detail}`
  }
}

export class PluginNotFound extends Schema.TaggedError<PluginNotFound>()("PluginNotFound", {
  name: Schema.String
}) {
  override get message() {
    return `Unknown plugin: ${this.name}`
  }
}

export class PluginNotReady extends Schema.TaggedError<PluginNotReady>()("PluginNotReady", {
  name: Schema.String,
  status: Schema.String,
  last_error: Schema.optional(Schema.String)
}) {
  override get message() {
    const last = this.last_error === undefined ? "" : ` (last error: ${this.last_error})`
    return `Plugin ${this.name} is not ready: ${this.status}${last}`
  }
}

export class ActionNotFound extends Schema.TaggedError<ActionNotFound>()("ActionNotFound", {
  plugin: Schema.String,
  action: Schema.String
}) {
  override get message() {
    return `Plugin ${this.plugin} has no action ${JSON.stringify(this.action)}`
  }
}

export class ActionInputRejected extends Schema.TaggedError<ActionInputRejected>()("ActionInputRejected", {
  plugin: Schema.String,
  action: Schema.String,
  issues: Schema.String
}) {
  override get message() {
    return `Input rejected by ${this.plugin}/${this.action}: ${this.issues}`
  }
}

export class ActionFailed extends Schema.TaggedError<ActionFailed>()("ActionFailed", {
  plugin: Schema.String,
  action: Schema.String,
  cause: AnyCause
}) {
  override get message() {
    return `Action ${this.plugin}/${this.action} failed: ${firstLine(this.cause)}`
  }
}

export class HookFailed extends Schema.TaggedError<HookFailed>()("HookFailed", {
  plugin: Schema.String,
  point: Schema.String,
  cause: AnyCause
}) {
  override get message() {
    return `Hook ${this.point} of plugin ${this.plugin} failed: ${firstLine(this.cause)}`
  }
}

export class CityClosed extends Schema.TaggedError<CityClosed>()("CityClosed", {
  operation: Schema.String
}) {
  override get message() {
    return `City is closed: ${this.operation} refused`
  }
}

export const CloseFailure = Schema.Struct({ subject: Schema.String, cause: AnyCause })
export type CloseFailure = typeof CloseFailure.Type

export class CityCloseError extends Schema.TaggedError<CityCloseError>()("CityCloseError", {
  failures: Schema.Array(CloseFailure)
}) {
  override get message() {
    const lines = this.failures.map((f) => `  - ${f.subject}: ${firstLine(f.cause)}`)
    return [`City close had ${this.failures.length} cleanup failure(s):`, ...lines].join("\n")
  }
}

export class WorkspaceAlreadyExists extends Schema.TaggedError<WorkspaceAlreadyExists>()(
  "WorkspaceAlreadyExists",
  { id: Schema.String }
) {
  override get message() {
    return `Workspace already exists in City: ${this.id}`
  }
}

export class WorkspaceReleaseFailed extends Schema.TaggedError<WorkspaceReleaseFailed>()(
  "WorkspaceReleaseFailed",
  { id: Schema.String, cause: AnyCause }
) {
  override get message() {
    return `Workspace ${this.id} failed to release: ${firstLine(this.cause)}`
  }
}

export class AgentAlreadyExists extends Schema.TaggedError<AgentAlreadyExists>()("AgentAlreadyExists", {
  id: Schema.String
}) {
  override get message() {
    return `Agent already exists in City: ${this.id}`
  }
}

export class AgentNotFound extends Schema.TaggedError<AgentNotFound>()("AgentNotFound", {
  id: Schema.String
}) {
  override get message() {
    return `Unknown agent: ${this.id}`
  }
}

export class SessionClosed extends Schema.TaggedError<SessionClosed>()("SessionClosed", {
  session: Schema.String,
  reason: Schema.Literal("closed", "agent-removed", "city-closed")
}) {
  override get message() {
    const why = this.reason === "agent-removed"
      ? "its Agent was removed"
      : this.reason === "city-closed"
      ? "the City is closing"
      : "it was closed"
    return `Session ${this.session} is closed: ${why}`
  }
}

export class TurnEnded extends Schema.TaggedError<TurnEnded>()("TurnEnded", {
  session: Schema.String,
  turn: Schema.Number
}) {
  override get message() {
    return `Turn ${this.turn} of session ${this.session} has ended: a Step needs a running Turn`
  }
}

/**
 * A `requestReload` the host could not carry out: the plugin's own write already happened, so it
 * reports the change as "saved but not applied".
 * @since 0.1.0
 * @category errors
 */
export class ReloadRejected extends Schema.TaggedError<ReloadRejected>()("ReloadRejected", {
  plugin: Schema.String,
  mode: Schema.Literal("reload", "restart"),
  reason: Schema.String
}) {
  override get message() {
    return `Plugin ${this.plugin} asked for a ${this.mode}, not applied: ${this.reason}`
  }
}
