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
 *   changed is sent as an `endpoint` event;
 * - **the live log**: one entry per change the board sees: a plugin's status, a generation, an
 *   endpoint's standing (`pending → applied`), a new provisioning call. The last `logSize` (100)
 *   are kept in the document;
 * - **Sessions and health**: `sessions` of the options (the daemon's hosted endpoints and the Turns
 *   running), and the daemon's pid, version, start and last poll.
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
 * @since 0.1.0
 */
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { LoadedPlugin, LoadReport } from "../../schema/LoadReport.ts"
import type { OwedRecord } from "../../schema/Live.ts"
import type { PluginSnapshot, SnapshotChange } from "../../schema/PluginSnapshot.ts"
import {
  endpointKey,
  type EndpointStanding,
  StatusDocument,
  StatusEndpoint,
  StatusEvent,
  type StatusLogEntry,
  StatusPlugin
} from "../../schema/StatusDocument.ts"
import type { RootNotFound, StateError } from "../../schema/CapabilityErrors.ts"
import { type CapabilityListing, Listings } from "../capabilities/Listings.ts"
import { PluginRegistry } from "../city/PluginRegistry.ts"
import { Workers, type WorkerHeap } from "../isolation/Workers.ts"
import { Generations } from "../loader/Generations.ts"
import { isOwed, Reloads } from "../live/Reloads.ts"

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
  readonly capabilities: Effect.Effect<CapabilityListing, RootNotFound | StateError>
  readonly owed: Effect.Effect<ReadonlyArray<OwedRecord>, StateError>
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

/** A plugin's row: its snapshot, with where the loader found it when it did. */
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

/** `applied` with nothing owed, `failing` once an attempt failed, else `pending`. */
const standingOf = (owed: OwedRecord | undefined): EndpointStanding =>
  owed === undefined || (!isOwed(owed) && owed.removal === undefined)
    ? "applied"
    : (owed.attempts ?? 0) > 0 || owed.last_error !== undefined
    ? "failing"
    : "pending"

const owedPart = (owed: OwedRecord | undefined): StatusEndpoint["owed"] =>
  owed === undefined || standingOf(owed) === "applied" ? null : {
    reload: isOwed(owed),
    removal: owed.removal !== undefined,
    reason: owed.reason,
    attempts: owed.attempts ?? 0,
    last_error: owed.last_error ?? null,
    next_attempt_at: owed.next_attempt_at ?? null
  }

const byKey = (a: StatusEndpoint, b: StatusEndpoint): number => {
  if ((a.capability === null) !== (b.capability === null)) return a.capability === null ? 1 : -1
  for (const [x, y] of [[a.capability ?? "", b.capability ?? ""], [a.peer, b.peer], [a.runtime, b.runtime]] as const) {
    if (x !== y) return x < y ? -1 : 1
  }
  return 0
}

/** One line saying what changed in an endpoint's entry, or none when nothing a reader cares about did. */
const endpointLine = (before: StatusEndpoint | undefined, after: StatusEndpoint): Option.Option<string> => {
  const name = `${after.runtime}-${after.peer}` + (after.capability === null ? "" : ` (${after.capability})`)
  const parts: Array<string> = []
  if (after.last !== null && (before?.last === null || before?.last?.at !== after.last.at)) {
    parts.push(`provision ${after.last.occasion}: ${after.last.state}` + (after.last.exit === null ? "" : ` exit ${after.last.exit}`))
  }
  if (before !== undefined && before.standing !== after.standing) parts.push(`${before.standing} → ${after.standing}`)
  else if (before === undefined && after.standing !== "applied") parts.push(after.standing)
  if (after.standing === "failing" && after.owed?.last_error !== before?.owed?.last_error && after.owed?.last_error != null) {
    parts.push(`failed: ${after.owed.last_error.slice(0, 300)}`)
  }
  return parts.length === 0 ? Option.none() : Option.some(`${name}: ${parts.join("; ")}`)
}

const sameEndpoint = (a: StatusEndpoint, b: StatusEndpoint): boolean => JSON.stringify(a) === JSON.stringify(b)

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
    const logSize = options.logSize ?? 100
    const pollMs = Duration.toMillis(Duration.decode(options.pollInterval))
    const startedAt = yield* DateTime.now
    const lock = yield* Effect.makeSemaphore(1)
    const pubsub = yield* PubSub.sliding<Published>(4096)

    // The board's state, changed only while `lock` is held.
    let report: LoadReport = yield* sources.report
    let loadedByName = new Map(report.loaded.map((p) => [p.name, p]))
    let generation = { number: report.generation, started_at: DateTime.formatIso(startedAt) }
    const snapshots = new Map<string, PluginSnapshot>()
    /** Each isolated plugin's worker heap in use, as last read. */
    let heaps = new Map<string, number>()
    let endpoints = new Map<string, StatusEndpoint>()
    const log: Array<StatusLogEntry> = []
    let lastPoll: string | null = null
    let lastRefreshError = ""
    // The rows' JSON, made when first asked for after a change: a request costs the small parts.
    let pluginsJson: string | undefined
    let endpointsJson: string | undefined

    const health = Effect.gen(function*() {
      const now = yield* DateTime.now
      const s = yield* options.sessions
      return {
        daemon: {
          pid: process.pid,
          version: options.version,
          started_at: DateTime.formatIso(startedAt),
          uptime_ms: DateTime.toEpochMillis(now) - DateTime.toEpochMillis(startedAt),
          last_poll_at: lastPoll,
          poll_ms: pollMs
        },
        sessions: { count: s.count, busy: s.busy, idle: Math.max(0, s.count - s.busy) }
      }
    })

    const pluginRows = () =>
      [...snapshots.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map((s) =>
        pluginRow(s, loadedByName.get(s.name), heaps.get(s.name))
      )
    const endpointRows = () => [...endpoints.values()].sort(byKey)
    const rest = (h: Effect.Effect.Success<typeof health>) => ({
      schema: 1 as const,
      generation,
      skipped: report.skipped,
      missing: report.missing,
      sessions: h.sessions,
      log: [...log],
      daemon: h.daemon
    })
    const document = Effect.map(health, (h): StatusDocument => ({ ...rest(h), plugins: pluginRows(), endpoints: endpointRows() }))
    /** The document's JSON: the cached rows, and the small parts encoded now. */
    const documentJson = Effect.map(health, (h) => {
      pluginsJson ??= JSON.stringify(encodePlugins(pluginRows()))
      endpointsJson ??= JSON.stringify(encodeEndpoints(endpointRows()))
      return `{"plugins":${pluginsJson},"endpoints":${endpointsJson},${JSON.stringify(encodeRest(rest(h))).slice(1)}`
    })
    const statusJson = (json: string) => `{"_tag":"status","document":${json}}`

    const note = (kind: StatusLogEntry["kind"], text: string) =>
      Effect.map(DateTime.now, (now): StatusEvent => {
        const entry: StatusLogEntry = { at: DateTime.formatIso(now), kind, text }
        log.push(entry)
        if (log.length > logSize) log.splice(0, log.length - logSize)
        return { _tag: "log", entry }
      })

    const publish = (events: ReadonlyArray<StatusEvent>) =>
      events.length === 0 ? Effect.void : PubSub.publishAll(pubsub, events.map((e) => published(e)))

    /** One registry change: the plugin's row, and a log line when its status changed. */
    const applyChange = (change: SnapshotChange) =>
      lock.withPermits(1)(Effect.gen(function*() {
        pluginsJson = undefined
        if (change._tag === "Removed") {
          if (!snapshots.delete(change.name)) return
          return yield* publish([{ _tag: "plugin-removed", name: change.name }, yield* note("plugin", `${change.name}: removed`)])
        }
        const s = change.snapshot
        const before = snapshots.get(s.name)
        snapshots.set(s.name, s)
        const events: Array<StatusEvent> = [{ _tag: "plugin", plugin: pluginRow(s, loadedByName.get(s.name), heaps.get(s.name)) }]
        if (before?.status !== s.status) {
          events.push(yield* note("plugin", `${s.name}: ${s.status}` + (s.status === "error" && s.last_error !== undefined ? ` (${s.last_error.slice(0, 300)})` : "")))
        }
        yield* publish(events)
      }))

    /** The endpoints as the state root has them now. */
    const readEndpoints = Effect.gen(function*() {
      const listing = yield* sources.capabilities
      const owed = yield* sources.owed
      const owedBy = new Map(owed.map((r) => [JSON.stringify([r.personality, r.runtime]), r]))
      const next = new Map<string, StatusEndpoint>()
      const listed = new Set<string>()
      for (const c of listing.capabilities) {
        for (const e of c.endpoints) {
          const pair = JSON.stringify([e.personality, e.runtime])
          listed.add(pair)
          const o = owedBy.get(pair)
          const entry: StatusEndpoint = {
            capability: c.declaration.capability,
            peer: e.personality,
            runtime: e.runtime,
            standing: standingOf(o),
            last: Option.match(e.last, {
              onNone: () => null,
              onSome: (l) => ({ state: l.state, occasion: l.occasion, at: l.at, exit: l.exit ?? null, detail: l.detail ?? null })
            }),
            owed: owedPart(o)
          }
          next.set(endpointKey(entry), entry)
        }
      }
      // Owed work of an endpoint no declaration lists any more (its capability or peer removed).
      for (const r of owed) {
        if (listed.has(JSON.stringify([r.personality, r.runtime]))) continue
        const entry: StatusEndpoint = {
          capability: null,
          peer: r.personality,
          runtime: r.runtime,
          standing: standingOf(r),
          last: null,
          owed: owedPart(r)
        }
        next.set(endpointKey(entry), entry)
      }
      return next
    })

    const refresh = lock.withPermits(1)(Effect.gen(function*() {
      const events: Array<StatusEvent> = []
      const current = yield* sources.report
      const newGeneration = current.generation !== report.generation
      report = current
      if (newGeneration) {
        loadedByName = new Map(current.loaded.map((p) => [p.name, p]))
        pluginsJson = undefined
      }
      if (newGeneration) {
        generation = { number: current.generation, started_at: DateTime.formatIso(yield* DateTime.now) }
        events.push(
          yield* note("generation", `plugin generation ${current.generation} ready: ${current.loaded.length} loaded, ${current.skipped.length} skipped`)
        )
      }
      // The workers' heaps: a plugin whose figure changed is a `plugin` event.
      const read_heaps = new Map(
        (yield* sources.heaps).flatMap((w) => (Option.isSome(w.heap) ? [[w.plugin, w.heap.value.used] as const] : []))
      )
      for (const name of new Set([...heaps.keys(), ...read_heaps.keys()])) {
        if (heaps.get(name) === read_heaps.get(name)) continue
        const snapshot = snapshots.get(name)
        pluginsJson = undefined
        if (snapshot !== undefined) events.push({ _tag: "plugin", plugin: pluginRow(snapshot, loadedByName.get(name), read_heaps.get(name)) })
      }
      heaps = read_heaps
      const read = yield* Effect.either(readEndpoints)
      if (read._tag === "Left") {
        const message = read.left.message
        if (message !== lastRefreshError) yield* Effect.logWarning(`status page: the state root could not be read: ${message}`)
        lastRefreshError = message
      } else {
        lastRefreshError = ""
        const next = read.right
        for (const [key, entry] of next) {
          const before = endpoints.get(key)
          if (before !== undefined && sameEndpoint(before, entry)) continue
          events.push({ _tag: "endpoint", endpoint: entry })
          endpointsJson = undefined
          const line = endpointLine(before, entry)
          if (Option.isSome(line)) events.push(yield* note("endpoint", line.value))
        }
        for (const [key, entry] of endpoints) {
          if (next.has(key)) continue
          events.push({ _tag: "endpoint-removed", capability: entry.capability, peer: entry.peer, runtime: entry.runtime })
          endpointsJson = undefined
        }
        endpoints = next
      }
      lastPoll = DateTime.formatIso(yield* DateTime.now)
      const h = yield* health
      // A new generation: the whole document (skipped, missing and every row may have changed).
      yield* publish([...events, { _tag: "health", ...h }])
      if (newGeneration) {
        const json = statusJson(yield* documentJson)
        yield* PubSub.publish(pubsub, published({ _tag: "status", document: yield* document }, () => json))
      }
    }))

    // The registry's current snapshots, then every change; first pass before the board is returned.
    const first = yield* sources.snapshots
    yield* Effect.forEach(first, (snapshot) => applyChange({ _tag: "Updated", snapshot }), { discard: true })
    yield* Effect.forkScoped(Stream.runForEach(sources.changes, applyChange))
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
