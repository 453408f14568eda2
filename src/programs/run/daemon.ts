/**
 * `city daemon`: hosts the City on the state root and carries out owed
 * work. At start it takes the pid file (a second daemon on the same root refuses with
 * `DaemonAlreadyRunning`, exit 1), recovers owed work (the applier's first pass claims every owed
 * record, including those a killed daemon left claimed), then runs the owed-work applier every
 * `--poll-ms` (default 3000) and the fingerprint watcher (the launch-read folders watched, every
 * endpoint polled every `--fingerprint-poll-ms`, default 300000, as the safety net), and hosts the
 * plugin loader. A failed
 * owed reload or removal is tried again on its backoff (RetryBackoff.ts), not at every poll: after
 * `--retry-base-ms` (default 1000), doubling up to `--retry-cap-ms` (default 300000); a base below
 * 1 or a cap below the base is refused (exit 2).
 *
 * Plugins (docs/plugin-loader-lifecycle.md: "Every daemon start builds the registry generation
 * from disk"): after the pid file, the daemon reads `$CITY_ROOT/plugins.json` and builds plugin
 * generation 1 from the roots (bundled from `--bundled <dir>`, else `bundledRoot`; instance
 * `$CITY_ROOT/plugins`) in its own City, the one its City Sessions run in (Loader.city), and logs
 * `plugin generation 1 ready: N loaded, M skipped`. Skips are logged and never stop it. Loaded
 * plugins get the Generations-bound `requestReload`: skills reload live, a restart builds a new
 * generation. `city plugins reload` requests a restart durably (RestartRequests.ts), carried out
 * at the next poll; the running generation is published to `state/plugins/generation.json` for
 * `city plugins list` and `city status`. Decision: a `plugins.json` that is refused
 * (an InvalidFile of reason `LoaderSettings`) is refused input like for the `city plugins` verbs: logged, one
 * `city: error:` line, exit 2, before any plugin code runs.
 *
 * Endpoints of runtimes whose profile says `"host": "city"` are hosted here as City Sessions
 * (launched at start and as peers appear; their state published for the `city` verbs); their
 * Turns are requested through `state/turns/` (TurnInbox.ts). Other runtimes are driven through
 * their profile's commands.
 *
 * The host's own thread has a watchdog (docs/plugin-loader.md, "The host's own thread";
 * watchdog/HostWatchdog.ts), started after the pid file and before any plugin code runs: a plugin
 * blocking the daemon's thread is reported (its log line, `daemon.freeze.json`, `city status`:
 * frozen), and at `--freeze-limit` (default 30 s; below 1 refused, exit 2) the daemon ends with exit
 * 70 naming it. At start, a plugin a previous daemon froze on is quarantined: loaded in a worker
 * thread until `city plugins clear-quarantine` (watchdog/Quarantine.ts).
 *
 * It always serves its control channel (services/control/ControlServer.ts, docs/cli.md, "The
 * daemon's control channel"): a Unix socket, `state/control.sock` (or a short path under the temp
 * folder when the root's is too long), on which `city plugins call` runs a plugin's action in this
 * City; its place is published in `state/control.json`. A socket a killed daemon left is replaced;
 * a path taken by anything else, or a socket that cannot listen, fails the start (exit 1). Stopped,
 * the record and the socket go first, before the City closes.
 *
 * With `--http <host:port>` (or `host.json`'s `daemon.http`) it serves a live status page
 * (docs/status-page.md, programs/statusPage.ts): loopback only unless `--http-public`, a bearer
 * token with `--http-token-file`; a refused address or token file is refused input (exit 2) before
 * the pid file is taken, a port that is taken fails the start (exit 1).
 *
 * On SIGINT/SIGTERM it closes gracefully: no new Turn or owed work is taken, running Turns finish,
 * a claimed reload finishes, the City closes (Steps drain, plugins dispose), the pid file goes,
 * exit 0. Owed work not yet done stays
 * recorded for the next start. After the finalizer deadline (`--deadline-ms`, default 30 s) the
 * process exits 130 naming the Turns and endpoints whose work it abandoned.
 *
 * The log goes through the Effect Logger, `--log-format logfmt|json`, with `endpoint` (and, where
 * known, `capability`) as annotations. `--json` is `--log-format json` (both together are fine):
 * stdout is then JSON lines, the log's and, when the daemon fails, the `{ ok: false, verb, error }`
 * envelope on one last line (docs/cli.md, "`--json` fields").
 * @since 0.1.0
 */
import * as path from "node:path"
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as HashSet from "effect/HashSet"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Pretty from "effect/Pretty"
import { CloseReport } from "../../schema/CloseReport.ts"
import * as CapabilityServices from "../../layers/CapabilityServices.ts"
import * as LoaderCore from "../../layers/internal/loaderCore.ts"
import * as LiveDaemon from "../../layers/LiveDaemon.ts"
import { cityRuntimes } from "../../layers/internal/routedHost.ts"
import { RuntimeProfiles } from "../../services/capabilities/RuntimeProfiles.ts"
import { Peers } from "../../services/capabilities/Peers.ts"
import { StateRoot } from "../../services/root/StateRoot.ts"
import { CitySessionsHost } from "../../services/live/CitySessionsHost.ts"
import type { EndpointRef } from "../../services/live/EndpointHost.ts"
import { makeRefs } from "../../services/live/Endpoints.ts"
import * as EndpointList from "../../services/live/EndpointList.ts"
import { layout } from "../../services/root/CityRoot.ts"
import { layer as ReloadsLayer, Reloads } from "../../services/owed/Reloads.ts"
import * as TurnInbox from "../../services/live/TurnInbox.ts"
import { RetryBackoff } from "../../services/owed/RetryBackoff.ts"
import { Applier } from "../../services/live/Applier.ts"
import { ProcessRecords } from "../../services/capabilities/ProcessRecords.ts"
import * as DaemonLock from "../../services/live/DaemonLock.ts"
import * as FingerprintPoll from "../../services/live/FingerprintPoll.ts"
import type { RestartRecord } from "../../schema/PluginGeneration.ts"
import * as RestartRequests from "../../services/loader/RestartRequests.ts"
import * as Settings from "../../services/loader/Settings.ts"
import { markGracefulStop, onDeadline } from "../main.ts"
import * as Opt from "../options.ts"
import { Invocation } from "../invocation.ts"
import { exitCodeOf } from "../../schema/ExitPolicy.ts"
import type { ClusterError } from "../../schema/Live.ts"
import type { StateRootError } from "../../schema/CapabilityErrors.ts"
import * as HttpListen from "../../schema/HttpListen.ts"
import * as TextFile from "../../services/files/TextFile.ts"
import type * as StatusHttp from "../../layers/StatusHttp.ts"
import type { FleetSource } from "../../services/status/StatusBoard.ts"
import * as Out from "../output.ts"
import * as Plugins from "./plugins.ts"
import { City } from "../../services/city/CityService.ts"
import { PluginRegistry } from "../../services/city/internal/pluginRegistry.ts"
import * as ActionCall from "../../services/city/internal/actionCall.ts"
import { ExecutionLeases } from "../../services/city/internal/executionLeases.ts"
import * as ControlServer from "../../services/control/ControlServer.ts"
import { version } from "../version.ts"
import type { ControlResponse } from "../../schema/ControlChannel.ts"
import * as HostFaults from "../../services/watchdog/HostFaults.ts"
import * as HostWatchdog from "../../services/watchdog/HostWatchdog.ts"
import * as Quarantine from "../../services/watchdog/Quarantine.ts"

/**
 * The daemon's exit code when its watchdog ends it at the freeze limit, or plugin code on its
 * thread throws uncaught (docs/cli.md, "Exit codes"): 70, sysexits' EX_SOFTWARE, apart from every
 * code a verb exits with.
 */
const frozenExitCode = 70

/** How often a daemon on a fleet reads its peers again (the database tells of no change). */
const fleetPeersRefresh = Duration.seconds(2)

/**
 * The daemon's work, in the caller's Scope, over its City with the loader (generation 1 built) and
 * with the pid file held: owed-work applier, fingerprint watcher, Turn inbox, restart requests
 * (`restartsBefore`: the request record as it was before generation 1 loaded); runs until
 * interrupted.
 * @since 0.1.0
 */
export const run = (
  interval: Duration.DurationInput,
  deadline: Duration.DurationInput = Duration.seconds(30),
  restartsBefore: Option.Option<RestartRecord> = Option.none(),
  http: Option.Option<StatusHttp.StatusHttpOptions> = Option.none(),
  fingerprintPoll: Duration.DurationInput = Duration.minutes(5),
  fleet?: FleetSource
) =>
  Effect.gen(function*() {
  const applier = yield* Applier
  const reloads = yield* Reloads
  const sessions = yield* CitySessionsHost
  const profiles = yield* RuntimeProfiles
  const refs = makeRefs(profiles, yield* Peers, yield* StateRoot)
  // Every endpoint, the peer files read again only when `peers/` changed (EndpointList.ts). On a
  // fleet the peers are the database's rows, of which no watch tells: read every 2 s, so a peer
  // created by a verb is hosted and its launch-read files watched within that (docs/cluster.md,
  // "Verbs on a fleet").
  const refresh = fleet === undefined ? Duration.decode(fingerprintPoll) : Duration.min(Duration.decode(fingerprintPoll), fleetPeersRefresh)
  const endpoints = yield* EndpointList.make(refs.all, (yield* StateRoot).resolve(layout.peers), refresh)
  const city = new Set(cityRuntimes(profiles.config))
  const hosted = new Map<string, EndpointRef>()
  const owed = yield* reloads.list
  yield* Effect.logInfo(`city daemon started; ${owed.length} endpoint(s) with owed work to recover`).pipe(
    Effect.annotateLogs({ pid: process.pid, poll_ms: Duration.toMillis(Duration.decode(interval)) })
  )

  /** Hosts every endpoint of a `city` runtime that is not hosted yet (new peers included). */
  const launchAll = Effect.gen(function*() {
    for (const ref of yield* endpoints) {
      if (!city.has(ref.runtime) || hosted.has(ref.identity)) continue
      yield* sessions.launch(ref).pipe(
        Effect.tap(() => Effect.sync(() => void hosted.set(ref.identity, ref))),
        Effect.tap(() => Effect.logInfo("endpoint hosted as a City Session")),
        Effect.catchAll((e) => Effect.logError(e.message)),
        Effect.annotateLogs({ endpoint: ref.identity })
      )
    }
    // Retired by an owed removal: no longer an endpoint, no longer hosted.
    for (const [identity, ref] of hosted) if (sessions.sessionCount(ref) === 0) hosted.delete(identity)
  }).pipe(Effect.catchAll((e) => Effect.logError(`hosting pass failed: ${e.message}`)))

  const inbox = yield* TurnInbox.make(sessions, (identity) => hosted.get(identity))
  const root = (yield* StateRoot).root
  onDeadline(() => [...applier.inFlight(), ...inbox.inFlight()].join(", "), deadline, () => DaemonLock.releaseAtExit(root))
  // The daemon's last word, after the City's close (Sessions, then plugins, then Workspaces), with
  // its summary: the close runs here, once, and the City layer's own close returns the same report.
  const cityService = yield* City
  yield* Effect.addFinalizer(() =>
    Effect.gen(function*() {
      const closed = yield* Effect.either(cityService.close)
      const report = closed._tag === "Right" ? closed.right : closed.left.report
      const left = yield* Effect.orElseSucceed(reloads.list, () => [])
      const summary = `city daemon stopped: ${Pretty.make(CloseReport)(report)}; ` +
        `${left.length} endpoint(s) with owed work kept for the next start`
      if (closed._tag === "Left") yield* Effect.logError(closed.left.message)
      yield* (report.failures.length === 0 ? Effect.logInfo(summary) : Effect.logWarning(summary))
    })
  )
  // Runs after the loops below are interrupted: running Turns finish, none is cut short.
  yield* Effect.addFinalizer(() =>
    Effect.zipRight(
      Effect.logInfo(`stopping: waiting for ${inbox.inFlight().length} running Turn(s)`),
      inbox.awaitRunning
    )
  )
  if (Option.isSome(http)) {
    // Loaded only when a page is asked for: every other start of `city` skips the HTTP server's code.
    const page = yield* Effect.promise(() => import("../statusPage.ts"))
    yield* page.serve(http.value, Duration.decode(interval), () => {
      const busy = inbox.busy()
      return { count: hosted.size, busy: [...hosted.keys()].filter((identity) => busy.has(identity)).length }
    }, fingerprintPoll, fleet)
  }
  // The control channel (services/control/): `city plugins call` runs its action in this City.
  const core = yield* Effect.context<PluginRegistry | ExecutionLeases>()
  yield* ControlServer.serve((request) =>
    ActionCall.call(request).pipe(
      Effect.match({
        onFailure: (error): ControlResponse => ({ _tag: "Failed", error }),
        onSuccess: (result): ControlResponse => ({ _tag: "Returned", result })
      }),
      Effect.provide(core)
    ), yield* version)
  yield* launchAll
  yield* applier.start(interval)
  yield* Effect.forkScoped(FingerprintPoll.run({ interval, poll: fingerprintPoll, endpoints }))
  yield* Effect.forkScoped(Effect.forever(Effect.zipRight(
    Effect.zipRight(launchAll, inbox.pass.pipe(Effect.catchAll((e) => Effect.logError(`turn inbox: ${e.message}`)))),
    Effect.sleep(interval)
  )))
  yield* RestartRequests.serve(restartsBefore, interval)
  return yield* Effect.never
  })

/** The backoff of the flags, or the refusal naming the flag and the rule. */
const retryBackoff = (baseMs: number, capMs: number) =>
  baseMs < 1
    ? Effect.fail(new Opt.UsageError({ message: `--retry-base-ms must be at least 1, got ${baseMs}` }))
    : capMs < baseMs
    ? Effect.fail(new Opt.UsageError({ message: `--retry-cap-ms must be at least --retry-base-ms (${baseMs}), got ${capMs}` }))
    : Effect.succeed({ base: Duration.millis(baseMs), cap: Duration.millis(capMs) })

/** A token is one line of visible ASCII, so it can travel in a header and a cookie. */
const tokenRule = /^[\x21-\x7e]{16,1024}$/

/**
 * The status page's settings from the flags, else `host.json`'s `daemon.http` (a token file named
 * there is relative to the root); none when neither asks for a page. Refused (exit 2): an address
 * that is not `host:port`, a non-loopback one without `--http-public`, a token file that cannot be
 * read or holds no token (16 to 1,024 visible ASCII characters, surrounding whitespace ignored).
 */
const statusSettings = (
  flags: { readonly http: Option.Option<string>; readonly httpPublic: boolean; readonly httpTokenFile: Option.Option<string> },
  root: string,
  cwd: string
) =>
  Effect.gen(function*() {
    const configured = (yield* RuntimeProfiles).config.daemon?.http
    const fromFlag = Option.isSome(flags.http)
    const text = Option.getOrUndefined(flags.http) ?? configured?.listen
    if (text === undefined) return Option.none<StatusHttp.StatusHttpOptions>()
    const where = fromFlag ? "--http" : `${root}/host.json: daemon.http.listen`
    const listen = yield* Either.mapLeft(HttpListen.parse(text), (rule) => new Opt.UsageError({ message: `${where} ${rule}` }))
    const isPublic = flags.httpPublic || configured?.public === true
    if (!HttpListen.isLoopback(listen.host) && !isPublic) {
      return yield* new Opt.UsageError({
        message: `${where} ${text} is not a loopback address: add --http-public (or daemon.http.public: true) to serve the page beyond this machine`
      })
    }
    const tokenFile = Option.isSome(flags.httpTokenFile)
      ? Option.some(path.resolve(cwd, flags.httpTokenFile.value))
      : Option.fromNullable(configured?.token_file).pipe(Option.map((f) => path.resolve(root, f)))
    const token = yield* Effect.transposeMapOption(tokenFile, (file) =>
      TextFile.read(file, TextFile.kinds.token).pipe(
        Effect.mapError((e) => new Opt.UsageError({ message: `--http-token-file ${e.message}` })),
        Effect.flatMap(Option.match({
          onNone: () => Effect.fail(new Opt.UsageError({ message: `--http-token-file ${file}: does not exist` })),
          onSome: (t) =>
            tokenRule.test(t.trim())
              ? Effect.succeed(t.trim())
              : Effect.fail(new Opt.UsageError({ message: `--http-token-file ${file}: must hold one token of 16 to 1024 visible ASCII characters` }))
        }))
      ))
    if (!HttpListen.isLoopback(listen.host)) {
      yield* Effect.logWarning(
        `the status page listens on ${text}, beyond this machine` + (Option.isNone(token) ? "; anyone who can reach it can read it (set --http-token-file)" : "")
      )
    }
    return Option.some<StatusHttp.StatusHttpOptions>({ listen, token })
  })

/** What `city daemon` is given (its flags, parsed). */
export interface DaemonInput {
  readonly root: Option.Option<string>
  readonly json: boolean
  readonly pollMs: number
  readonly fingerprintPollMs: number
  readonly retryBaseMs: number
  readonly retryCapMs: number
  readonly logFormat: "logfmt" | "json"
  readonly deadlineMs: number
  /** `--freeze-limit`, seconds: the host's thread blocked this long, the daemon ends (exit 70). */
  readonly freezeLimit: number
  readonly bundled: Option.Option<string>
  readonly http: Option.Option<string>
  readonly httpPublic: boolean
  readonly httpTokenFile: Option.Option<string>
  /** The fleet's database (`--cluster`), else host.json's `cluster.url`, else none: one host. */
  readonly cluster: Option.Option<string>
  /** This host's name in the fleet (`--cluster-host`). */
  readonly clusterHost: Option.Option<string>
  /** Where its runner is reached (`--cluster-address`). */
  readonly clusterAddress: Option.Option<string>
}

/**
 * Where the daemon keeps its stores, and what runs beside its work: on one host, the state root's
 * files and nothing; with `--cluster`, the fleet's database and the host's runner
 * (`run/cluster.ts`, loaded only then: docs/cluster.md).
 */
export interface DaemonStores {
  /** The capability services on the root. */
  readonly capabilities: (root: string) => Layer.Layer<
    CapabilityServices.CapabilityServices,
    CapabilityServices.CapabilityServicesError | ClusterError
  >
  /** The owed-work store of the live services. */
  readonly reloads: Layer.Layer<Reloads, ClusterError, StateRoot | FileSystem.FileSystem>
  /** On a host of a fleet: its name and a read of the fleet, for the status page. */
  readonly fleet?: FleetSource
  /**
   * Done at start, once the daemon lock is held and before any work (on a host of a fleet: its
   * peer files imported, docs/cluster.md, "Peers from before the fleet").
   */
  readonly atStart?: Effect.Effect<void, StateRootError, CapabilityServices.CapabilityServices>
  /** What runs beside the daemon's work, over its services (the host's runner). */
  readonly beside: Layer.Layer<never, ClusterError, Layer.Layer.Success<ReturnType<typeof LiveDaemon.daemonLayer>> | CapabilityServices.CapabilityServices>
}

/** The stores of one host: the state root's files. */
const files: DaemonStores = {
  capabilities: (root) => CapabilityServices.layer({ root }),
  reloads: ReloadsLayer,
  beside: Layer.empty
}

/**
 * The daemon's failure: one line on stderr, with `--json` the envelope on one last line of
 * stdout, and the exit code the error carries.
 */
export const reportFailure = (o: DaemonInput, error: Parameters<typeof Out.printFailure>[1] & Parameters<typeof exitCodeOf>[0]) =>
  Effect.all([
    Effect.forEach(Out.errorLines(error), (line) => Console.error(Out.safe`city: error: ${line}`), { discard: true }),
    o.json ? Out.printFailure("daemon", error, "line") : Effect.void,
    Out.setExitCode(exitCodeOf(error))
  ])

/** `city daemon` on one host: the pid file, the City with its plugins, the live services, until a signal. */
export const daemon = (o: DaemonInput) => daemonWith(o, files)

/** `city daemon` with its stores given (`files`, or the fleet's with `--cluster`). */
export const daemonWith = (o: DaemonInput, stores: DaemonStores) =>
  Effect.gen(function*() {
    const invocation = yield* Invocation
    const root = Opt.resolveRoot(o.root, invocation)
    const bundledRoot = Plugins.resolveBundled(o.bundled, invocation)
    const interval = Duration.millis(Math.max(10, o.pollMs))
    const logger = Logger.withConsoleLog(o.json || o.logFormat === "json" ? Logger.jsonLogger : Logger.logfmtLogger)
    const capabilities = stores.capabilities(root)
    // The pid file first: a second daemon refuses before any plugin code runs. Then the
    // settings and the request record as they are before generation 1 loads; then the City
    // with the loader (generation 1) and the live services over it. Released in reverse: the
    // live services and the City (plugins disposed), the published generation, the pid file.
    const program = Effect.scoped(Effect.gen(function*() {
      const backoff = yield* retryBackoff(o.retryBaseMs, o.retryCapMs)
      const page = yield* statusSettings(o, root, invocation.cwd)
      const freezeLimit = yield* Opt.checkFreezeLimit(o.freezeLimit)
      yield* DaemonLock.acquire
      // What a `city` that is gone left running is ended before any work (ProcessRecords.ts).
      yield* (yield* ProcessRecords).recover
      if (stores.atStart !== undefined) yield* stores.atStart
      const settings = yield* Settings.options(root, bundledRoot)
      // A plugin that froze a previous daemon runs in a worker thread (Quarantine.ts); the
      // watchdog watches this daemon's thread from before the first plugin code runs.
      const quarantine = yield* Quarantine.atStart
      const options = { ...settings, isolation: yield* Quarantine.isolation(settings, quarantine) }
      yield* HostWatchdog.start({
        limit: Duration.seconds(freezeLimit),
        exitCode: frozenExitCode,
        who: "city daemon",
        ending: `exiting ${frozenExitCode} so that its supervisor restarts it (the next start quarantines the plugin)`,
        format: o.json || o.logFormat === "json" ? "json" : "logfmt",
        recordFile: path.join(root, layout.daemonFreeze),
        roots: settings.roots
      })
      // Plugin code on this thread that would end the process is named (HostFaults.ts).
      const faults = yield* HostFaults.start({
        roots: settings.roots,
        who: "city daemon",
        recordFile: path.join(root, layout.daemonFreeze),
        format: o.json || o.logFormat === "json" ? "json" : "logfmt",
        exitCode: frozenExitCode
      })
      const before = yield* (yield* RestartRequests.RestartRequests).get
      yield* Effect.addFinalizer(() => Effect.ignore(RestartRequests.unpublish))
      const live = LiveDaemon.daemonLayerWith(stores.reloads, { pollInterval: interval }).pipe(
        Layer.provideMerge(LoaderCore.city({ root }, options))
      )
      const layer = stores.beside.pipe(Layer.provideMerge(live))
      const fingerprintPoll = Duration.millis(Math.max(10, o.fingerprintPollMs))
      const deadline = Duration.millis(Math.max(100, o.deadlineMs))
      const attach = Effect.flatMap(PluginRegistry, (registry) => faults.attach((plugin, reason) => registry.crashed(plugin, reason)))
      yield* Effect.scoped(Effect.zipRight(attach, run(interval, deadline, before, page, fingerprintPoll, stores.fleet))).pipe(
        Effect.provide(layer),
        Effect.provideService(RetryBackoff, backoff)
      )
    }))
    yield* program.pipe(
      Effect.provide(Layer.provideMerge(RestartRequests.layer, capabilities)),
      // A refused plugins.json is logged with its code too; refused input for the exit policy (exit 2).
      Effect.tapErrorTag("InvalidFile", (error) =>
        error.reason === "LoaderSettings"
          ? Effect.logError(error.message).pipe(Effect.annotateLogs({ code: "plugin.settings_invalid" }))
          : Effect.void),
      // The daemon's log is its only logger.
      (self) => Effect.locally(self, FiberRef.currentLoggers, HashSet.make(logger)),
      // The daemon's failures: one line, and the exit code each error carries (2 for refused
      // input such as a bad plugins.json or host.json, 1 for a second daemon, an unreadable root
      // or plugin root, a City that cannot start).
      // With --json the failure is also the last line on stdout, the envelope on one line.
      Effect.catchAll((error) => reportFailure(o, error)),
      // Stopped by SIGINT/SIGTERM and everything above closed: a graceful stop, exit 0.
      Effect.onInterrupt(() => Effect.sync(markGracefulStop))
    )
  })
