/**
 * What `city ... --json` prints: one Schema per verb, over one envelope and one vocabulary
 * (docs/cli.md, "`--json` fields", the glossary). Every document is `{ ok, verb, ... }`; a
 * failure is `{ ok: false, verb, error: { _tag, message, ... } }`. A peer is named `peer` (its
 * personality name), an endpoint as a whole `endpoint` (`<runtime>-<personality>`), and field
 * names are snake_case. The verbs build their documents with the converters below and print
 * them through `output.printDocument`, typed by these Schemas; `test/acceptance/JsonOutput.test.ts`
 * decodes every verb's output with them, excess fields refused.
 *
 * The names of the files and of the log (`personality` in a peer file, the lifecycle log's
 * `identity=`) are theirs and stay: only what `--json` prints is translated here.
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { Fault } from "../schema/Faults.ts"
import { IsolationMode } from "../schema/Isolation.ts"
import { Application, EndpointRemoval } from "../schema/Live.ts"
import { RootKind, SkippedPlugin } from "../schema/LoadReport.ts"
import { Occasion } from "../schema/Occasion.ts"
import { EndpointRecord, ProvisionState } from "../schema/Outcome.ts"
import { PluginSnapshot } from "../schema/PluginSnapshot.ts"
import { StatusFleetHost } from "../schema/StatusDocument.ts"

// The pieces.

/** The envelope's common fields: `ok` and the verb, the whole command without `city`. */
const envelope = <const V extends string>(verb: V) => ({ ok: Schema.Boolean, verb: Schema.Literal(verb) })

/**
 * An invalid file (or record, or manifest issue) met on the way: reported, never skipped silently.
 * A refused file (declaration, peer file, endpoint records, `host.json`) adds every fault:
 * `field` and `rule` are the first one's, `faults` the first 20, `more_faults` how many more.
 */
export const Invalid = Schema.Struct({
  kind: Schema.String,
  file: Schema.String,
  field: Schema.String,
  rule: Schema.String,
  faults: Schema.optional(Schema.Array(Fault)),
  more_faults: Schema.optional(Schema.Number),
  message: Schema.String
})

/** Whether a `city daemon` runs on the root. */
export const Daemon = Schema.Struct({ running: Schema.Boolean, pid: Schema.NullOr(Schema.Number) })

/** One endpoint's outcome at a joint; on a fleet, a sweep's names its host. */
export const Outcome = Schema.Struct({
  host: Schema.optional(Schema.String),
  capability: Schema.String,
  peer: Schema.String,
  runtime: Schema.String,
  occasion: Occasion,
  state: ProvisionState,
  exit: Schema.optional(Schema.Number),
  ms: Schema.Number,
  detail: Schema.optional(Schema.String),
  application: Schema.optional(Application),
  application_detail: Schema.optional(Schema.String)
})

/** A joint's counts; a sweep also counts the peer files it could not read. */
export const Summary = Schema.Struct({
  total: Schema.Number,
  ok: Schema.Number,
  failed: Schema.Number,
  by_state: Schema.Record({ key: Schema.String, value: Schema.Number })
})
export const SweepSummary = Schema.Struct({ ...Summary.fields, unreadable_peer_files: Schema.Number })

const joint = {
  verdict: Schema.Literal("ok", "warned", "failed"),
  outcomes: Schema.Array(Outcome),
  summary: Summary,
  invalid: Schema.Array(Invalid)
}
const sweep = { ...joint, summary: SweepSummary, daemon: Daemon }

/** A declaration as listed. */
export const Capability = Schema.Struct({
  capability: Schema.String,
  version: Schema.NullOr(Schema.String),
  package: Schema.NullOr(Schema.String),
  runtimes: Schema.Array(Schema.String)
})

/** A peer as listed. */
export const PeerJson = Schema.Struct({
  peer: Schema.String,
  cwd: Schema.String,
  runtimes: Schema.Array(Schema.String),
  default_runtime: Schema.String
})

/** The last call of one endpoint of a capability, or `null` when it was never called. */
export const LastCall = EndpointRecord

/** The owed reload and removal of one endpoint (docs/live-application.md). */
export const Owed = Schema.Struct({
  endpoint: Schema.String,
  peer: Schema.String,
  runtime: Schema.String,
  reload: Schema.NullOr(Schema.Struct({ requested: Schema.Number, applied: Schema.Number, reason: Schema.String })),
  removal: Schema.NullOr(Schema.Struct({ requested_at: Schema.String, force: Schema.optional(Schema.Boolean) })),
  last_error: Schema.NullOr(Schema.String),
  attempts: Schema.Number,
  next_attempt_at: Schema.NullOr(Schema.String),
  updated_at: Schema.String
})

/** A plugin root. */
const Root = Schema.Struct({ kind: RootKind, path: Schema.String })

/** The part of a plugin-list document both sources share. */
const pluginSet = {
  daemon: Daemon,
  generation: Schema.Number,
  loaded: Schema.Array(Schema.Struct({
    name: Schema.String,
    version: Schema.String,
    root: RootKind,
    folder: Schema.String,
    status: Schema.String,
    isolation: IsolationMode,
    heap_used_bytes: Schema.NullOr(Schema.Number),
    dropped: Schema.Array(Schema.Struct({ kind: Schema.String, name: Schema.String, key: Schema.String })),
    warnings: Schema.Array(Schema.String),
    config_unset: Schema.Array(Schema.String)
  })),
  skipped: Schema.Array(SkippedPlugin),
  not_enabled: Schema.Array(Schema.Struct({ name: Schema.String, root: RootKind, folder: Schema.String })),
  missing: Schema.Array(Schema.String),
  notices: Schema.Array(Schema.String),
  invalid: Schema.Array(Invalid)
}

/** The fields an error carries in the envelope, besides `_tag` and `message`, in the glossary's words. */
export const ErrorJson = Schema.Struct({
  _tag: Schema.String,
  message: Schema.String,
  peer: Schema.optional(Schema.String),
  runtime: Schema.optional(Schema.String),
  capability: Schema.optional(Schema.String),
  endpoint: Schema.optional(Schema.String),
  file: Schema.optional(Schema.String),
  field: Schema.optional(Schema.String),
  rule: Schema.optional(Schema.String),
  hint: Schema.optional(Schema.String),
  kind: Schema.optional(Schema.String),
  value: Schema.optional(Schema.String),
  known: Schema.optional(Schema.Array(Schema.String)),
  path: Schema.optional(Schema.String),
  operation: Schema.optional(Schema.String),
  detail: Schema.optional(Schema.String),
  root: Schema.optional(Schema.String),
  reason: Schema.optional(Schema.String),
  setting: Schema.optional(Schema.String),
  pid: Schema.optional(Schema.Number),
  owner: Schema.optional(Schema.Number),
  waited_ms: Schema.optional(Schema.Number),
  suggestions: Schema.optional(Schema.Array(Schema.String)),
  plugin: Schema.optional(Schema.String),
  action: Schema.optional(Schema.String),
  status: Schema.optional(Schema.String),
  last_error: Schema.optional(Schema.String),
  /** `plugins call`: the action's typed failure, `{ _tag, message, ...its own fields }`. */
  failure: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
})

/** Any verb's failure, bad usage included. */
export const Failure = Schema.Struct({ ok: Schema.Literal(false), verb: Schema.String, error: ErrorJson })

/** A call an interrupted joint set out to run that did not finish (docs/cli.md, "Interrupted"). */
export const InterruptedOutcome = Schema.Struct({
  capability: Schema.String,
  peer: Schema.String,
  runtime: Schema.String,
  occasion: Occasion,
  state: Schema.Literal("interrupted")
})

/**
 * Any verb interrupted by SIGINT/SIGTERM: the failure envelope (`error._tag` is `Interrupted`),
 * and when it had started endpoint calls, the outcomes of the finished ones, then each unfinished
 * one as `interrupted`, and their counts (`by_state` counts `interrupted` too).
 */
export const Interrupted = Schema.Struct({
  ...Failure.fields,
  outcomes: Schema.optional(Schema.Array(Schema.Union(Outcome, InterruptedOutcome))),
  summary: Schema.optional(Summary)
})

// One document per verb.

const peerVerb = <const V extends string>(verb: V) => Schema.Struct({ ...envelope(verb), ...PeerJson.fields, ...joint })

/**
 * The success document of every verb, by its `verb`. A verb without one here fails the test that
 * runs them all; `daemon` prints log lines instead (docs/cli.md, "`--json` fields").
 */
export const documents = {
  "capability register": Schema.Struct({ ...envelope("capability register"), ...Capability.fields, ...sweep }),
  "capability sync": Schema.Struct({ ...envelope("capability sync"), capability: Schema.String, ...sweep }),
  "capability unregister": Schema.Struct({ ...envelope("capability unregister"), capability: Schema.String, ...sweep }),
  "capability list": Schema.Struct({
    ...envelope("capability list"),
    capabilities: Schema.Array(Schema.Struct({
      ...Capability.fields,
      endpoints: Schema.Array(Schema.Struct({ peer: Schema.String, runtime: Schema.String, last: Schema.NullOr(LastCall) }))
    })),
    owed: Schema.Array(Owed),
    daemon: Daemon,
    invalid: Schema.Array(Invalid)
  }),
  "peer create": peerVerb("peer create"),
  "peer init": peerVerb("peer init"),
  "peer add-runtime": Schema.Struct({ ...peerVerb("peer add-runtime").fields, runtime: Schema.String }),
  "peer default-runtime": Schema.Struct({ ...peerVerb("peer default-runtime").fields, runtime: Schema.String, wired: Schema.Boolean }),
  "peer remove": Schema.Struct({ ...envelope("peer remove"), peer: Schema.String, ...joint }),
  "peer remove-runtime": Schema.Struct({
    ...peerVerb("peer remove-runtime").fields,
    runtime: Schema.String,
    removal: EndpointRemoval,
    removal_detail: Schema.NullOr(Schema.String),
    daemon: Daemon
  }),
  fleet: Schema.Struct({
    ...envelope("fleet"),
    hosts: Schema.Array(StatusFleetHost),
    invalid: Schema.Array(Invalid)
  }),
  "peer list": Schema.Struct({ ...envelope("peer list"), peers: Schema.Array(PeerJson), invalid: Schema.Array(Invalid) }),
  "status": Schema.Struct({
    ...envelope("status"),
    owed: Schema.Array(Owed),
    daemon: Schema.Struct({
      ...Daemon.fields,
      /** The running daemon's thread is blocked (its watchdog's freeze record), else null. */
      frozen: Schema.NullOr(Schema.Struct({ plugin: Schema.NullOr(Schema.String), location: Schema.NullOr(Schema.String), since: Schema.String }))
    }),
    plugins: Schema.Struct({
      generation: Schema.NullOr(Schema.Struct({
        number: Schema.Number,
        started_at: Schema.String,
        loaded: Schema.Number,
        skipped: Schema.Array(Schema.Struct({ name: Schema.String, root: RootKind, kind: Schema.String, reason: Schema.String })),
        missing: Schema.Array(Schema.String),
        /** The loaded plugins that run in worker threads or processes of their own. */
        isolated: Schema.Array(Schema.String),
        /** The loaded plugins not ready now (unresponsive, ended, starting again), with why. */
        unwell: Schema.Array(Schema.Struct({ name: Schema.String, status: Schema.String, last_error: Schema.NullOr(Schema.String) }))
      })),
      restart: Schema.NullOr(Schema.Struct({
        requested: Schema.Number,
        applied: Schema.Number,
        pending: Schema.Boolean,
        last_error: Schema.NullOr(Schema.Struct({ target: Schema.Number, reason: Schema.String, at: Schema.String }))
      }))
    }),
    /** The status page's address when the running daemon serves one (`city daemon --http`), else null. */
    page: Schema.NullOr(Schema.String),
    /** On a host of a fleet (host.json's `cluster`): this host, every host as `city fleet` lists them; else null. */
    fleet: Schema.NullOr(Schema.Struct({ host: Schema.String, hosts: Schema.Array(StatusFleetHost), invalid: Schema.Array(Invalid) })),
    invalid: Schema.Array(Invalid)
  }),
  "reload": Schema.Struct({
    ...envelope("reload"),
    peer: Schema.String,
    endpoints: Schema.Array(Schema.Struct({
      endpoint: Schema.String,
      peer: Schema.String,
      runtime: Schema.String,
      application: Application,
      detail: Schema.optional(Schema.String)
    })),
    daemon: Daemon,
    invalid: Schema.Array(Invalid)
  }),
  "plugins discover": Schema.Struct({
    ...envelope("plugins discover"),
    roots: Schema.Array(Root),
    plugins: Schema.Array(Schema.Struct({
      name: Schema.String,
      root: RootKind,
      folder: Schema.String,
      version: Schema.NullOr(Schema.String),
      description: Schema.NullOr(Schema.String),
      status: Schema.Literal("valid", "invalid"),
      enabled: Schema.Boolean,
      /** In `plugins.json`'s `licensed`; `null` for the bundled root, which is never gated. */
      licensed: Schema.NullOr(Schema.Boolean),
      /** Why `plugins list` would not load it: the manifest's reason, else `not included in this licence`; else `null`. */
      reason: Schema.NullOr(Schema.String)
    })),
    invalid: Schema.Array(Invalid)
  }),
  "plugins list": Schema.Union(
    Schema.Struct({
      ...envelope("plugins list"),
      source: Schema.Literal("daemon"),
      ...pluginSet,
      started_at: Schema.String,
      dispose_failures: Schema.optional(Schema.Array(Schema.Struct({ name: Schema.String, reason: Schema.String })))
    }),
    Schema.Struct({ ...envelope("plugins list"), source: Schema.Literal("throwaway"), ...pluginSet, alerts: Schema.Array(PluginSnapshot) })
  ),
  "plugins call": Schema.Struct({
    ...envelope("plugins call"),
    plugin: Schema.String,
    action: Schema.String,
    /** Where the call ran: the running daemon's City, or a throwaway City of the verb's own. */
    source: Schema.Literal("daemon", "throwaway"),
    daemon: Daemon,
    /** What the action returned, as JSON (`undefined` is `null`). */
    result: Schema.Unknown
  }),
  "plugins clear-quarantine": Schema.Struct({
    ...envelope("plugins clear-quarantine"),
    plugin: Schema.String,
    /** Whether it was quarantined (and now is not). */
    cleared: Schema.Boolean
  }),
  "plugins reload": Schema.Struct({
    ...envelope("plugins reload"),
    status: Schema.Literal("applied", "failed", "pending"),
    requested: Schema.Number,
    generation: Schema.optional(Schema.NullOr(Schema.Number)),
    reason: Schema.optional(Schema.String),
    daemon: Daemon
  })
} as const

/** `city --version --json`. */
export const VersionDocument = Schema.Struct({ ...envelope(""), version: Schema.String })

/** A verb that prints a document. */
export type DocumentVerb = keyof typeof documents

/** What a verb prints, its `verb` aside (added by `output.printDocument`). */
export type Body<V extends DocumentVerb> = WithoutVerb<Schema.Schema.Type<(typeof documents)[V]>>

/** `Omit<T, "verb">` of each member of a union. */
type WithoutVerb<T> = T extends unknown ? Omit<T, "verb"> : never

/**
 * One line of `city daemon --json` (Effect's JSON logger: `Logger.jsonLogger`); `cause` only on a
 * failure. The daemon's failure is the `Failure` envelope on one last line instead.
 */
export const DaemonLogLine = Schema.Struct({
  message: Schema.Unknown,
  logLevel: Schema.String,
  timestamp: Schema.String,
  cause: Schema.optional(Schema.String),
  annotations: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  spans: Schema.Record({ key: Schema.String, value: Schema.Number }),
  fiberId: Schema.String
})
