/**
 * Every failure a caller of the City core can act on, as `Schema.TaggedError`s that carry the
 * facts and read well without a stack (docs/design.md "Errors and output").
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Schema from "effect/Schema"
import { type CloseFailure, CloseReport } from "./CloseReport.ts"
import { FamilyTypeId } from "./ErrorFamily.ts"
import { oneLine } from "./OneLine.ts"

/**
 * A Cause carried as data: printed with `Cause.pretty` in messages.
 * @since 0.1.0
 * @category models
 */
export const AnyCause = Schema.CauseFromSelf({ error: Schema.Unknown, defect: Schema.Unknown })

const firstLine = (cause: Cause.Cause<unknown>): string => {
  const text = Cause.pretty(cause, { renderErrorCause: true })
  const line = text.split("\n").find((l) => l.trim().length > 0) ?? "unknown cause"
  return line.trim()
}

/**
 * The first line of a Cause's pretty rendering: the readable part of a message.
 * @since 0.1.0
 * @category utils
 */
export const describeCause = firstLine

/**
 * How an initialize that did not succeed ended: `failed` (with the plugin's own typed failure:
 * the City's internal form of it, the loader reports it as `RegistrationFailed`), `died`,
 * `timed-out` (it outlived `initializeTimeout`), `interrupted`.
 * @since 0.1.0
 * @category models
 */
export const InitializeOutcome = Schema.Literal("failed", "died", "timed-out", "interrupted")

/**
 * How an initialize that did not succeed ended.
 * @since 0.1.0
 * @category models
 */
export type InitializeOutcome = typeof InitializeOutcome.Type

/**
 * How a dispose that did not end cleanly ended: `failed` (a finalizer failed), `timed-out` (it
 * outlived `disposeTimeout` and goes on in the background), `still-leased` (close waited
 * `disposeTimeout` for the plugin's last lease).
 * @since 0.1.0
 * @category models
 */
export const DisposeOutcome = Schema.Literal("failed", "timed-out", "still-leased")

/**
 * How a dispose that did not end cleanly ended.
 * @since 0.1.0
 * @category models
 */
export type DisposeOutcome = typeof DisposeOutcome.Type

/**
 * Why the City's registry refused or could not carry out adding, removing or starting a plugin,
 * each reason with the fields it fills:
 * - `InvalidPluginName` (`plugin`, `rule`): `city.plugins.add`, `City.make` or `City.layer` given
 *   a name that breaks the PluginName rule; nothing is started.
 * - `PluginAlreadyRegistered` (`plugin`, `registered`): `city.plugins.add` of a name already
 *   initializing or ready, or equal ignoring case to a registered one (`registered`, the
 *   plugin-name rule: schema/PluginName.ts); `City.make` / `City.layer` given a name twice, or two
 *   names that differ only in case (then nothing is started).
 * - `PluginInitializeFailed` (`plugin`, `outcome`, `cause`, `release`): `city.plugins.add` (and
 *   `City.make` / `City.layer` for a `required` start plugin) when initialize dies, outlives
 *   `initializeTimeout` or is interrupted, and gave no typed failure of its own. What it acquired
 *   has been released; `release` is set when that release failed too. An initialize that fails
 *   with the plugin's own typed failure `E` fails `add` and `City.layer` with that `E` itself, as
 *   a Layer fails with its own error (docs/library.md, "Decisions where the specification is
 *   silent"): outcome `failed` is the City's internal form of it.
 * - `PluginDependencyMissing` (`plugin`, `missing`): a plugin it `requires` (not optional) is not
 *   ready (docs/library.md, "Plugin dependencies"), or a start plugin requires one that is neither
 *   in the start list nor ready; nothing of it is initialized. `missing` is in name order.
 * - `PluginHasDependents` (`plugin`, `dependents`): `city.plugins.remove` of a plugin that ready or
 *   initializing plugins require; nothing is removed. `dependents` is in name order;
 *   `remove(name, { cascade: true })` removes them first.
 * - `PluginDependencyCycle` (`cycle`): start plugins whose required dependencies form a cycle,
 *   before anything starts; `cycle` names the plugins around it, the first one again at the end.
 * - `PluginDisposeFailed` (`plugin`, `outcome`, `cause`): `city.plugins.remove` (or its
 *   `disposal`) when dispose failed, outlived `disposeTimeout`, or when close waited for the
 *   plugin's last lease; close reports it in CityCloseError.
 * @since 0.1.0
 * @category models
 */
const RegistryErrorReason = Schema.Literal(
  "InvalidPluginName",
  "PluginAlreadyRegistered",
  "PluginInitializeFailed",
  "PluginDependencyMissing",
  "PluginHasDependents",
  "PluginDependencyCycle",
  "PluginDisposeFailed"
)

/**
 * Why the City's registry refused or could not carry out a plugin's add, remove or start.
 * @since 0.1.0
 * @category models
 */
type RegistryErrorReason = typeof RegistryErrorReason.Type

/**
 * Adding, removing or starting a plugin failed; `reason` says why (`RegistryErrorReason`), and its
 * `name` is the reason, the tag it had before (docs/cli.md, "Error tags and the library's error
 * families"; docs/library.md, "Errors").
 * @since 0.1.0
 * @category errors
 */
export class RegistryError extends Schema.TaggedError<RegistryError>()("RegistryError", {
  reason: RegistryErrorReason,
  /** The plugin (every reason but `PluginDependencyCycle`). */
  plugin: Schema.optional(Schema.String),
  /** `InvalidPluginName`: the rule the name breaks. */
  rule: Schema.optional(Schema.String),
  /** `PluginAlreadyRegistered`: the registered name it clashes with, when the two differ only in case. */
  registered: Schema.optional(Schema.String),
  /** `PluginInitializeFailed`, `PluginDisposeFailed`: how it ended. */
  outcome: Schema.optional(Schema.Union(InitializeOutcome, DisposeOutcome)),
  /** `PluginInitializeFailed`, `PluginDisposeFailed`: its Cause. */
  cause: Schema.optional(AnyCause),
  /** `PluginInitializeFailed`: releasing what the failed initialize had acquired failed too. */
  release: Schema.optional(AnyCause),
  /** `PluginDependencyMissing`: the required plugins that are not ready, in name order. */
  missing: Schema.optional(Schema.Array(Schema.String)),
  /** `PluginHasDependents`: the plugins that require it, in name order. */
  dependents: Schema.optional(Schema.Array(Schema.String)),
  /** `PluginDependencyCycle`: the plugins around the cycle, the first one again at the end. */
  cycle: Schema.optional(Schema.Array(Schema.String))
}) {
  /** Marks a family's error (`ErrorFamily.printedTag`). */
  get [FamilyTypeId](): true {
    return true
  }
  /** The reason: the tag these failures had before they were one family. */
  override get name(): RegistryErrorReason {
    return this.reason
  }
  override get message() {
    const cause = this.cause === undefined ? "unknown cause" : firstLine(this.cause)
    switch (this.reason) {
      case "InvalidPluginName":
        return `Invalid plugin name ${JSON.stringify(this.plugin)}: ${this.rule}`
      case "PluginAlreadyRegistered":
        return this.registered === undefined || this.registered === this.plugin
          ? `Plugin already exists in City: ${this.plugin}`
          : `Plugin already exists in City: ${this.plugin} (registered as "${this.registered}"; names differ only in case)`
      case "PluginInitializeFailed": {
        const release = this.release === undefined ? "" : `; releasing what it acquired failed too: ${firstLine(this.release)}`
        return `Plugin ${this.plugin} failed to initialize (${this.outcome}): ${cause}${release}`
      }
      case "PluginDependencyMissing": {
        const missing = this.missing ?? []
        const [first, ...rest] = missing
        return `Plugin ${this.plugin} requires ${missing.join(", ")}, which ${rest.length === 0 && first !== undefined ? "is" : "are"} not ready`
      }
      case "PluginHasDependents":
        return `Plugin ${this.plugin} is required by ${(this.dependents ?? []).join(", ")}: remove them first, or remove with cascade`
      case "PluginDependencyCycle":
        return `Plugin dependencies form a cycle: ${(this.cycle ?? []).join(" -> ")}`
      case "PluginDisposeFailed":
        return `Plugin ${this.plugin} failed to dispose (${this.outcome}): ${cause}`
    }
  }
}

/**
 * A sibling service no plugin of the current view provides.
 *
 * Raised by a call through a `Siblings.service` handle when, at that call, no ready plugin
 * provides the service (its provider was removed, is restarting, or never came): a typed
 * failure, not a defect. `service` is the Tag's key.
 * @since 0.1.0
 * @category errors
 */
export class SiblingUnavailable extends Schema.TaggedError<SiblingUnavailable>()("SiblingUnavailable", {
  service: Schema.String
}) {
  override get message() {
    return `No ready plugin provides the service ${this.service}`
  }
}

/**
 * A Promise/class plugin's callback threw or rejected: raised by `Plugin.fromPromise`'s adapter (and
 * a `register(ctx)` entry's) for initialize, dispose, an action, a hook, system or availability, naming the
 * plugin and the callback.
 * @since 0.1.0
 * @category errors
 */
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

/**
 * Why a call of a plugin's action (`invoke`, `availability`, through `city.calls` or a Step, and
 * `city plugins call`) ended without a result, each reason with the fields it fills:
 * - `PluginNotFound` (`plugin`): a plugin the City does not know (also a skills reload naming a
 *   plugin that is not ready).
 * - `PluginNotReady` (`plugin`, `status`, `last_error`): a plugin the City knows that is not in
 *   the call's view: still initializing, disposing, or failed (`status: "error"`, its `last_error`).
 * - `ActionNotFound` (`plugin`, `action`): the plugin contributes no action of that name.
 * - `ActionInputRejected` (`plugin`, `action`, and `issues` or `field` and `rule`): the input does
 *   not decode with the action's input Schema; the handler never runs. `issues` is the formatted
 *   ParseError (a call in the library); `city plugins call` names the first issue's `field` (empty
 *   for the input itself) and `rule` instead.
 * - `ActionOutputRejected` (`plugin`, `action`, `issue`): called by a reference that declares an
 *   `output` Schema (`Contributions.reference`), the handler's result does not match it (in the
 *   host's thread validated against its Type side; from a worker encoded there, decoded here);
 *   `issue` is the first problem on one line (`field: rule`). The caller gets no result.
 * - `ActionFailed` (`plugin`, `action`, and `cause` or `detail` and `failure`): the handler failed
 *   or died; `cause` is its Cause (an interruption stays an interruption). Called by a reference
 *   that declares an `error` Schema, a failure that Schema accepts reaches the caller as itself
 *   instead. `city plugins call` carries the action's typed failure as JSON (`failure`: its `_tag`,
 *   `message` and own fields; none for a defect, an untagged failure or the worker ending) and its
 *   one line (`detail`) instead of the Cause.
 * - `ResultNotJson` (`plugin`, `action`, `detail`): `city plugins call`'s action returned a value
 *   with no JSON form (a BigInt, a cycle): it cannot be printed.
 * @since 0.1.0
 * @category models
 */
const ActionRejectedReason = Schema.Literal(
  "PluginNotFound",
  "PluginNotReady",
  "ActionNotFound",
  "ActionInputRejected",
  "ActionOutputRejected",
  "ActionFailed",
  "ResultNotJson"
)

/**
 * Why a call of a plugin's action ended without a result.
 * @since 0.1.0
 * @category models
 */
type ActionRejectedReason = typeof ActionRejectedReason.Type

/**
 * A call of a plugin's action that ended without a result; `reason` says why
 * (`ActionRejectedReason`), and its `name` is the reason, the tag it had before (docs/cli.md,
 * "Error tags and the library's error families"; docs/library.md, "Errors").
 * @since 0.1.0
 * @category errors
 */
export class ActionRejected extends Schema.TaggedError<ActionRejected>()("ActionRejected", {
  reason: ActionRejectedReason,
  /** The plugin called. */
  plugin: Schema.String,
  /** The action called (every reason but `PluginNotFound` and `PluginNotReady`). */
  action: Schema.optional(Schema.String),
  /** `PluginNotReady`: the plugin's status. */
  status: Schema.optional(Schema.String),
  /** `PluginNotReady`: its last error, when it failed. */
  last_error: Schema.optional(Schema.String),
  /** `ActionInputRejected` in the library: the formatted ParseError. */
  issues: Schema.optional(Schema.String),
  /** `ActionInputRejected` from `city plugins call`: the first issue's field, empty for the input itself. */
  field: Schema.optional(Schema.String),
  /** `ActionInputRejected` from `city plugins call`: the first issue's rule. */
  rule: Schema.optional(Schema.String),
  /** `ActionOutputRejected`: the first problem, on one line. */
  issue: Schema.optional(Schema.String),
  /** `ActionFailed` in the library: the handler's Cause. */
  cause: Schema.optional(AnyCause),
  /** `ActionFailed` from `city plugins call`: the action's typed failure as JSON. */
  failure: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  /** `ActionFailed` from `city plugins call`, `ResultNotJson`: what happened, on one line. */
  detail: Schema.optional(Schema.String)
}) {
  /** Marks a family's error (`ErrorFamily.printedTag`). */
  get [FamilyTypeId](): true {
    return true
  }
  /** The reason: the tag these failures had before they were one family. */
  override get name(): ActionRejectedReason {
    return this.reason
  }
  override get message() {
    switch (this.reason) {
      case "PluginNotFound":
        return `Unknown plugin: ${this.plugin}`
      case "PluginNotReady": {
        const last = this.last_error === undefined ? "" : ` (last error: ${this.last_error})`
        return `Plugin ${this.plugin} is not ready: ${this.status}${last}`
      }
      case "ActionNotFound":
        return `Plugin ${this.plugin} has no action ${JSON.stringify(this.action)}`
      case "ActionInputRejected": {
        if (this.issues !== undefined) return `Input rejected by ${this.plugin}/${this.action}: ${this.issues}`
        const where = this.field === undefined || this.field === "" ? "" : `field ${JSON.stringify(this.field)}: `
        return `Input rejected by ${this.plugin}/${this.action}: ${where}${oneLine(this.rule ?? "", 300)}`
      }
      case "ActionOutputRejected":
        return `Output of ${this.plugin}/${this.action} rejected by its output Schema: ${this.issue}`
      case "ActionFailed":
        return `Action ${this.plugin}/${this.action} failed: ${
          this.detail ?? (this.cause === undefined ? "unknown cause" : firstLine(this.cause))
        }`
      case "ResultNotJson":
        return `Action ${this.plugin}/${this.action} returned a result that is not JSON: ${this.detail}`
    }
  }
}

/**
 * A hook handler that failed.
 *
 * Raised by `runHooks` when a hook handler fails or dies; the waterfall stops at that handler.
 * @since 0.1.0
 * @category errors
 */
export class HookFailed extends Schema.TaggedError<HookFailed>()("HookFailed", {
  plugin: Schema.String,
  point: Schema.String,
  cause: AnyCause
}) {
  override get message() {
    return `Hook ${this.point} of plugin ${this.plugin} failed: ${firstLine(this.cause)}`
  }
}

/**
 * An operation refused because the City is closing.
 *
 * Raised by any operation refused because close has begun: adding or removing a plugin (also one
 * queued behind another operation on its name), a Step, a call, adding a workspace, an agent or a
 * session. `operation` names what was refused.
 * @since 0.1.0
 * @category errors
 */
export class CityClosed extends Schema.TaggedError<CityClosed>()("CityClosed", {
  operation: Schema.String
}) {
  override get message() {
    return `City is closed: ${this.operation} refused`
  }
}

/**
 * Every cleanup failure of one close, with the report of that close.
 *
 * Raised by `city.close` when cleanups failed: `report` is what the close did, the report a
 * successful close returns, and `failures` (its `report.failures`) every failure, none skipped.
 * Closing the City layer's Scope logs it unless a caller of `city.close` already received it. A
 * later `close` returns the same error and runs nothing again.
 * @since 0.1.0
 * @category errors
 */
export class CityCloseError extends Schema.TaggedError<CityCloseError>()("CityCloseError", {
  report: CloseReport
}) {
  /** Every cleanup failure of the close: `report.failures`. */
  get failures(): ReadonlyArray<CloseFailure> {
    return this.report.failures
  }

  override get message() {
    const lines = this.failures.map((f) => `  - ${f.subject}: ${firstLine(f.cause)}`)
    return [`City close had ${this.failures.length} cleanup failure(s):`, ...lines].join("\n")
  }
}

/**
 * Why a Workspace could not be added or removed: `WorkspaceAlreadyExists` (`id`:
 * `city.workspaces.add` of an id that exists), `WorkspaceReleaseFailed` (`id`, `cause`:
 * `city.workspaces.remove` when a finalizer of the workspace's Scope failed; close reports it in
 * CityCloseError instead, and a later close retries it).
 * @since 0.1.0
 * @category models
 */
const WorkspaceErrorReason = Schema.Literal("WorkspaceAlreadyExists", "WorkspaceReleaseFailed")

/**
 * Why a Workspace could not be added or removed.
 * @since 0.1.0
 * @category models
 */
type WorkspaceErrorReason = typeof WorkspaceErrorReason.Type

/**
 * A Workspace that could not be added or removed; `reason` says why (`WorkspaceErrorReason`), and
 * its `name` is the reason, the tag it had before (docs/cli.md, "Error tags and the library's
 * error families").
 * @since 0.1.0
 * @category errors
 */
export class WorkspaceError extends Schema.TaggedError<WorkspaceError>()("WorkspaceError", {
  reason: WorkspaceErrorReason,
  /** The workspace's id. */
  id: Schema.String,
  /** `WorkspaceReleaseFailed`: the failure of its Scope's close. */
  cause: Schema.optional(AnyCause)
}) {
  /** Marks a family's error (`ErrorFamily.printedTag`). */
  get [FamilyTypeId](): true {
    return true
  }
  /** The reason: the tag these failures had before they were one family. */
  override get name(): WorkspaceErrorReason {
    return this.reason
  }
  override get message() {
    return this.reason === "WorkspaceAlreadyExists"
      ? `Workspace already exists in City: ${this.id}`
      : `Workspace ${this.id} failed to release: ${this.cause === undefined ? "unknown cause" : firstLine(this.cause)}`
  }
}

/**
 * Why an Agent, a Session or a Turn refused what was asked of it, each reason with the fields it
 * fills:
 * - `AgentAlreadyExists` (`id`): `city.agents.add` of an Agent id that exists.
 * - `AgentNotFound` (`id`): `agent.sessions.create` when the Agent has been removed from the City.
 * - `SessionClosed` (`session`, `closedBy`): `session.turn`, `turn.step` and
 *   `session.atNextBoundary` once the Session is closed: by `session.close` (`closed`), by
 *   removing its Agent (`agent-removed`) or by the City's close (`city-closed`). Callers waiting
 *   in `atNextBoundary` get it too.
 * - `TurnEnded` (`session`, `turn`): `turn.step` when the Turn's body has already ended: a Step
 *   needs a running Turn.
 * @since 0.1.0
 * @category models
 */
const SessionErrorReason = Schema.Literal("AgentAlreadyExists", "AgentNotFound", "SessionClosed", "TurnEnded")

/**
 * Why an Agent, a Session or a Turn refused what was asked of it.
 * @since 0.1.0
 * @category models
 */
type SessionErrorReason = typeof SessionErrorReason.Type

/**
 * What closed a Session: `session.close` (`closed`), removing its Agent (`agent-removed`) or the
 * City's close (`city-closed`).
 * @since 0.1.0
 * @category models
 */
export const SessionClosedBy = Schema.Literal("closed", "agent-removed", "city-closed")

/**
 * What closed a Session.
 * @since 0.1.0
 * @category models
 */
export type SessionClosedBy = typeof SessionClosedBy.Type

/**
 * An Agent, a Session or a Turn that refused what was asked of it; `reason` says why
 * (`SessionErrorReason`), and its `name` is the reason, the tag it had before (docs/cli.md, "Error
 * tags and the library's error families"; docs/library.md, "Errors").
 * @since 0.1.0
 * @category errors
 */
export class SessionError extends Schema.TaggedError<SessionError>()("SessionError", {
  reason: SessionErrorReason,
  /** `AgentAlreadyExists`, `AgentNotFound`: the Agent's id. */
  id: Schema.optional(Schema.String),
  /** `SessionClosed`, `TurnEnded`: the Session's id. */
  session: Schema.optional(Schema.String),
  /** `SessionClosed`: what closed it. */
  closedBy: Schema.optional(SessionClosedBy),
  /** `TurnEnded`: the Turn's number. */
  turn: Schema.optional(Schema.Number)
}) {
  /** Marks a family's error (`ErrorFamily.printedTag`). */
  get [FamilyTypeId](): true {
    return true
  }
  /** The reason: the tag these failures had before they were one family. */
  override get name(): SessionErrorReason {
    return this.reason
  }
  override get message() {
    switch (this.reason) {
      case "AgentAlreadyExists":
        return `Agent already exists in City: ${this.id}`
      case "AgentNotFound":
        return `Unknown agent: ${this.id}`
      case "SessionClosed": {
        const why = this.closedBy === "agent-removed"
          ? "its Agent was removed"
          : this.closedBy === "city-closed"
          ? "the City is closing"
          : "it was closed"
        return `Session ${this.session} is closed: ${why}`
      }
      case "TurnEnded":
        return `Turn ${this.turn} of session ${this.session} has ended: a Step needs a running Turn`
    }
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
