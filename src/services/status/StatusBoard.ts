/**
 * The status board of `city daemon --http` (docs/status-page.md): the daemon's current picture as
 * one `StatusDocument`, and the changes to it as `StatusEvent`s, so the page updates without
 * polling.
 *
 * Where each part comes from:
 * - **plugins**: the registry's `changes` stream (every snapshot as it changes), with the root,
 *   version and folder of the loaded ones from the serving generation's load report;
 * - **skipped and missing**: the serving generation's load report (`Generations.current`), looked
 *   at on every `refresh`; a new generation number sends the whole document again (`status`);
 * - **endpoints**: the state root, read on every `refresh` (the daemon's poll): every endpoint of
 *   every declaration with its last recorded provisioning call (Listings), and every owed reload
 *   or removal (Reloads). The joints run in other `city` processes and the applier writes its
 *   progress to the same records, so the files are where both are seen. An endpoint whose entry
 *   changed is sent as an `endpoint` event (the reading and the comparing are `StatusEndpoints`);
 * - **the live log**: one entry per change the board sees: a plugin's status, a generation, an
 *   endpoint's standing (`pending → applied`), a new provisioning call. The last `logSize` (100)
 *   are kept in the document;
 * - **Sessions and health**: `sessions` of the options (the daemon's hosted endpoints and the Turns
 *   running), and the daemon's pid, version, start and last poll;
 * - **the fleet**, on a host of one: `fleet` of the options, read on every `refresh` and sent with
 *   each `health` event; a host that joins, goes down or comes back up is a log line (`fleet`).
 *
 * Decisions:
 * - Changes are applied under one permit, and each is published while it is held, so the events
 *   come in the order of the states they lead to. A client subscribes first and reads the
 *   document second: an event that lands between the two is already in its document, and applying
 *   it again changes nothing (every event sets a value, none adds to one).
 * - Events go through a sliding `PubSub` of 4,096 per client: a client that falls that far behind
 *   loses the oldest ones, never blocks the board or the other clients; the next `status` (a new
 *   generation) or a reconnect brings it back in step.
 * - `encoded` (what `GET /api/status` serves) keeps the JSON of the plugin rows and of the endpoint
 *   rows, each made by the Schema when first asked for after a change to them, and encodes only
 *   the small parts per request: with a thousand of each, encoding all of it per request cost
 *   about 5x a plain `JSON.stringify` of the document (bench/status.bench.ts), and a page open in
 *   many browsers asks on every reconnect. An event's JSON is likewise made once, whatever the
 *   number of clients.
 * - A refresh that fails to read the state root (a refused file, an I/O error) keeps the last
 *   endpoints and logs the error once per distinct message; the page keeps showing what was seen.
 *   So does a failed read of the fleet (its `read_at` says how old it is).
 *
 * The pieces: the state (`State`, changed only under the permit), the document made from it
 * (`documentOf`, `documentJsonOf`), a registry change (`applyChange`), and a refresh in three
 * parts (`refreshGeneration`, `refreshHeaps`, `refreshEndpoints`); `make` holds the permit, the
 * `PubSub` and the streams.
 * @since 0.1.0
 */
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { LoadedPlugin, LoadReport } from "../../schema/LoadReport.ts"
import type { OwedRecord } from "../../schema/Live.ts"
import type { PluginSnapshot, SnapshotChange } from "../../schema/PluginSnapshot.ts"
import {
  StatusDocument,
  StatusEndpoint,
  StatusEvent,
  type StatusFleet,
  type StatusFleetHost,
  type StatusLogEntry,
  StatusPlugin
} from "../../schema/StatusDocument.ts"
import type { StateRootError } from "../../schema/CapabilityErrors.ts"
import { type CapabilityListing, Listings } from "../capabilities/Listings.ts"
import { PluginRegistry } from "../city/internal/pluginRegistry.ts"
import { Workers, type WorkerHeap } from "../isolation/Workers.ts"
import { Generations } from "../loader/Generations.ts"
import { Reloads } from "../owed/Reloads.ts"
import { fleetEndpoints, fleetHostUp, fleetReloadsOwed, fleetRemovalsOwed } from "./FleetMetrics.ts"
import * as StatusEndpoints from "./StatusEndpoints.ts"

/**
 * What the board needs from the daemon that hosts it.
 * @since 0.1.0
 * @category models
 */
export interface StatusBoardOptions {
  /** The package version, for the health part. */
  readonly version: string
  /** The daemon's poll interval: shown, and how often `run` refreshes. */
  readonly pollInterval: Duration.DurationInput
  /** The endpoints hosted as City Sessions, and how many of them run a Turn now. */
  readonly sessions: Effect.Effect<{ readonly count: number; readonly busy: number }>
  /** How many lifecycle events the document keeps (default 100). */
  readonly logSize?: number
  /** On a host of a fleet: its name, and a read of the fleet's hosts. */
  readonly fleet?: FleetSource
}

/**
 * Where the board reads the fleet from, on a host of one (docs/cluster.md, "The fleet's status").
 * @since 0.1.0
 * @category models
 */
export interface FleetSource {
  /** This daemon's host. */
  readonly host: string
  /** The fleet's hosts, and one line per row that could not be read. */
  readonly read: Effect.Effect<
    { readonly hosts: ReadonlyArray<StatusFleetHost>; readonly invalid: ReadonlyArray<string> },
    { readonly message: string }
  >
}

/**
 * What the board reads: the registry's snapshots and changes, the serving generation's load
 * report, the state root's endpoints and owed work. `fromServices` takes them from the daemon's
 * services; a test or a benchmark may give its own.
 * @since 0.1.0
 * @category models
 */
export interface StatusSources {
  readonly snapshots: Effect.Effect<ReadonlyArray<PluginSnapshot>>
  readonly changes: Stream.Stream<SnapshotChange>
  readonly report: Effect.Effect<LoadReport>
  readonly capabilities: Effect.Effect<CapabilityListing, StateRootError>
  readonly owed: Effect.Effect<ReadonlyArray<OwedRecord>, StateRootError>
  /** The heaps of the isolated plugins' workers, read at each refresh. */
  readonly heaps: Effect.Effect<ReadonlyArray<WorkerHeap>>
}

/**
 * The sources of the daemon's City and state root.
 * @since 0.1.0
 * @category constructors
 */
export const fromServices: Effect.Effect<StatusSources, never, PluginRegistry | Generations | Listings | Reloads | Workers> = Effect.gen(
  function*() {
    const registry = yield* PluginRegistry
    const generations = yield* Generations
    const listings = yield* Listings
    const reloads = yield* Reloads
    const workers = yield* Workers
    return {
      snapshots: registry.snapshots,
      changes: registry.changes,
      report: generations.current,
      capabilities: listings.capabilities,
      owed: reloads.list,
      heaps: workers.heaps
    }
  }
)

/**
 * The board: the current document, its events, and a refresh from the state root.
 * @since 0.1.0
 * @category models
 */
export interface StatusBoard {
  /** The whole document as it stands now. */
  readonly current: Effect.Effect<StatusDocument>
  /** The whole document as JSON, encoded by its Schema (what `GET /api/status` serves). */
  readonly encoded: Effect.Effect<string>
  /** `status` (the whole document) first, then every change as it happens. Never ends. */
  readonly events: Stream.Stream<StatusEvent>
  /** `events`, each as its tag and its JSON encoded by the Schema (what `GET /api/events` sends). */
  readonly encodedEvents: Stream.Stream<EncodedEvent>
  /** Reads the serving generation and the state root now, publishing what changed. Never fails. */
  readonly refresh: Effect.Effect<void>
  /** Refreshes now and every poll interval, in the caller's Scope. */
  readonly run: Effect.Effect<void, never, Scope.Scope>
}

/**
 * One event, encoded: its tag (the SSE event's name) and its JSON.
 * @since 0.1.0
 * @category models
 */
export interface EncodedEvent {
  readonly tag: StatusEvent["_tag"]
  readonly json: string
}

/** An event as published: the event, and its JSON made at most once whatever the number of clients. */
interface Published {
  readonly event: StatusEvent
  readonly encoded: () => EncodedEvent
}

const encodeEvent = Schema.encodeSync(StatusEvent)
const encodePlugins = Schema.encodeSync(Schema.Array(StatusPlugin))
const encodeEndpoints = Schema.encodeSync(Schema.Array(StatusEndpoint))
const { endpoints: _endpoints, plugins: _plugins, ...restFields } = StatusDocument.fields
const encodeRest = Schema.encodeSync(Schema.Struct(restFields))

const published = (event: StatusEvent, json?: () => string): Published => {
  let memo: EncodedEvent | undefined
  return {
    event,
    encoded: () => (memo ??= { tag: event._tag, json: json !== undefined ? json() : JSON.stringify(encodeEvent(event)) })
  }
}

/** A plugin's row: its snapshot, with where the loader found it when it did. */
const pluginRow = (snapshot: PluginSnapshot, loaded: LoadedPlugin | undefined, heapUsed: number | undefined): StatusPlugin => {
  return {
    name: snapshot.name,
    status: snapshot.status,
    last_error: snapshot.last_error ?? null,
    version: snapshot.version ?? loaded?.version ?? null,
    source: snapshot.source,
    root: loaded?.root ?? null,
    folder: loaded?.folder ?? null,
    isolation: loaded?.isolation ?? "none",
    heap_used_bytes: heapUsed ?? null,
    attempts: snapshot.attempts,
    updated_at: snapshot.updated_at
  }
}

/** The board's state: changed only while the board's permit is held. */
interface State {
  report: LoadReport
  loadedByName: Map<string, LoadedPlugin>
  generation: StatusDocument["generation"]
  readonly snapshots: Map<string, PluginSnapshot>
  /** Each isolated plugin's worker heap in use, as last read. */
  heaps: Map<string, number>
  endpoints: Map<string, StatusEndpoint>
  readonly log: Array<StatusLogEntry>
  lastPoll: string | null
  lastRefreshError: string
  /** `null` on a host alone. */
  fleet: StatusFleet | null
  lastFleetError: string
  // The rows' JSON, made when first asked for after a change: a request costs the small parts.
  pluginsJson: string | undefined
  endpointsJson: string | undefined
}

/** What the board knows of the daemon besides its state. */
interface Daemon {
  readonly options: StatusBoardOptions
  readonly startedAt: DateTime.Utc
  readonly pollMs: number
  readonly logSize: number
}

type Health = Pick<StatusDocument, "daemon" | "sessions">

const health = (daemon: Daemon, state: State): Effect.Effect<Health> =>
  Effect.gen(function*() {
    const now = yield* DateTime.now
    const s = yield* daemon.options.sessions
    return {
      daemon: {
        pid: process.pid,
        version: daemon.options.version,
        started_at: DateTime.formatIso(daemon.startedAt),
        uptime_ms: DateTime.toEpochMillis(now) - DateTime.toEpochMillis(daemon.startedAt),
        last_poll_at: state.lastPoll,
        poll_ms: daemon.pollMs
      },
      sessions: { count: s.count, busy: s.busy, idle: Math.max(0, s.count - s.busy) }
    }
  })

const rowOf = (state: State, snapshot: PluginSnapshot): StatusPlugin =>
  pluginRow(snapshot, state.loadedByName.get(snapshot.name), state.heaps.get(snapshot.name))

const pluginRows = (state: State) =>
  [...state.snapshots.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map((s) => rowOf(state, s))

const endpointRows = (state: State) => [...state.endpoints.values()].sort(StatusEndpoints.byKey)

/** Every part of the document but the rows. */
const rest = (state: State, h: Health) => ({
  schema: 1 as const,
  generation: state.generation,
  skipped: state.report.skipped,
  missing: state.report.missing,
  sessions: h.sessions,
  log: [...state.log],
  daemon: h.daemon,
  fleet: state.fleet
})

const documentOf = (state: State, h: Health): StatusDocument => ({
  ...rest(state, h),
  plugins: pluginRows(state),
  endpoints: endpointRows(state)
})

/** The document's JSON: the cached rows, and the small parts encoded now. */
const documentJsonOf = (state: State, h: Health): string => {
  state.pluginsJson ??= JSON.stringify(encodePlugins(pluginRows(state)))
  state.endpointsJson ??= JSON.stringify(encodeEndpoints(endpointRows(state)))
  return `{"plugins":${state.pluginsJson},"endpoints":${state.endpointsJson},${JSON.stringify(encodeRest(rest(state, h))).slice(1)}`
}

const statusJson = (json: string) => `{"_tag":"status","document":${json}}`

/** A log entry, kept in the document (the last `logSize`), and its event. */
const note = (daemon: Daemon, state: State, kind: StatusLogEntry["kind"], text: string) =>
  Effect.map(DateTime.now, (now): StatusEvent => {
    const entry: StatusLogEntry = { at: DateTime.formatIso(now), kind, text }
    state.log.push(entry)
    if (state.log.length > daemon.logSize) state.log.splice(0, state.log.length - daemon.logSize)
    return { _tag: "log", entry }
  })

/** One registry change: the plugin's row, and a log line when its status changed. */
const applyChange = (daemon: Daemon, state: State, change: SnapshotChange): Effect.Effect<Array<StatusEvent>> =>
  Effect.gen(function*() {
    state.pluginsJson = undefined
    if (change._tag === "Removed") {
      if (!state.snapshots.delete(change.name)) return []
      return [{ _tag: "plugin-removed", name: change.name }, yield* note(daemon, state, "plugin", `${change.name}: removed`)]
    }
    const s = change.snapshot
    const before = state.snapshots.get(s.name)
    state.snapshots.set(s.name, s)
    const events: Array<StatusEvent> = [{ _tag: "plugin", plugin: rowOf(state, s) }]
    if (before?.status !== s.status) {
      const error = s.status === "error" && s.last_error !== undefined ? ` (${s.last_error.slice(0, 300)})` : ""
      events.push(yield* note(daemon, state, "plugin", `${s.name}: ${s.status}${error}`))
    }
    return events
  })

/** The serving generation: when it is a new one, its plugins' places and a log line; whether it is new. */
const refreshGeneration = (daemon: Daemon, state: State, current: LoadReport, events: Array<StatusEvent>) =>
  Effect.gen(function*() {
    const newGeneration = current.generation !== state.report.generation
    state.report = current
    if (!newGeneration) return false
    state.loadedByName = new Map(current.loaded.map((p) => [p.name, p]))
    state.pluginsJson = undefined
    state.generation = { number: current.generation, started_at: DateTime.formatIso(yield* DateTime.now) }
    const text = `plugin generation ${current.generation} ready: ${current.loaded.length} loaded, ${current.skipped.length} skipped`
    events.push(yield* note(daemon, state, "generation", text))
    return true
  })

/** The workers' heaps: a plugin whose figure changed is a `plugin` event. */
const refreshHeaps = (state: State, read: ReadonlyArray<WorkerHeap>, events: Array<StatusEvent>) => {
  const heaps = new Map(read.flatMap((w) => (Option.isSome(w.heap) ? [[w.plugin, w.heap.value.used] as const] : [])))
  for (const name of new Set([...state.heaps.keys(), ...heaps.keys()])) {
    if (state.heaps.get(name) === heaps.get(name)) continue
    const snapshot = state.snapshots.get(name)
    state.pluginsJson = undefined
    if (snapshot !== undefined) events.push({ _tag: "plugin", plugin: pluginRow(snapshot, state.loadedByName.get(name), heaps.get(name)) })
  }
  state.heaps = heaps
}

/** The state root's endpoints: each change an event (and a log line); a failed read keeps the last ones. */
const refreshEndpoints = (daemon: Daemon, state: State, sources: StatusSources, events: Array<StatusEvent>) =>
  Effect.gen(function*() {
    const read = yield* Effect.either(StatusEndpoints.read(sources.capabilities, sources.owed))
    if (read._tag === "Left") {
      const message = read.left.message
      if (message !== state.lastRefreshError) yield* Effect.logWarning(`status page: the state root could not be read: ${message}`)
      state.lastRefreshError = message
      return
    }
    state.lastRefreshError = ""
    for (const [event, line] of StatusEndpoints.changes(state.endpoints, read.right)) {
      events.push(event)
      state.endpointsJson = undefined
      if (Option.isSome(line)) events.push(yield* note(daemon, state, "endpoint", line.value))
    }
    state.endpoints = read.right
  })

/** What a host's change in the fleet reads as in the log, if it is one. */
const fleetLine = (before: StatusFleetHost | undefined, after: StatusFleetHost): string | undefined =>
  before === undefined
    ? `${after.host} joined the fleet (${after.up ? "up" : "down"})`
    : before.up !== after.up
    ? `${after.host} ${after.up ? "up" : `down (last seen ${after.seen_at})`}`
    : undefined

/** The fleet's hosts: a host joined, down or up again is a log line; a failed read keeps the last ones. */
const refreshFleet = (daemon: Daemon, state: State, source: FleetSource, events: Array<StatusEvent>) =>
  Effect.gen(function*() {
    const read = yield* Effect.either(source.read)
    if (read._tag === "Left") {
      const message = read.left.message
      if (message !== state.lastFleetError) yield* Effect.logWarning(`status page: the fleet could not be read: ${message}`)
      state.lastFleetError = message
      return
    }
    state.lastFleetError = ""
    const before = new Map((state.fleet?.hosts ?? []).map((h) => [h.host, h]))
    // The first read is what the fleet was when the daemon started, not news.
    if (state.fleet?.read_at !== null) {
      for (const host of read.right.hosts) {
        const line = fleetLine(before.get(host.host), host)
        if (line !== undefined) events.push(yield* note(daemon, state, "fleet", line))
      }
    }
    yield* Effect.forEach(read.right.hosts, (host) =>
      Effect.all([
        Metric.set(Metric.tagged(fleetHostUp, "host", host.host), host.up ? 1 : 0),
        Metric.set(Metric.tagged(fleetEndpoints, "host", host.host), host.endpoints),
        Metric.set(Metric.tagged(fleetReloadsOwed, "host", host.host), host.owed_reloads),
        Metric.set(Metric.tagged(fleetRemovalsOwed, "host", host.host), host.owed_removals)
      ]), { discard: true })
    state.fleet = {
      host: source.host,
      read_at: DateTime.formatIso(yield* DateTime.now),
      hosts: read.right.hosts,
      invalid: read.right.invalid
    }
  })

/**
 * Makes the board over its sources; its fibers (the registry subscription, and `run`'s poll) live
 * in the caller's Scope.
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: StatusBoardOptions,
  sources: StatusSources
): Effect.Effect<StatusBoard, never, Scope.Scope> =>
  Effect.gen(function*() {
    const startedAt = yield* DateTime.now
    const daemon: Daemon = {
      options,
      startedAt,
      pollMs: Duration.toMillis(Duration.decode(options.pollInterval)),
      logSize: options.logSize ?? 100
    }
    const lock = yield* Effect.makeSemaphore(1)
    const pubsub = yield* PubSub.sliding<Published>(4096)
    const report = yield* sources.report
    const state: State = {
      report,
      loadedByName: new Map(report.loaded.map((p) => [p.name, p])),
      generation: { number: report.generation, started_at: DateTime.formatIso(startedAt) },
      snapshots: new Map(),
      heaps: new Map(),
      endpoints: new Map(),
      log: [],
      lastPoll: null,
      lastRefreshError: "",
      fleet: options.fleet === undefined ? null : { host: options.fleet.host, read_at: null, hosts: [], invalid: [] },
      lastFleetError: "",
      pluginsJson: undefined,
      endpointsJson: undefined
    }
    const document = Effect.map(health(daemon, state), (h) => documentOf(state, h))
    const documentJson = Effect.map(health(daemon, state), (h) => documentJsonOf(state, h))
    const publish = (events: ReadonlyArray<StatusEvent>) =>
      events.length === 0 ? Effect.void : PubSub.publishAll(pubsub, events.map((e) => published(e)))

    const change = (c: SnapshotChange) => lock.withPermits(1)(Effect.flatMap(applyChange(daemon, state, c), publish))
    const refresh = lock.withPermits(1)(Effect.gen(function*() {
      const events: Array<StatusEvent> = []
      const newGeneration = yield* refreshGeneration(daemon, state, yield* sources.report, events)
      refreshHeaps(state, yield* sources.heaps, events)
      yield* refreshEndpoints(daemon, state, sources, events)
      if (options.fleet !== undefined) yield* refreshFleet(daemon, state, options.fleet, events)
      state.lastPoll = DateTime.formatIso(yield* DateTime.now)
      yield* publish([...events, { _tag: "health", ...(yield* health(daemon, state)), fleet: state.fleet }])
      // A new generation: the whole document (skipped, missing and every row may have changed).
      if (newGeneration) {
        const json = statusJson(yield* documentJson)
        yield* PubSub.publish(pubsub, published({ _tag: "status", document: yield* document }, () => json))
      }
    }))

    // The registry's current snapshots, then every change; first pass before the board is returned.
    const first = yield* sources.snapshots
    yield* Effect.forEach(first, (snapshot) => change({ _tag: "Updated", snapshot }), { discard: true })
    yield* Effect.forkScoped(Stream.runForEach(sources.changes, change))
    yield* refresh

    const current = lock.withPermits(1)(document)
    const encoded = lock.withPermits(1)(documentJson)
    /** Subscribed first, read second (see the module comment); `first` is read only when the stream runs. */
    const stream = <A>(first: Effect.Effect<A>, each: (p: Published) => A): Stream.Stream<A> =>
      Stream.unwrapScoped(Effect.map(
        PubSub.subscribe(pubsub),
        (subscription) => Stream.concat(Stream.fromEffect(first), Stream.map(Stream.fromQueue(subscription), each))
      ))
    const events = stream(Effect.map(current, (document): StatusEvent => ({ _tag: "status", document })), (p) => p.event)
    const encodedEvents = stream(
      Effect.map(encoded, (json): EncodedEvent => ({ tag: "status", json: statusJson(json) })),
      (p) => p.encoded()
    )
    const run = Effect.asVoid(Effect.forkScoped(Effect.forever(Effect.zipRight(Effect.sleep(options.pollInterval), refresh))))
    return { current, encoded, events, encodedEvents, refresh, run }
  })
