/**
 * The `city` program's cluster verbs, behind its one door to the cluster packages:
 * `city fleet --cluster <url>` (below) and `city daemon --cluster <url>`, the daemon of one host of
 * a fleet (docs/cluster.md, "Running a fleet"). Everything `city daemon` does on one host, with the capability declarations, this
 * host's peers and its owed work in the fleet's database (its owed reloads applied by its own
 * owed-work worker under the claim: docs/cluster.md, "Owed reloads: one path"), and beside it the
 * host's runner: it serves this host's endpoints' messages (a `Provision` runs its call here),
 * reached by the other runners and clients at `--cluster-address`, and announces the host with
 * its `host.json`. At start it imports the root's peer files from before the fleet (PeerImport.ts).
 *
 * Loaded only when `--cluster` is given: nothing else in the `city` program reaches the cluster
 * packages (their drivers are optional). Refused input (exit 2, before anything starts): a URL
 * that is neither `postgres://…` nor `sqlite:<file>`, a host name that is not a `Name`, an
 * address that is not `host:port` with a port of 1-65535. A database that cannot be reached (or
 * that fails while a capability verb starts or awaits its sweep: `Sweep.run`), a driver that is
 * not installed or an address that is taken: `ClusterUnavailable`, exit 1.
 * @since 0.1.0
 */
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schedule from "effect/Schedule"
import { hostname } from "node:os"
import { layerWithStores as capabilitiesWithStores } from "../../layers/internal/capabilityServices.ts"
import { layerWithStores } from "../../layers/internal/liveServices.ts"
import * as LiveApplication from "../../layers/LiveApplication.ts"
import type { HostConfig } from "../../schema/HostConfig.ts"
import { ClusterError } from "../../schema/Live.ts"
import { isName, nameRule } from "../../schema/Name.ts"
import * as HttpListen from "../../schema/HttpListen.ts"
import { oneLine } from "../../schema/OneLine.ts"
import * as CommandRunner from "../../services/capabilities/CommandRunner.ts"
import * as ClusterDatabase from "../../services/cluster/ClusterDatabase.ts"
import * as ClusterHost from "../../services/cluster/ClusterHost.ts"
import * as HostStores from "../../services/cluster/internal/hostStores.ts"
import * as FleetClient from "../../services/cluster/FleetClient.ts"
import * as FleetStatus from "../../services/cluster/FleetStatus.ts"
import * as PeerImport from "../../services/cluster/PeerImport.ts"
import * as SqlCapabilities from "../../services/cluster/SqlCapabilities.ts"
import * as SqliteHost from "../../services/cluster/SqliteHost.ts"
import * as Sweep from "../../services/cluster/Sweep.ts"
import { Capabilities } from "../../services/capabilities/Capabilities.ts"
import type { FleetSource } from "../../services/status/StatusBoard.ts"
import { StateRootError, CapabilityError } from "../../schema/CapabilityErrors.ts"
import * as JsonValues from "../jsonValues.ts"
import { renderSweep } from "./sweepReport.ts"
import * as NodePath from "@effect/platform-node/NodePath"
import * as Out from "../output.ts"
import { Invocation } from "../invocation.ts"
import * as RuntimeProfiles from "../../services/capabilities/RuntimeProfiles.ts"
import * as StateRoot from "../../services/root/StateRoot.ts"
import * as Opt from "../options.ts"
import { type DaemonInput, type DaemonStores, daemonWith, reportFailure } from "./daemon.ts"

/** What `city daemon` is given (with `--cluster`, or a host.json naming a fleet). */
type ClusterInput = DaemonInput

/** The fleet settings of `host.json` (`cluster`), which the flags override. */
type ClusterConfig = NonNullable<HostConfig["cluster"]>

const unavailable = (error: { readonly message: string }) =>
  error instanceof ClusterError ? error : new ClusterError({ reason: "ClusterUnavailable", detail: oneLine(error.message, 300) })

/** The fleet's stores and this host's runner, over one database client. */
const storesOf = (
  sql: ReturnType<typeof ClusterDatabase.layer>,
  host: string,
  address: HttpListen.HttpListen,
  fleet: FleetSource["read"],
  wait: typeof waiting
): DaemonStores => ({
  fleet: { host, read: fleet },
  // The host's peer files from before it joined the fleet (docs/cluster.md, "Peers from before the fleet").
  atStart: wait.effect(Effect.asVoid(PeerImport.run(host))),
  capabilities: (root) =>
    capabilitiesWithStores(
      { root },
      CommandRunner.layer({}),
      wait.layer(HostStores.stores(host).pipe(Layer.mapError(unavailable), Layer.provide(sql)))
    ),
  reloads: wait.layer(HostStores.reloads(host).pipe(Layer.mapError(unavailable), Layer.provide(sql))),
  beside: wait.layer(
    ClusterHost.layer({ host, address: { host: address.host, port: address.port } }).pipe(
      Layer.mapError(unavailable),
      Layer.provide(sql)
    )
  )
})

/** The flags (else host.json's `cluster`) checked: the database, the host's name, the runner's address; or the refusal. */
const settings = (o: ClusterInput, configured: ClusterConfig | undefined) =>
  Effect.gen(function*() {
    const url = Option.getOrElse(o.cluster, () => configured?.url ?? "")
    const target = yield* Either.mapLeft(ClusterDatabase.parse(url), (rule) => new Opt.UsageError({ message: `--cluster ${rule}` }))
    const host = Option.getOrElse(o.clusterHost, () => configured?.host ?? hostname().toLowerCase())
    if (!isName(host)) {
      return yield* new Opt.UsageError({
        message: `${Option.isSome(o.clusterHost) ? "--cluster-host" : `this machine's name ${JSON.stringify(host)} (give --cluster-host)`} ${nameRule}`
      })
    }
    const address = yield* Either.mapLeft(
      HttpListen.parse(Option.getOrElse(o.clusterAddress, () => configured?.address ?? "127.0.0.1:34431")),
      (rule) => new Opt.UsageError({ message: `--cluster-address ${rule}` })
    )
    if (address.port === 0) {
      return yield* new Opt.UsageError({ message: "--cluster-address needs a port of 1-65535: the other runners reach this one there" })
    }
    return { target, host, address }
  })

/**
 * A failure of the fleet's database itself (its server restarting or not answering yet), which a
 * daemon's start waits out; any other failure (refused input, a file of the root) ends it at once.
 */
const ofTheDatabase = (error: unknown): boolean =>
  error instanceof ClusterError || (error instanceof StateRootError && error.reason === "StateError" && Predicate.isTagged(error.cause, "SqlError"))

/**
 * How a daemon waits for its PostgreSQL server at start, at each step that uses it (the client,
 * the tables, the stores, the peer import, the runner): again after 0.5 s, doubling to at most 5 s
 * between attempts, for at most 60 s per step, a line per attempt; then the daemon exits 1 naming
 * why. Only failures of the database are waited out.
 */
const databaseWait = Schedule.exponential("500 millis").pipe(
  Schedule.union(Schedule.spaced("5 seconds")),
  Schedule.upTo("60 seconds"),
  Schedule.whileInput(ofTheDatabase),
  Schedule.tapInput((error: unknown) =>
    error instanceof ClusterError || (error instanceof StateRootError && error.reason === "StateError")
      ? Effect.logWarning(`waiting for the fleet's database: ${
        error instanceof ClusterError ? error.detail : oneLine(error.detail ?? "", 300)
      }`).pipe(Effect.annotateLogs({ code: "cluster.database_wait" }), Effect.when(() => ofTheDatabase(error)))
      : Effect.void
  )
)

/** A step of a daemon's start on PostgreSQL, waiting out its database (`databaseWait`). */
const waiting = {
  layer: <A, E, R>(layer: Layer.Layer<A, E, R>) => Layer.retry(layer, databaseWait),
  effect: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.retry(effect, databaseWait)
}

/** On SQLite nothing is waited for: the file is there or not. */
const notWaiting = {
  layer: <A, E, R>(layer: Layer.Layer<A, E, R>) => layer,
  effect: <A, E, R>(effect: Effect.Effect<A, E, R>) => effect
}

/** `city daemon --cluster <url>` (or with host.json's `cluster`, `configured`). */
export const daemon = (o: ClusterInput, configured?: ClusterConfig) =>
  Effect.scoped(Effect.gen(function*() {
    const checked = yield* Effect.either(settings(o, configured))
    if (Either.isLeft(checked)) return yield* reportFailure(o, checked.left)
    const { address, host, target } = checked.right
    // One client for the whole daemon, built when first needed (inside the daemon, so its failure
    // is reported as the daemon's), shared by the stores and the runner. A PostgreSQL server that
    // does not answer yet (restarting, or started with the hosts) is waited for at each step of the
    // start, up to `databaseWait`, a line per attempt; a verb does not wait (docs/cluster.md, "Faults").
    const wait = target._tag === "Pg" ? waiting : notWaiting
    const sql = yield* Layer.memoize(wait.layer(ClusterDatabase.layer(target)))
    // A fleet on SQLite is one host: a second daemon on its file is refused before anything starts.
    if (target._tag === "Sqlite") {
      const claimed = yield* Effect.either(Effect.provide(SqliteHost.claim(host, target.filename), sql))
      if (Either.isLeft(claimed)) return yield* reportFailure(o, claimed.left)
    }
    // The status page's fleet part: read at most every 5 s, whatever the poll, its runners through
    // one reader of the cluster's runner storage, opened at the first read.
    const reader = yield* Layer.memoize(FleetStatus.runners.pipe(Layer.provideMerge(sql)))
    const fleet = yield* Effect.cachedWithTTL(
      Effect.map(Effect.provide(FleetStatus.current, reader), (found) => ({ hosts: found.hosts, invalid: found.invalid.flatMap(linesOf) })),
      fleetReadEvery
    )
    yield* daemonWith(o, storesOf(sql, host, address, fleet, wait))
  }))

/** host.json's `cluster.url` on the root, or the refusal saying where the URL is looked for. */
const configuredUrl = (root: Option.Option<string>) =>
  Effect.gen(function*() {
    const resolved = Opt.resolveRoot(root, yield* Invocation)
    const profiles = yield* RuntimeProfiles.make.pipe(
      Effect.provide(StateRoot.layer({ root: resolved }).pipe(Layer.provide(NodePath.layer)))
    )
    const url = profiles.config.cluster?.url
    if (url === undefined) {
      return yield* new Opt.UsageError({ message: `no fleet named: give --cluster <url>, or cluster.url in ${resolved}/host.json` })
    }
    return url
  })

/** How long ago `iso` was, for a person: seconds, minutes, hours or days. */
const ago = (iso: string, now: number) => {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000))
  return s < 120 ? `${s} s ago` : s < 7200 ? `${Math.round(s / 60)} min ago` : s < 172800 ? `${Math.round(s / 3600)} h ago` : `${Math.round(s / 86400)} d ago`
}

/** How often the status page of a fleet host reads the fleet, at most. */
const fleetReadEvery = Duration.seconds(5)

/** A row of the fleet that could not be read, as lines: one per fault of a host's profiles. */
const linesOf = (e: FleetStatus.Fleet["invalid"][number]): ReadonlyArray<string> =>
  "message" in e ? Out.errorLines(e) : [`${e.file}: ${e.field === "" ? "" : `${e.field}: `}${e.rule}`]

/** The rows of the fleet that could not be read, each with its message (a line per fault). */
const invalidOf = (found: FleetStatus.Fleet) =>
  found.invalid.map((e) => ({
    kind: "name" in e ? e.name : "OwedRecord",
    file: e.file,
    field: e.field,
    rule: e.rule,
    message: linesOf(e).join("\n")
  }))

/** `city fleet --cluster <url>`: the hosts of the fleet, and every row that could not be read. */
export const fleet = (o: { readonly json: boolean; readonly root: Option.Option<string>; readonly cluster: Option.Option<string> }) =>
  Out.runVerb(
    "fleet",
    o.json,
    Effect.gen(function*() {
      const url = Option.isSome(o.cluster) ? o.cluster.value : yield* configuredUrl(o.root)
      const target = yield* Either.mapLeft(ClusterDatabase.parse(url), (rule) => new Opt.UsageError({ message: `--cluster ${rule}` }))
      const found = yield* FleetStatus.read.pipe(Effect.provide(ClusterDatabase.layer(target)))
      const invalid = invalidOf(found)
      for (const line of found.invalid.flatMap(linesOf)) yield* Console.error(Out.safe`city: warning: ${line}`)
      if (o.json) return yield* Out.printDocument("fleet", { ok: true, hosts: found.hosts, invalid })
      yield* Console.log(
        found.hosts.length === 0 ? "no hosts: no city daemon --cluster has started on this database" : fleetTable(found.hosts)
      )
    })
  )

/** The hosts as a table for a person, their last sight as how long ago. */
const fleetTable = (hosts: FleetStatus.Fleet["hosts"]) => {
  const now = Date.now()
  return Out.table(
    ["HOST", "STATE", "SEEN", "PEERS", "ENDPOINTS", "OWED RELOADS", "OWED REMOVALS"],
    hosts.map((h) => [
      h.host,
      h.up ? "up" : "down",
      ago(h.seen_at, now),
      String(h.peers),
      String(h.endpoints),
      String(h.owed_reloads),
      String(h.owed_removals)
    ])
  )
}

/**
 * The fleet part of `city status` on a host of a fleet: this host's name, every host as `city
 * fleet` shows them, and how many rows could not be read (listed in the JSON, and by `city fleet`).
 */
export const statusPart = (root: string, fleet: ClusterConfig) =>
  Effect.gen(function*() {
    const target = yield* databaseOf(root, fleet)
    const found = yield* FleetStatus.read.pipe(Effect.provide(ClusterDatabase.layer(target)), Effect.mapError(unavailable))
    const host = hostNameOf(fleet)
    const invalid = invalidOf(found)
    const up = found.hosts.filter((h) => h.up).length
    const lines = [
      Out.safe`fleet: this is host ${host}; ${found.hosts.length} host(s), ${up} up`,
      ...(found.hosts.length === 0 ? [] : fleetTable(found.hosts).split("\n").map((line) => `  ${line}`)),
      ...(invalid.length === 0 ? [] : [`fleet: ${invalid.length} row(s) could not be read (city fleet lists them)`])
    ]
    return { lines, json: { host, hosts: found.hosts, invalid } }
  })

/** The capability verbs on a fleet: its declaration store and a client, over the database of `url`. */
const fleetServices = (url: string, root: string) =>
  Effect.map(
    Either.mapLeft(ClusterDatabase.parse(url), (rule) => new Opt.UsageError({ message: `--cluster ${rule}` })),
    (target) => {
      const local = StateRoot.layer({ root }).pipe(Layer.provideMerge(NodePath.layer))
      const profiles = RuntimeProfiles.layer.pipe(Layer.provideMerge(local))
      return Layer.mergeAll(SqlCapabilities.layer, FleetClient.layer).pipe(
        Layer.mapError(unavailable),
        Layer.provideMerge(ClusterDatabase.layer(target)),
        Layer.provideMerge(profiles)
      )
    }
  )

/** The sweep of the capability's current revision across the fleet: a joint's report whose outcomes name their host. */
const fleetSweep = (verb: "register" | "sync" | "unregister", capability: string, timeoutMs: number) =>
  Effect.gen(function*() {
    const revision = yield* SqlCapabilities.revision(capability)
    if (Option.isNone(revision)) {
      return yield* new CapabilityError({ reason: "UnknownCapability", capability, file: (yield* Capabilities).file(capability) })
    }
    // Printed as on one host, each outcome with its host (a HOST column, `host` in --json).
    return yield* Sweep.run({ verb, capability, revision: String(revision.value), call_timeout_ms: timeoutMs })
  })

/** What a capability verb on a fleet is given. */
type FleetVerbInput = Opt.CommandInput & { readonly url: string }

/** The verb's work on the fleet, with its services and the local daemon's state for the report. */
const onFleet = <A, E, R>(o: FleetVerbInput, body: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const root = Opt.resolveRoot(o.root, yield* Invocation)
    return yield* Effect.provide(body, yield* fleetServices(o.url, root))
  })

/** `capability register <file>` on a fleet: stored for the fleet, then swept on every host. */
export const register = (o: FleetVerbInput & { readonly file: string }) =>
  Out.runVerb(
    "capability register",
    o.json,
    onFleet(o, Effect.gen(function*() {
      const file = yield* Opt.inputFile(o.file)
      const capabilities = yield* Capabilities
      const declaration = yield* capabilities.readFile(file)
      yield* capabilities.store(declaration)
      const report = yield* fleetSweep("register", declaration.capability, o.timeoutMs)
      yield* renderSweep(
        "capability register",
        o.json,
        report,
        JsonValues.capabilityJson(declaration),
        Out.safe`registered ${declaration.capability}${declaration.version === undefined ? "" : ` ${declaration.version}`} ` +
          `for the fleet; sweep-on over ${report.outcomes.length} endpoint(s)`
      )
    }))
  )

/** `capability sync <name>` on a fleet: stored again (a new revision: the repair runs), then swept. */
export const sync = (o: FleetVerbInput & { readonly name: string }) =>
  Out.runVerb(
    "capability sync",
    o.json,
    onFleet(o, Effect.gen(function*() {
      const capabilities = yield* Capabilities
      yield* capabilities.store(yield* capabilities.get(o.name))
      const report = yield* fleetSweep("sync", o.name, o.timeoutMs)
      yield* renderSweep("capability sync", o.json, report, { capability: o.name }, Out.safe`sync ${o.name} on the fleet: sweep-on over ${report.outcomes.length} endpoint(s)`)
    }))
  )

/** `capability unregister <name>` on a fleet: swept off every host, then deleted for the fleet. */
export const unregister = (o: FleetVerbInput & { readonly name: string }) =>
  Out.runVerb(
    "capability unregister",
    o.json,
    onFleet(o, Effect.gen(function*() {
      const capabilities = yield* Capabilities
      yield* capabilities.get(o.name)
      const report = yield* fleetSweep("unregister", o.name, o.timeoutMs)
      yield* capabilities.remove(o.name)
      yield* renderSweep(
        "capability unregister",
        o.json,
        report,
        { capability: o.name },
        Out.safe`unregistered ${o.name} from the fleet: off-all over ${report.outcomes.length} endpoint(s); declaration deleted`
      )
    }))
  )

/** This host's name in its fleet: host.json's `cluster.host`, else the machine's name in lower case. */
const hostNameOf = (fleet: ClusterConfig) => fleet.host ?? hostname().toLowerCase()

/** The fleet's database of host.json's `cluster.url`, or the refusal naming the file and the rule. */
const databaseOf = (root: string, fleet: ClusterConfig) =>
  Either.mapLeft(
    ClusterDatabase.parse(fleet.url),
    (rule) => new Opt.UsageError({ message: `${root}/host.json: cluster.url ${rule}` })
  )

/**
 * The capability stores of a host of a fleet, for the verbs that only read: the declarations and
 * this host's peers in the fleet's database, the rest on the state root.
 */
export const storesOnFleet = (root: string, fleet: ClusterConfig) =>
  Layer.unwrapEffect(Effect.map(databaseOf(root, fleet), (target) =>
    capabilitiesWithStores(
      { root },
      CommandRunner.layer({}),
      HostStores.stores(hostNameOf(fleet)).pipe(Layer.mapError(unavailable), Layer.provide(ClusterDatabase.layer(target)))
    )))

/**
 * What `peer list` says on a host of a fleet about the peer files still in the root's `peers/`
 * (docs/cluster.md, "Peers from before the fleet"): one line each, run on the host's stores.
 */
export const peerFilesWaiting = (fleet: ClusterConfig) => PeerImport.waiting(hostNameOf(fleet))

/** The owed-work store of a host of a fleet (needs a FileSystem). */
export const reloadsOnFleet = (root: string, fleet: ClusterConfig) =>
  Layer.unwrapEffect(Effect.map(databaseOf(root, fleet), (target) =>
    HostStores.reloads(hostNameOf(fleet)).pipe(Layer.mapError(unavailable), Layer.provide(ClusterDatabase.layer(target)))))

/**
 * Every capability and live service of a host of a fleet, for the verbs: its stores in the
 * fleet's database (one client for both), the rest as on one host.
 */
export const liveOnFleet = (config: LiveApplication.LiveConfig, fleet: ClusterConfig) =>
  Layer.unwrapEffect(Effect.map(databaseOf(config.root, fleet), (target) => {
    const sql = ClusterDatabase.layer(target)
    const host = hostNameOf(fleet)
    return layerWithStores(config.commands ?? {}, {
      reloads: HostStores.reloads(host).pipe(Layer.mapError(unavailable), Layer.provide(sql)),
      capabilities: capabilitiesWithStores(
        config,
        CommandRunner.layer(config.killGrace === undefined ? {} : { killGrace: config.killGrace }),
        HostStores.stores(host).pipe(Layer.mapError(unavailable), Layer.provide(sql))
      )
    })
  }))
