/**
 * `city daemon`: its summary and flags; what it does (the pid file, the City with its plugins,
 * the owed-work applier, the status page) is in `run/daemon.ts`, loaded when it runs.
 * @since 0.1.0
 */
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Invocation } from "./invocation.ts"
import * as Opt from "./options.ts"
import { bundled } from "./plugins.ts"
import { loaded, verb } from "./verbs.ts"

const handlers = () => import("./run/daemon.ts")

/**
 * The daemon of a host of a fleet: loaded only with `--cluster`, the one door of the `city`
 * program to the cluster packages (docs/cluster.md; test/repository/ClusterImports.test.ts holds it
 * to that).
 */
const clusterHandlers = () => import("./run/cluster.ts")

/** Whether the root's host.json names a fleet (`cluster`): then the daemon is a host of it. */
const fleetConfig = () => import("./run/fleetConfig.ts")

const logFormat = Opt.described(
  Opt.choiceOption("log-format", ["logfmt", "json"], "logfmt").pipe(Options.withDescription("The daemon's log format")),
  { kind: "flag", usage: "--log-format <logfmt|json>", description: "The daemon's log format", default: "logfmt" }
)

/** `--json` of the daemon: its log as JSON lines (docs/cli.md, "`--json` fields"). */
const json = Opt.described(
  Options.boolean("json").pipe(Options.withDescription("Write the log as JSON lines on stdout (as --log-format json does)")),
  { kind: "flag", usage: "--json", description: "Write the log as JSON lines on stdout, one object a line (as --log-format json does)" }
)

const pollMs = Opt.described(
  Opt.numberOption("poll-ms", "milliseconds", 3000).pipe(
    Options.withDescription("How often owed work, Turn requests and the list of endpoints are checked, in milliseconds")
  ),
  { kind: "flag", usage: "--poll-ms <ms>", description: "How often owed work, Turn requests and the list of endpoints are checked", default: "3000" }
)

const fingerprintPollMs = Opt.described(
  Opt.numberOption("fingerprint-poll-ms", "milliseconds", 300_000).pipe(
    Options.withDescription(
      "How often every endpoint's launch-read files are polled, the safety net under watching their folders, in milliseconds"
    )
  ),
  {
    kind: "flag",
    usage: "--fingerprint-poll-ms <ms>",
    description: "How often every endpoint's launch-read files are polled, the safety net under watching their folders",
    default: "300000"
  }
)

const retryBaseMs = Opt.described(
  Options.integer("retry-base-ms").pipe(
    Options.withDescription("The delay before a failed owed reload or removal is tried again; doubled after each failure"),
    Options.withDefault(1000)
  ),
  {
    kind: "flag",
    usage: "--retry-base-ms <ms>",
    description: "The delay before a failed owed reload or removal is tried again; doubled after each failure",
    default: "1000"
  }
)

const retryCapMs = Opt.described(
  Options.integer("retry-cap-ms").pipe(
    Options.withDescription("The longest delay between two attempts of failed owed work"),
    Options.withDefault(300_000)
  ),
  { kind: "flag", usage: "--retry-cap-ms <ms>", description: "The longest delay between two attempts of failed owed work", default: "300000" }
)


const deadlineMs = Opt.described(
  Opt.numberOption("deadline-ms", "milliseconds", 30_000).pipe(
    Options.withDescription("After SIGINT/SIGTERM, how long a graceful stop may take before the process exits 130")
  ),
  {
    kind: "flag",
    usage: "--deadline-ms <ms>",
    description: "After SIGINT/SIGTERM, how long a graceful stop may take before the process exits 130",
    default: "30000"
  }
)

const http = Opt.optionalText(
  "http",
  "host:port",
  "Serve the status page on this address (loopback only unless --http-public; port 0 picks a free one)",
  "host.json's daemon.http.listen, else no page"
)

const httpPublic = Opt.flag("http-public", "Allow --http on an address other than loopback (prints a warning)")

const httpTokenFile = Opt.optionalText(
  "http-token-file",
  "file",
  "Require the bearer token in this file on every route of the status page but /healthz",
  "host.json's daemon.http.token_file, else no token"
)

const cluster = Opt.optionalText(
  "cluster",
  "url",
  "Run as one host of a fleet whose state is in this database: postgres://… (or sqlite:<file> for a fleet of one host)",
  "host.json's cluster.url, else no fleet: the state root's files"
)

const clusterHost = Opt.optionalText(
  "cluster-host",
  "name",
  "This host's name in the fleet (a name: a-z, 0-9, '.', '_' or '-')",
  "host.json's cluster.host, else this machine's name in lower case"
)

const clusterAddress = Opt.optionalText(
  "cluster-address",
  "host:port",
  "Where the fleet's other runners and clients reach this host's runner (it listens there)",
  "host.json's cluster.address, else 127.0.0.1:34431"
)

export const daemon = verb(
  "daemon",
  "Carry out owed reloads and removals, watch launch-read files, host the City and its plugins",
  {
    root: Opt.root,
    json,
    pollMs,
    fingerprintPollMs,
    retryBaseMs,
    retryCapMs,
    logFormat,
    deadlineMs,
    freezeLimit: Opt.freezeLimit,
    bundled,
    http,
    httpPublic,
    httpTokenFile,
    cluster,
    clusterHost,
    clusterAddress
  },
  (o) =>
    Option.isSome(o.cluster)
      ? loaded(clusterHandlers, (daemon) => daemon.daemon(o))
      : loaded(fleetConfig, (config) =>
        Effect.flatMap(Effect.flatMap(Invocation, (i) => config.configuredFleet(Opt.resolveRoot(o.root, i))), (fleet) =>
          Option.isSome(fleet)
            ? loaded(clusterHandlers, (daemon) => daemon.daemon(o, fleet.value))
            : loaded(handlers, (daemon) => daemon.daemon(o)))),
  [
    "city daemon",
    "city daemon --poll-ms 1000 --json",
    "city daemon --retry-base-ms 5000 --retry-cap-ms 600000",
    "city daemon --bundled /opt/app/plugins",
    "city daemon --freeze-limit 60",
    "city daemon --http 127.0.0.1:8765",
    "city daemon --http 0.0.0.0:8765 --http-public --http-token-file ~/.city-token",
    "city daemon --cluster postgres://city@db.internal/fleet --cluster-host web-01 --cluster-address 10.0.0.5:34431"
  ]
)
