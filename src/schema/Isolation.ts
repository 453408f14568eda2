/**
 * What crosses between the host and a worker-isolated plugin (docs/design.md, "Third-party
 * plugins": "Isolation is a resource"; docs/plugin-loader.md, "Isolation"): the requests of
 * `@effect/platform`'s serialized worker protocol, each a `Schema.TaggedRequest` whose payload,
 * success and failure are Schemas, and the errors an isolated plugin fails with on the host.
 *
 * The host asks (`Initialize`, the four calls, `Dispose`, `Heartbeat`); the plugin's own
 * requests to the host (a log line, a reload request, a sibling call) travel as the items of the
 * one `HostCalls` stream the host opens at start, and each answer goes back as `HostAnswer`. So
 * both directions are the platform's protocol, with no message format of our own.
 *
 * Values cross by structured clone: inputs, results, hook values and config as they are (no JSON
 * round trip); a value that cannot be cloned (a function, a class instance's methods) fails the
 * call with `IsolationError` (reason `IsolatedFailure`), naming it. An action with `output` /
 * `error` Schemas (implemented from a reference that declares them) is the exception: its result
 * and its declared failure cross encoded with them, and the caller's reference decodes them on
 * the host. A PluginContext crosses as its data (agent, workspace, session, turn).
 * @since 0.1.0
 */
import { WorkerError } from "@effect/platform/WorkerError"
import * as Schema from "effect/Schema"
import { FamilyTypeId, printedTag } from "./ErrorFamily.ts"
import { ActionRejected } from "./Errors.ts"
import { literalChoice } from "./ParseIssue.ts"
import { AgentInfo, SessionInfo, TurnInfo, WorkspaceInfo } from "./HostModel.ts"
import { PluginChange, Skill } from "./PluginChange.ts"

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

/**
 * Where a plugin runs: in the host's own thread (`"none"`), in a worker thread of its own
 * (`"worker"`) or in a child process of its own (`"process"`), docs/plugin-loader.md, "Isolation".
 * @since 0.1.0
 * @category schemas
 */
export const IsolationMode = literalChoice("none", "worker", "process").annotations({
  description:
    "Where the plugin runs: \"none\" in the host's thread, \"worker\" in a worker thread of its own, \"process\" in a child process of its own."
})

/**
 * Where a plugin runs.
 * @since 0.1.0
 * @category models
 */
export type IsolationMode = typeof IsolationMode.Type

/**
 * The exit code a worker thread ends with when its plugin called `process.abort()`, which in a
 * worker would end the whole process: the worker's guard ends only the thread with it.
 * @since 0.1.0
 * @category constants
 */
export const abortExitCode = 134

/**
 * The file descriptor of a plugin process's side channel (its stdio index 4, beside the IPC
 * channel), on which it says what it is running when the host asks.
 * @since 0.1.0
 * @category constants
 */
export const blameFd = 4

/**
 * The front of the one line a plugin's process writes on stderr as an uncaught throw ends it, for
 * the host to say why it ended (`uncaught Error: boom`), as a worker thread's end says it.
 * @since 0.1.0
 * @category constants
 */
export const uncaughtMarker = "city-plugin process ended: uncaught "

/**
 * A PluginContext as data: the plugin's name and who is calling, from where.
 * @since 0.1.0
 * @category schemas
 */
export const CallContext = Schema.Struct({
  plugin: Schema.String,
  agent: AgentInfo,
  workspace: WorkspaceInfo,
  session: Schema.optional(SessionInfo),
  turn: Schema.optional(TurnInfo)
})

/**
 * Why a call into an isolated plugin failed, each reason with the fields it fills (every reason
 * has the `plugin`):
 * - `IsolatedFailure` (`what`, `detail`, `errorTag`, `fields`): a failure inside the plugin, as it
 *   crosses: what failed (`initialize`, `action notes/add`, ...), the error's `_tag` when it has
 *   one, its message (`detail`) and its own fields (the plain-data part).
 * - `WorkerEnded` (`detail`): the plugin's worker ended or stopped answering: the plugin is then
 *   out of the City (its snapshot says why) until a retry starts a fresh worker.
 * - `IsolatedActionError` (`action`, `error`): an action's own failure, encoded with the action's
 *   `error` Schema in the worker (the failure that Schema accepts), for the caller's reference to
 *   decode on the host.
 * @since 0.1.0
 * @category models
 */
export const IsolationErrorReason = Schema.Literal("IsolatedFailure", "WorkerEnded", "IsolatedActionError")

/**
 * Why a call into an isolated plugin failed.
 * @since 0.1.0
 * @category models
 */
export type IsolationErrorReason = typeof IsolationErrorReason.Type

/**
 * A call into an isolated plugin that failed; `reason` says why (`IsolationErrorReason`), and its
 * `name` is the reason, the tag it had before (docs/cli.md, "Error tags and the library's error
 * families"; docs/library.md, "Errors").
 * @since 0.1.0
 * @category errors
 */
export class IsolationError extends Schema.TaggedError<IsolationError>()("IsolationError", {
  reason: IsolationErrorReason,
  /** The plugin. */
  plugin: Schema.String,
  /** `IsolatedFailure`: what failed (`initialize`, `action notes/add`, ...). */
  what: optional(Schema.String),
  /** `IsolatedFailure`: the error's `_tag`, when it has one. */
  errorTag: optional(Schema.String),
  /** `IsolatedFailure`: the error's message; `WorkerEnded`: why the worker ended. */
  detail: optional(Schema.String),
  /** `IsolatedFailure`: the error's own fields (the plain-data part). */
  fields: optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  /** `IsolatedActionError`: the action. */
  action: optional(Schema.String),
  /** `IsolatedActionError`: the failure, encoded with the action's `error` Schema. */
  error: optional(Schema.Unknown),
  /** Where the plugin ran, a worker thread or a process of its own (set by the host; a worker when absent). */
  isolation: optional(Schema.Literal("worker", "process"))
}) {
  /** Marks a family's error (`ErrorFamily.printedTag`). */
  get [FamilyTypeId](): true {
    return true
  }
  /** The reason: the tag these failures had before they were one family. */
  override get name(): IsolationErrorReason {
    return this.reason
  }
  override get message() {
    switch (this.reason) {
      case "IsolatedFailure":
        return `Plugin ${this.plugin} (${this.isolation ?? "worker"}): ${this.what} failed: ${this.errorTag === undefined ? "" : `${this.errorTag}: `}${this.detail}`
      case "WorkerEnded":
        return `Plugin ${this.plugin}: its ${this.isolation ?? "worker"} ended: ${this.detail}`
      case "IsolatedActionError":
        return `Plugin ${this.plugin} (${this.isolation ?? "worker"}): action ${this.action} failed with its declared error`
    }
  }
}

/**
 * What of an error crosses in words: its `_tag` when it has one (a family's error: its reason, `ErrorFamily.printedTag`), and its message (an Error's
 * message, a string as it is, anything else printed).
 * @since 0.1.0
 * @category models
 */
export const errorFacts = (error: unknown): { readonly errorTag?: string; readonly reason: string } => {
  const tag = printedTag(error)
  const reason = error instanceof Error ? error.message : typeof error === "string" ? error : String(error)
  return tag !== undefined ? { errorTag: tag, reason } : { reason }
}

/**
 * How a call into the worker can fail: the plugin's failure, or the platform's `WorkerError` when
 * the thread is gone (the serialized worker decodes every failure with the request's failure
 * Schema, the platform's own included).
 * @since 0.1.0
 * @category schemas
 */
export const CallFailure = Schema.Union(IsolationError, WorkerError)

/**
 * What an isolated plugin contributes, as data: the names the host makes proxies for.
 * @since 0.1.0
 * @category schemas
 */
export const ContributionShape = Schema.Struct({
  actions: Schema.Array(Schema.String),
  /** Handlers per hook point. */
  hooks: Schema.Record({ key: Schema.String, value: Schema.Number }),
  system: Schema.Boolean,
  availability: Schema.Boolean,
  skills: optional(Schema.Array(Skill))
})

/**
 * What an isolated plugin contributes, as data.
 * @since 0.1.0
 * @category models
 */
export type ContributionShape = typeof ContributionShape.Type

/**
 * Imports the entry in the worker and runs the plugin's initialize there.
 * @since 0.1.0
 * @category models
 */
export class Initialize extends Schema.TaggedRequest<Initialize>()("Initialize", {
  failure: CallFailure,
  success: ContributionShape,
  payload: {
    /** The entry's import URL (with the loader's cache-busting query). */
    url: Schema.String,
    /** The plugin folder (admitted for host-provided modules). */
    folder: Schema.String,
    name: Schema.String,
    version: Schema.String,
    storagePath: Schema.String,
    config: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
    configUnset: Schema.Array(Schema.String)
  }
}) {}

/**
 * An action's result as it crosses: as the handler returned it (`Returned`), or encoded with the
 * action's `output` Schema (`Encoded`, for the caller's reference to decode).
 * @since 0.1.0
 * @category schemas
 */
export const ActionResult = Schema.Union(
  Schema.TaggedStruct("Returned", { value: Schema.Unknown }),
  Schema.TaggedStruct("Encoded", { value: Schema.Unknown })
)

/**
 * Runs an action with its raw input (decoded in the worker by the action's Schema). An action
 * with `output` / `error` Schemas (`Contributions.implement` of a reference that declares them)
 * answers encoded: its result as `Encoded`, a failure its `error` Schema accepts as
 * `IsolationError` (reason `IsolatedActionError`), and a result its `output` Schema refuses as
 * `ActionOutputRejected`.
 * @since 0.1.0
 * @category models
 */
export class CallAction extends Schema.TaggedRequest<CallAction>()("CallAction", {
  failure: Schema.Union(IsolationError, WorkerError, ActionRejected),
  success: ActionResult,
  payload: { action: Schema.String, input: Schema.Unknown, context: CallContext }
}) {}

/**
 * Runs the `index`-th handler of a hook point.
 * @since 0.1.0
 * @category models
 */
export class CallHook extends Schema.TaggedRequest<CallHook>()("CallHook", {
  failure: CallFailure,
  success: Schema.Unknown,
  payload: { point: Schema.String, index: Schema.Number, value: Schema.Unknown, context: CallContext }
}) {}

/**
 * The plugin's system text for a call.
 * @since 0.1.0
 * @category models
 */
export class CallSystem extends Schema.TaggedRequest<CallSystem>()("CallSystem", {
  failure: CallFailure,
  success: Schema.NullOr(Schema.String),
  payload: { context: CallContext }
}) {}

/**
 * The plugin's availability for a call.
 * @since 0.1.0
 * @category models
 */
export class CallAvailability extends Schema.TaggedRequest<CallAvailability>()("CallAvailability", {
  failure: CallFailure,
  success: Schema.Struct({ available: Schema.Boolean, reasons: Schema.Array(Schema.String) }),
  payload: { context: CallContext }
}) {}

/**
 * Closes the plugin's Scope in the worker (its dispose); the host then ends the worker.
 * @since 0.1.0
 * @category models
 */
export class Dispose extends Schema.TaggedRequest<Dispose>()("Dispose", {
  failure: CallFailure,
  success: Schema.Void,
  payload: {}
}) {}

/**
 * What an isolated plugin's worker uses, as its heartbeat reports it (`process.memoryUsage()` in
 * its thread or process, and V8's heap limit there): in a worker thread `heapUsed`, `external` and
 * `arrayBuffers` are the thread's own and `rss` is the whole process's.
 * @since 0.1.0
 * @category schemas
 */
export const Memory = Schema.Struct({
  heapUsed: Schema.Number,
  heapLimit: Schema.Number,
  external: Schema.Number,
  arrayBuffers: Schema.Number,
  rss: Schema.Number
})

/**
 * What an isolated plugin's worker uses.
 * @since 0.1.0
 * @category models
 */
export type Memory = typeof Memory.Type

/**
 * The heartbeat: answered at once whatever the plugin is doing, as long as the worker's event loop
 * turns, with what the worker uses (docs/plugin-loader.md, "Liveness").
 * @since 0.1.0
 * @category models
 */
export class Heartbeat extends Schema.TaggedRequest<Heartbeat>()("Heartbeat", {
  failure: WorkerError,
  success: Memory,
  payload: {}
}) {}

/**
 * One request of the plugin to the host.
 * @since 0.1.0
 * @category schemas
 */
export const HostCall = Schema.Union(
  Schema.TaggedStruct("Log", { level: Schema.Literal("debug", "info", "warn", "error"), message: Schema.String }),
  Schema.TaggedStruct("RequestReload", { id: Schema.Number, change: PluginChange, context: optional(CallContext) }),
  Schema.TaggedStruct("Invoke", {
    id: Schema.Number,
    context: CallContext,
    plugin: Schema.String,
    action: Schema.String,
    input: Schema.Unknown
  })
)

/**
 * One request of the plugin to the host.
 * @since 0.1.0
 * @category models
 */
export type HostCall = typeof HostCall.Type

/**
 * The stream of the plugin's requests to the host, opened once by the host at start.
 * @since 0.1.0
 * @category models
 */
export class HostCalls extends Schema.TaggedRequest<HostCalls>()("HostCalls", {
  failure: WorkerError,
  success: HostCall,
  payload: {}
}) {}

/**
 * The host's answer to the plugin's request `id`: a value, or why it failed.
 * @since 0.1.0
 * @category models
 */
export class HostAnswer extends Schema.TaggedRequest<HostAnswer>()("HostAnswer", {
  failure: WorkerError,
  success: Schema.Void,
  payload: {
    id: Schema.Number,
    outcome: Schema.Union(
      Schema.TaggedStruct("Succeeded", { value: Schema.Unknown }),
      Schema.TaggedStruct("Failed", { errorTag: optional(Schema.String), reason: Schema.String })
    )
  }
}) {}

/**
 * Every request of the protocol.
 * @since 0.1.0
 * @category schemas
 */
export const Request = Schema.Union(
  Initialize,
  CallAction,
  CallHook,
  CallSystem,
  CallAvailability,
  Dispose,
  Heartbeat,
  HostCalls,
  HostAnswer
)

/**
 * Every request of the protocol.
 * @since 0.1.0
 * @category models
 */
export type Request = typeof Request.Type
