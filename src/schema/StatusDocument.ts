/**
 * What `city daemon --http` serves (docs/status-page.md): the status document of `GET /api/status`
 * and the events of `GET /api/events`. The document is one picture of the daemon: its plugin
 * generation, the plugins with their snapshots and where they come from, the folders skipped with
 * their reasons, its City Sessions, every endpoint with its last provisioning call and owed work,
 * the recent lifecycle events, and its own health; on a host of a fleet, the fleet's hosts too
 * (docs/cluster.md, "The fleet's status"). Shipped as `schemas/status.schema.json`.
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { IsolationMode } from "./Isolation.ts"
import { RootKind, SkippedPlugin } from "./LoadReport.ts"
import { Occasion } from "./Occasion.ts"
import { ProvisionState } from "./Outcome.ts"
import { PluginStatus } from "./PluginSnapshot.ts"

/**
 * One plugin of the serving generation, or one the registry holds: its snapshot and, for the
 * plugins the loader loaded, its root, version and folder.
 * @since 0.1.0
 * @category models
 */
export const StatusPlugin = Schema.Struct({
  name: Schema.String,
  status: PluginStatus,
  last_error: Schema.NullOr(Schema.String),
  version: Schema.NullOr(Schema.String),
  /** Where it came from: `code` for `city.plugins.add`, else the loader's root. */
  source: Schema.String,
  /** The loader's root, when the loader loaded it. */
  root: Schema.NullOr(RootKind),
  /** The plugin folder, absolute, when the loader loaded it. */
  folder: Schema.NullOr(Schema.String),
  /** Where it runs: the host's thread, a worker thread of its own, or a child process of its own. */
  isolation: IsolationMode,
  /** Its worker's heap in use, in bytes, as last read; `null` when it runs in the host's thread or did not answer. */
  heap_used_bytes: Schema.NullOr(Schema.Number),
  attempts: Schema.Number,
  /** ISO-8601 time of the last status change. */
  updated_at: Schema.String
})
/**
 * One plugin, as the status document shows it.
 * @since 0.1.0
 * @category models
 */
export type StatusPlugin = typeof StatusPlugin.Type

/**
 * How an endpoint stands, in one word: `applied` (nothing owed, its last provisioning call ok),
 * `pending` (a reload or removal owed, not failed yet), `failing` (owed, and the last attempt
 * failed), `failed` (nothing owed, but its last provisioning call did not succeed).
 * @since 0.1.0
 * @category models
 */
export const EndpointStanding = Schema.Literal("applied", "pending", "failing", "failed")
/**
 * How an endpoint stands, in one word.
 * @since 0.1.0
 * @category models
 */
export type EndpointStanding = typeof EndpointStanding.Type

/**
 * One endpoint: a (peer, runtime) of a capability, its last provisioning call, its owed work.
 * An endpoint with owed work but no capability listing it (its capability removed) is shown with
 * `capability` null.
 * @since 0.1.0
 * @category models
 */
export const StatusEndpoint = Schema.Struct({
  capability: Schema.NullOr(Schema.String),
  peer: Schema.String,
  runtime: Schema.String,
  standing: EndpointStanding,
  /** The last provisioning call recorded for it. */
  last: Schema.NullOr(Schema.Struct({
    state: ProvisionState,
    occasion: Occasion,
    at: Schema.String,
    exit: Schema.NullOr(Schema.Number),
    detail: Schema.NullOr(Schema.String)
  })),
  /** Owed work: a reload (`requested > applied`), a removal, or both. */
  owed: Schema.NullOr(Schema.Struct({
    reload: Schema.Boolean,
    removal: Schema.Boolean,
    reason: Schema.String,
    /** Failed attempts in a row. */
    attempts: Schema.Number,
    last_error: Schema.NullOr(Schema.String),
    /** When the next attempt is due (ISO 8601), after a failure. */
    next_attempt_at: Schema.NullOr(Schema.String)
  }))
})
/**
 * One endpoint, as the status document shows it.
 * @since 0.1.0
 * @category models
 */
export type StatusEndpoint = typeof StatusEndpoint.Type

/**
 * One lifecycle event, as the page's live log shows it: when, what kind, one line of text.
 * @since 0.1.0
 * @category models
 */
export const StatusLogEntry = Schema.Struct({
  at: Schema.String,
  /**
   * `plugin`, `endpoint`, `generation` or `provision` (a line of `logs/lifecycle.log`), or `fleet`
   * (a host of the fleet joined, went down or came back up).
   */
  kind: Schema.Literal("plugin", "endpoint", "generation", "provision", "fleet"),
  text: Schema.String
})
/**
 * One lifecycle event of the live log.
 * @since 0.1.0
 * @category models
 */
export type StatusLogEntry = typeof StatusLogEntry.Type

/**
 * One host of the fleet, as the fleet's database has it (what `city fleet --json` lists).
 * @since 0.1.0
 * @category models
 */
export const StatusFleetHost = Schema.Struct({
  host: Schema.String,
  /** Whether a runner of it is registered and healthy now. */
  up: Schema.Boolean,
  /** When it last started, ISO 8601. */
  started_at: Schema.String,
  /** When it last said it was there (every 30 s while it runs), ISO 8601. */
  seen_at: Schema.String,
  peers: Schema.Number,
  /** Its (peer, runtime) pairs whose runtime it runs as an agent. */
  endpoints: Schema.Number,
  owed_reloads: Schema.Number,
  owed_removals: Schema.Number
})
/**
 * One host of the fleet.
 * @since 0.1.0
 * @category models
 */
export type StatusFleetHost = typeof StatusFleetHost.Type

/**
 * The fleet this daemon's host belongs to: its hosts as last read from the fleet's database.
 * @since 0.1.0
 * @category models
 */
export const StatusFleet = Schema.Struct({
  /** This daemon's host. */
  host: Schema.String,
  /** When the fleet was last read, ISO 8601; `null` before the first read succeeded. */
  read_at: Schema.NullOr(Schema.String),
  /** In name order (code units). */
  hosts: Schema.Array(StatusFleetHost),
  /** One line per row of the fleet's database that could not be read: the row, the field, the rule. */
  invalid: Schema.Array(Schema.String)
})
/**
 * The fleet part of the status document.
 * @since 0.1.0
 * @category models
 */
export type StatusFleet = typeof StatusFleet.Type

/**
 * `GET /api/status`: the whole document.
 * @since 0.1.0
 * @category schemas
 */
export const StatusDocument = Schema.Struct({
  schema: Schema.Literal(1),
  generation: Schema.Struct({
    number: Schema.Number,
    started_at: Schema.String
  }),
  /** In name order (code units). */
  plugins: Schema.Array(StatusPlugin),
  /** In the order the loader met them. */
  skipped: Schema.Array(SkippedPlugin),
  /** Enabled names no root provides. */
  missing: Schema.Array(Schema.String),
  sessions: Schema.Struct({
    /** Endpoints hosted as City Sessions. */
    count: Schema.Number,
    /** Of those, running a Turn now. */
    busy: Schema.Number,
    idle: Schema.Number
  }),
  /** By capability, then peer, then runtime (code units); endpoints with no capability last. */
  endpoints: Schema.Array(StatusEndpoint),
  /** The most recent lifecycle events, oldest first. */
  log: Schema.Array(StatusLogEntry),
  daemon: Schema.Struct({
    pid: Schema.Number,
    version: Schema.String,
    started_at: Schema.String,
    uptime_ms: Schema.Number,
    /** When the daemon last looked at the state root (owed work, endpoints), ISO 8601. */
    last_poll_at: Schema.NullOr(Schema.String),
    poll_ms: Schema.Number
  }),
  /** The fleet, on a host of one (`city daemon --cluster`); `null` on a host alone. */
  fleet: Schema.NullOr(StatusFleet)
}).annotations({ identifier: "StatusDocument", title: "effect-city status document" })
/**
 * The status document.
 * @since 0.1.0
 * @category models
 */
export type StatusDocument = typeof StatusDocument.Type

/**
 * `GET /api/events`: one server-sent event. The first event of every connection is `status`, the
 * whole document; then `plugin`, `plugin-removed`, `endpoint`, `endpoint-removed` and `log` as
 * they happen, `health` at every poll (the daemon's health, its Sessions and the fleet), and
 * `status` again when the generation changes. Each is the `data:` of an event named by its `_tag`.
 * @since 0.1.0
 * @category schemas
 */
export const StatusEvent = Schema.Union(
  Schema.TaggedStruct("status", { document: StatusDocument }),
  Schema.TaggedStruct("plugin", { plugin: StatusPlugin }),
  Schema.TaggedStruct("plugin-removed", { name: Schema.String }),
  Schema.TaggedStruct("endpoint", { endpoint: StatusEndpoint }),
  Schema.TaggedStruct("endpoint-removed", { capability: Schema.NullOr(Schema.String), peer: Schema.String, runtime: Schema.String }),
  Schema.TaggedStruct("log", { entry: StatusLogEntry }),
  Schema.TaggedStruct("health", {
    daemon: StatusDocument.fields.daemon,
    sessions: StatusDocument.fields.sessions,
    fleet: StatusDocument.fields.fleet
  })
)
/**
 * One server-sent event of `GET /api/events`.
 * @since 0.1.0
 * @category models
 */
export type StatusEvent = typeof StatusEvent.Type

/**
 * The key of an endpoint in the document: capability (empty when none), peer, runtime.
 * @since 0.1.0
 * @category utils
 */
export const endpointKey = (e: { readonly capability: string | null; readonly peer: string; readonly runtime: string }): string =>
  JSON.stringify([e.capability ?? "", e.peer, e.runtime])
