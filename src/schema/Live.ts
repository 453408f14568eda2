/**
 * Live application of surfaces (docs/capability-plugin-lifecycle.md, "Applying surfaces to a
 * live endpoint" to the end): what an endpoint's host says about it, what a verb reports per
 * endpoint, the durable owed-work record, the launch-read fingerprint, and the failures.
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { FamilyTypeId } from "./ErrorFamily.ts"
import { Name } from "./Name.ts"
import { oneLine } from "./OneLine.ts"

/**
 * An endpoint as its host sees it: `idle` (hosted, between Turns), `busy` (a Turn is running),
 * `asleep` (not running; the next launch reads current surfaces), `stopped` (a stop flag keeps
 * it down), `foreign` (owned by an outside service manager: never reloaded by us).
 * @since 0.1.0
 * @category models
 */
export const EndpointState = Schema.Literal("idle", "busy", "asleep", "stopped", "foreign")
/**
 * An endpoint's state as its host reports it.
 * @since 0.1.0
 * @category models
 */
export type EndpointState = typeof EndpointState.Type

/**
 * Runtime application of written surfaces, per endpoint: `applied` (the reload completed),
 * `pending` (a durable owed reload will be applied after the current Turn), `asleep` (asleep or
 * stopped: nothing owed, the next launch reads current surfaces), `foreign` (owned by an outside
 * manager: not applied, exit 1), `failed` (scheduling or reload failed, exit 1).
 * @since 0.1.0
 * @category models
 */
export const Application = Schema.Literal("applied", "pending", "asleep", "foreign", "failed")
/**
 * Runtime application of written surfaces, per endpoint.
 * @since 0.1.0
 * @category models
 */
export type Application = typeof Application.Type

/**
 * What `remove-runtime` did to a live endpoint: `removed` in the call, `pending` (removed by the
 * daemon after the current Turn), `foreign` (refused: an outside manager owns it), `failed`.
 * @since 0.1.0
 * @category models
 */
export const EndpointRemoval = Schema.Literal("removed", "pending", "foreign", "failed")
/**
 * What `remove-runtime` did to a live endpoint.
 * @since 0.1.0
 * @category models
 */
export type EndpointRemoval = typeof EndpointRemoval.Type

const Sequence = Schema.Int.pipe(Schema.nonNegative())

/** A date and time as `Date.parse` reads it (the records write ISO 8601, `DateTime.formatIso`). */
const IsoTime = Schema.String.pipe(
  Schema.filter((s) => !Number.isNaN(Date.parse(s)), { message: () => "expected an ISO 8601 date and time" })
)

/**
 * `state/reloads/<runtime>-<personality>.json`: the owed work of one endpoint. A reload is owed
 * while `requested > applied`. `claim` names the process applying it right now (a dead claimant
 * is ignored). `removal` is an owed removal (the endpoint is retired and removed after its
 * current Turn; with `force`, killed and removed at once by the process that hosts it).
 * `last_error`, `attempts` and `next_attempt_at` are the backoff of failed owed work
 * (docs/live-application.md, "Failed owed work: the backoff"): the last failure, how many attempts
 * failed in a row, and when the next one is due; a record without them owes its work now.
 * @since 0.1.0
 * @category models
 */
export const OwedRecord = Schema.Struct({
  schema: Schema.Literal(1),
  personality: Name,
  runtime: Name,
  requested: Sequence,
  applied: Sequence,
  reason: Schema.String,
  /** The capability whose change owed the last request, when one did (for logs and listings). */
  capability: Schema.optional(Schema.String),
  updated_at: Schema.String,
  claim: Schema.optional(Schema.Struct({
    pid: Schema.Int,
    /** The claimant's start (capabilities/ProcessIdentity.ts), so a reused pid is not taken for it; absent in older records. */
    start: Schema.optional(Schema.NullOr(Schema.String)),
    target: Sequence,
    at: Schema.String
  })),
  removal: Schema.optional(Schema.Struct({ requested_at: Schema.String, force: Schema.optional(Schema.Boolean) })),
  last_error: Schema.optional(Schema.String),
  /** Failed attempts in a row (cleared by a success and by a new request). */
  attempts: Schema.optional(Sequence),
  /** When the next attempt is due (ISO 8601); the daemon skips the endpoint until then. */
  next_attempt_at: Schema.optional(IsoTime)
})
/**
 * The owed work of one endpoint, as stored.
 * @since 0.1.0
 * @category models
 */
export type OwedRecord = typeof OwedRecord.Type

/**
 * One launch-read file as fingerprinted: absent, or its content hash and the stat that produced it
 * (`mtimeMs` in whole milliseconds, as the platform `FileSystem` gives it; `ino` -1 when the file
 * system has none).
 * @since 0.1.0
 * @category models
 */
export const FileFingerprint = Schema.Union(
  Schema.Struct({ absent: Schema.Literal(true) }),
  Schema.Struct({ hash: Schema.String, size: Schema.Number, mtimeMs: Schema.Number, ino: Schema.Number })
)
/**
 * One launch-read file as fingerprinted: absent, or its content hash and the stat that produced it.
 * @since 0.1.0
 * @category models
 */
export type FileFingerprint = typeof FileFingerprint.Type

/**
 * `state/fingerprints/<identity>.json`: what the endpoint's last launch read, per file.
 * @since 0.1.0
 * @category models
 */
export const Fingerprint = Schema.Struct({
  schema: Schema.Literal(1),
  recorded_at: Schema.String,
  files: Schema.Record({ key: Schema.String, value: FileFingerprint })
})
/**
 * What an endpoint's last launch read, per file (`state/fingerprints/<identity>.json`).
 * @since 0.1.0
 * @category models
 */
export type Fingerprint = typeof Fingerprint.Type

/**
 * Why something asked of an endpoint failed, each reason with the fields it fills (every reason
 * has the endpoint's `identity`):
 * - `EndpointHostFailed` (`operation`, `detail`): an endpoint host could not tell the state of,
 *   reload, retire or kill an endpoint.
 * - `ToolNotAvailable` (`tool`, `available`): a tool the endpoint's current surfaces do not list
 *   (never added, or removed and reloaded away).
 * - `ToolFailed` (`tool`, `detail`): a tool call whose command failed.
 * - `EndpointNotHosted`: the endpoint is not hosted here (not launched, or retired).
 * - `OwedWorkFailed` (`work`, `detail`, and `attempts` and `next_attempt_at` or `unrecorded`): an
 *   attempt of owed work failed (its host could not reload, retire or kill the endpoint, or tell
 *   its state). `attempts` and `next_attempt_at` are the backoff recorded for it; `unrecorded`
 *   says why none could be recorded (the work is then tried again at the next pass).
 * @since 0.1.0
 * @category models
 */
const EndpointErrorReason = Schema.Literal(
  "EndpointHostFailed",
  "ToolNotAvailable",
  "ToolFailed",
  "EndpointNotHosted",
  "OwedWorkFailed"
)

/**
 * Why something asked of an endpoint failed.
 * @since 0.1.0
 * @category models
 */
type EndpointErrorReason = typeof EndpointErrorReason.Type

/**
 * Something asked of an endpoint (its host, its tools, its owed work) failed; `reason` says why
 * (`EndpointErrorReason`), and its `name` is the reason, the tag it had before (docs/cli.md,
 * "Error tags and the library's error families"; docs/library.md, "Errors").
 * @since 0.1.0
 * @category errors
 */
export class EndpointError extends Schema.TaggedError<EndpointError>()("EndpointError", {
  reason: EndpointErrorReason,
  /** The endpoint's identity. */
  identity: Schema.String,
  /** `EndpointHostFailed`: what the host was asked (status, reload, retire, kill, ...). */
  operation: Schema.optional(Schema.String),
  /** `EndpointHostFailed`, `ToolFailed`, `OwedWorkFailed`: what happened. */
  detail: Schema.optional(Schema.String),
  /** `ToolNotAvailable`, `ToolFailed`: the tool called. */
  tool: Schema.optional(Schema.String),
  /** `ToolNotAvailable`: the tools the endpoint lists, in name order. */
  available: Schema.optional(Schema.Array(Schema.String)),
  /** `OwedWorkFailed`: the work owed. */
  work: Schema.optional(Schema.Literal("reload", "removal")),
  /** `OwedWorkFailed`: the attempts recorded. */
  attempts: Schema.optional(Schema.Int),
  /** `OwedWorkFailed`: when the next attempt is due. */
  next_attempt_at: Schema.optional(Schema.String),
  /** `OwedWorkFailed`: why no backoff could be recorded. */
  unrecorded: Schema.optional(Schema.String)
}) {
  /** Marks a family's error (`ErrorFamily.printedTag`). */
  get [FamilyTypeId](): true {
    return true
  }
  /** The reason: the tag these failures had before they were one family. */
  override get name(): EndpointErrorReason {
    return this.reason
  }
  override get message() {
    switch (this.reason) {
      case "EndpointHostFailed":
        return `endpoint ${this.identity}: ${this.operation} failed: ${this.detail}`
      case "ToolNotAvailable": {
        const available = this.available ?? []
        return `endpoint ${this.identity}: tool ${this.tool} is not listed by its launch-read files ` +
          `(available: ${available.length === 0 ? "none" : available.join(", ")})`
      }
      case "ToolFailed":
        return `endpoint ${this.identity}: tool ${this.tool} failed: ${this.detail}`
      case "EndpointNotHosted":
        return `endpoint ${this.identity} is not hosted in this process (launch it first)`
      case "OwedWorkFailed": {
        const when = this.attempts !== undefined && this.next_attempt_at !== undefined
          ? `attempt ${this.attempts}, next at ${this.next_attempt_at}`
          : `not recorded: ${oneLine(this.unrecorded ?? "unknown", 200)}`
        return `owed ${this.work} of ${this.identity} failed (${when}): ${oneLine(this.detail ?? "", 300)}`
      }
    }
  }
}

/**
 * Why the daemon could not start or be reached, each reason with the fields it fills:
 * `DaemonAlreadyRunning` (`root`, `pid`, `file`: a second `city daemon` on the same root),
 * `StatusListenFailed` (`address`, `detail`: the status page's server could not listen, the
 * address is in use or not this machine's), `NoStatusPage` (`root`, `daemon`: `city status --url`
 * on a root whose daemon serves no status page, or where no daemon runs),
 * `ControlChannelUnreachable` (`root`, `pid`, `detail`: a daemon runs on the root, but its channel
 * cannot be reached: it published none in time, the socket refused, or the connection closed
 * before the answer; the call is not made anywhere else, a second City beside the daemon would
 * initialize its plugins a second time), `ControlChannelFailed` (`path`, `detail`: the daemon
 * cannot serve its control channel, the socket's path is taken by something that is not a socket
 * or the socket cannot listen; the daemon does not start). docs/cli.md, "The daemon's control
 * channel".
 * @since 0.1.0
 * @category models
 */
const DaemonErrorReason = Schema.Literal(
  "DaemonAlreadyRunning",
  "StatusListenFailed",
  "NoStatusPage",
  "ControlChannelUnreachable",
  "ControlChannelFailed"
)

/**
 * Why the daemon could not start or be reached.
 * @since 0.1.0
 * @category models
 */
type DaemonErrorReason = typeof DaemonErrorReason.Type

/**
 * The daemon could not start, or could not be reached; `reason` says why (`DaemonErrorReason`),
 * and its `name` is the reason, the tag it had before (docs/cli.md, "Error tags and the library's
 * error families").
 * @since 0.1.0
 * @category errors
 */
export class DaemonError extends Schema.TaggedError<DaemonError>()("DaemonError", {
  reason: DaemonErrorReason,
  /** `DaemonAlreadyRunning`, `NoStatusPage`, `ControlChannelUnreachable`: the state root. */
  root: Schema.optional(Schema.String),
  /** `DaemonAlreadyRunning`, `ControlChannelUnreachable`: the running daemon's process. */
  pid: Schema.optional(Schema.Int),
  /** `DaemonAlreadyRunning`: the daemon's record. */
  file: Schema.optional(Schema.String),
  /** `StatusListenFailed`: the address asked for. */
  address: Schema.optional(Schema.String),
  /** `NoStatusPage`: whether a daemon runs on the root. */
  daemon: Schema.optional(Schema.Boolean),
  /** `ControlChannelFailed`: the socket's path. */
  path: Schema.optional(Schema.String),
  /** `StatusListenFailed`, `ControlChannelUnreachable`, `ControlChannelFailed`: what went wrong. */
  detail: Schema.optional(Schema.String)
}) {
  /** Marks a family's error (`ErrorFamily.printedTag`). */
  get [FamilyTypeId](): true {
    return true
  }
  /** The reason: the tag these failures had before they were one family. */
  override get name(): DaemonErrorReason {
    return this.reason
  }
  override get message() {
    switch (this.reason) {
      case "DaemonAlreadyRunning":
        return `a city daemon (pid ${this.pid}) is already running on ${this.root} (${this.file}); refusing to start a second one`
      case "StatusListenFailed":
        return `the status page cannot listen on ${this.address}: ${this.detail}`
      case "NoStatusPage":
        return this.daemon === true
          ? `the city daemon on ${this.root} serves no status page (start it with --http 127.0.0.1:<port>)`
          : `no city daemon is running on ${this.root}, so no status page is served (start one with city daemon --http 127.0.0.1:<port>)`
      case "ControlChannelUnreachable":
        return `the city daemon (pid ${this.pid}) runs on ${this.root}, but its control channel cannot be reached: ${this.detail} ` +
          `(a call runs in the daemon's City only: no second City is loaded beside it)`
      case "ControlChannelFailed":
        return `the control channel cannot listen on ${this.path}: ${this.detail}`
    }
  }
}

/**
 * Why the fleet cannot be used (docs/cluster.md), each reason with the fields it fills:
 * `ClusterUnavailable` (`detail`: the fleet's database, or this host's runner, cannot be used; exit
 * 1, as an unreadable state root is), `HostUnavailable` (`host`, `detail`: a host a fleet call
 * could not be carried to: no runner serves it, its shards cannot be reached).
 * @since 0.1.0
 * @category models
 */
const ClusterErrorReason = Schema.Literal("ClusterUnavailable", "HostUnavailable")

/**
 * Why the fleet cannot be used.
 * @since 0.1.0
 * @category models
 */
type ClusterErrorReason = typeof ClusterErrorReason.Type

/**
 * The fleet, or one of its hosts, cannot be used; `reason` says which (`ClusterErrorReason`), and
 * its `name` is the reason, the tag it had before (docs/cli.md, "Error tags and the library's
 * error families"). Its message names what, on one line.
 * @since 0.1.0
 * @category errors
 */
export class ClusterError extends Schema.TaggedError<ClusterError>()("ClusterError", {
  reason: ClusterErrorReason,
  /** `HostUnavailable`: the host. */
  host: Schema.optional(Name),
  /** What cannot be used, and why. */
  detail: Schema.String
}) {
  /** Marks a family's error (`ErrorFamily.printedTag`). */
  get [FamilyTypeId](): true {
    return true
  }
  /** The reason: the tag these failures had before they were one family. */
  override get name(): ClusterErrorReason {
    return this.reason
  }
  override get message() {
    return this.reason === "HostUnavailable"
      ? `host ${this.host} unavailable: ${this.detail}`
      : `the cluster cannot be used: ${this.detail}`
  }
}
