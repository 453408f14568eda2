/**
 * The status board (docs/status-page.md): its document and JSON agree, a change reaches the
 * events and the JSON, a client subscribed late starts from the whole document, and the
 * endpoints' standing follows the owed work; on a host of a fleet, the fleet comes with each
 * health event and a host that goes down or joins is a log line.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type { OwedRecord } from "../../../src/schema/Live.ts"
import type { LoadReport } from "../../../src/schema/LoadReport.ts"
import type { PluginSnapshot, SnapshotChange } from "../../../src/schema/PluginSnapshot.ts"
import { StatusDocument, StatusEvent, type StatusFleetHost } from "../../../src/schema/StatusDocument.ts"
import type { CapabilityListing } from "../../../src/services/capabilities/Listings.ts"
import type { WorkerHeap } from "../../../src/services/isolation/Workers.ts"
import * as PrometheusText from "../../../src/services/status/PrometheusText.ts"
import * as StatusBoard from "../../../src/services/status/StatusBoard.ts"

const at = "2026-12-01T10:00:00.000Z"
const snapshot = (name: string, status: PluginSnapshot["status"] = "ready"): PluginSnapshot => ({
  name,
  status,
  version: "1.0.0",
  source: "instance",
  attempts: 1,
  updated_at: at
})
const report = (generation: number): LoadReport => ({
  generation,
  loaded: [{ name: "clock", version: "1.0.0", root: "instance", folder: "/srv/plugins/clock", dropped: [], warnings: [], configUnset: [], isolation: "none" }],
  skipped: [{ name: "broken", root: "bundled", folder: "/srv/bundled/broken", kind: "ManifestInvalid", reason: "apiVersion: <\"9\">" }],
  missing: ["ghost"],
  notEnabled: [],
  notices: []
})
const listing: CapabilityListing = {
  capabilities: [{
    declaration: { capability: "stamp" } as CapabilityListing["capabilities"][number]["declaration"],
    endpoints: [{ personality: "alice", runtime: "claude", last: Option.some({ state: "ok", occasion: "birth", at, exit: 0 }) }]
  }],
  invalid: []
}
const owedRecord: OwedRecord = { schema: 1, personality: "alice", runtime: "claude", requested: 2, applied: 1, reason: "register stamp", updated_at: at }

const world = (fleet?: StatusBoard.FleetSource) => Effect.gen(function*() {
  const changes = yield* PubSub.unbounded<SnapshotChange>()
  const generation = yield* Ref.make(1)
  const owed = yield* Ref.make<ReadonlyArray<OwedRecord>>([])
  const heaps = yield* Ref.make<ReadonlyArray<WorkerHeap>>([])
  const capabilities = yield* Ref.make(listing)
  const board = yield* StatusBoard.make(
    { version: "0.1.0", pollInterval: "1 hour", sessions: Effect.succeed({ count: 2, busy: 1 }), ...(fleet === undefined ? {} : { fleet }) },
    {
      snapshots: Effect.succeed([snapshot("clock"), snapshot("alarm", "error")]),
      changes: Stream.fromPubSub(changes),
      report: Effect.map(Ref.get(generation), report),
      capabilities: Ref.get(capabilities),
      owed: Ref.get(owed),
      heaps: Ref.get(heaps)
    }
  )
  return { board, capabilities, changes, generation, heaps, owed }
})

const decodeDocument = Schema.decodeUnknownSync(StatusDocument)
const take = (board: StatusBoard.StatusBoard, n: number) =>
  Effect.map(Stream.runCollect(Stream.take(board.events, n)), Chunk.toReadonlyArray)

/**
 * Runs `stream` in a fiber until `done` says so; returns once its first element (the whole
 * document, which comes after the subscription) arrived, so what follows is seen as a change.
 */
const subscribed = <A>(stream: Stream.Stream<A>, done: (seen: ReadonlyArray<A>) => boolean) =>
  Effect.gen(function*() {
    const ready = yield* Deferred.make<void>()
    const seen: Array<A> = []
    const fiber = yield* Effect.fork(Stream.runForEachWhile(stream, (a) =>
      Effect.as(Deferred.succeed(ready, undefined), (seen.push(a), !done(seen)))))
    yield* Deferred.await(ready)
    return Effect.as(Fiber.join(fiber), seen)
  })

describe("StatusBoard", () => {
  it.scoped("the JSON it serves decodes to the document it holds", () =>
    Effect.gen(function*() {
      const { board } = yield* world()
      const document = yield* board.current
      expect(decodeDocument(JSON.parse(yield* board.encoded))).toEqual(document)
      expect(document.plugins.map((p) => [p.name, p.status, p.root, p.folder])).toEqual([
        ["alarm", "error", null, null],
        ["clock", "ready", "instance", "/srv/plugins/clock"]
      ])
      expect(document.skipped[0]?.reason).toBe("apiVersion: <\"9\">")
      expect(document.sessions).toEqual({ count: 2, busy: 1, idle: 1 })
      expect(document.endpoints).toMatchObject([{ capability: "stamp", peer: "alice", runtime: "claude", standing: "applied", owed: null }])
    }))

  it.scoped("a change reaches a subscriber and the served JSON; a late subscriber starts from the whole document", () =>
    Effect.gen(function*() {
      const { board, changes } = yield* world()
      const early = yield* subscribed(board.events, (seen) => seen.length === 3)
      const first = yield* board.encoded
      yield* PubSub.publish(changes, { _tag: "Updated", snapshot: snapshot("alarm", "ready") })
      const events = yield* early
      expect(events.map((e) => e._tag)).toEqual(["status", "plugin", "log"])
      const after = yield* board.encoded
      expect(after).not.toBe(first)
      expect(decodeDocument(JSON.parse(after)).plugins.find((p) => p.name === "alarm")?.status).toBe("ready")
      const late = yield* take(board, 1)
      expect(late[0]?._tag).toBe("status")
      if (late[0]?._tag === "status") expect(late[0].document.plugins.every((p) => p.status === "ready")).toBe(true)
      const removal = yield* subscribed(board.events, (seen) => seen.some((e) => e._tag === "plugin-removed"))
      yield* PubSub.publish(changes, { _tag: "Removed", name: "alarm" })
      yield* removal
      expect((yield* board.current).plugins.map((p) => p.name)).toEqual(["clock"])
    }))

  it.scoped("an endpoint whose last provisioning call failed, with nothing owed, stands failed, not applied", () =>
    Effect.gen(function*() {
      const { board, capabilities } = yield* world()
      const standing = Effect.map(board.current, (d) => d.endpoints[0]?.standing)
      expect(yield* standing).toBe("applied")
      const endpoint = { personality: "alice", runtime: "claude", last: Option.some({ state: "failed" as const, occasion: "birth" as const, at, exit: 1 }) }
      yield* Ref.set(capabilities, { ...listing, capabilities: [{ ...listing.capabilities[0]!, endpoints: [endpoint] }] })
      yield* board.refresh
      expect(yield* standing).toBe("failed")
      expect((yield* board.current).log.map((l) => l.text)).toContain("claude-alice (stamp): applied → failed")
      yield* Ref.set(capabilities, listing)
      yield* board.refresh
      expect(yield* standing).toBe("applied")
    }))

  it.scoped("an endpoint goes pending, failing, applied as its owed work does; encoded events decode", () =>
    Effect.gen(function*() {
      const { board, owed } = yield* world()
      const standing = Effect.map(board.current, (d) => d.endpoints[0]?.standing)
      const encoded = yield* subscribed(board.encodedEvents, (seen) => seen.length === 6)
      yield* Ref.set(owed, [owedRecord])
      yield* board.refresh
      expect(yield* standing).toBe("pending")
      yield* Ref.set(owed, [{ ...owedRecord, attempts: 1, last_error: "reload failed: exit 1" }])
      yield* board.refresh
      expect(yield* standing).toBe("failing")
      yield* Ref.set(owed, [])
      yield* board.refresh
      expect(yield* standing).toBe("applied")
      const log = (yield* board.current).log.map((l) => l.text)
      expect(log).toContain("claude-alice (stamp): applied → pending")
      expect(log).toContain("claude-alice (stamp): pending → failing; failed: reload failed: exit 1")
      expect(log).toContain("claude-alice (stamp): failing → applied")
      for (const e of yield* encoded) {
        const decoded = Schema.decodeUnknownSync(StatusEvent)(JSON.parse(e.json))
        expect(decoded._tag).toBe(e.tag)
      }
    }))

  it.scoped("an isolated plugin's worker heap, read at each refresh: a changed figure is a plugin event and in the served JSON", () =>
    Effect.gen(function*() {
      const { board, heaps } = yield* world()
      const heapOf = Effect.map(board.current, (d) => d.plugins.find((p) => p.name === "clock")?.heap_used_bytes)
      expect(yield* heapOf).toBeNull()
      const events = yield* subscribed(board.events, (seen) => seen.filter((e) => e._tag === "plugin").length === 2)
      yield* Ref.set(heaps, [{ plugin: "clock", heap: Option.some({ used: 7 * 2 ** 20, limit: 300 * 2 ** 20 }) }])
      yield* board.refresh
      yield* board.refresh // the same figure again: no event
      yield* Ref.set(heaps, [{ plugin: "clock", heap: Option.none() }])
      yield* board.refresh
      const plugins = (yield* events).flatMap((e) => (e._tag === "plugin" ? [e.plugin.heap_used_bytes] : []))
      expect(plugins).toEqual([7 * 2 ** 20, null])
      yield* Ref.set(heaps, [{ plugin: "clock", heap: Option.some({ used: 9 * 2 ** 20, limit: 300 * 2 ** 20 }) }])
      yield* board.refresh
      expect(yield* heapOf).toBe(9 * 2 ** 20)
      expect(decodeDocument(JSON.parse(yield* board.encoded)).plugins.find((p) => p.name === "clock")?.heap_used_bytes).toBe(9 * 2 ** 20)
    }))

  it.scoped("a new generation sends the whole document again", () =>
    Effect.gen(function*() {
      const { board, generation } = yield* world()
      const events = yield* subscribed(board.events, (seen) => {
        const last = seen[seen.length - 1]
        return last?._tag === "status" && last.document.generation.number === 2
      })
      yield* Ref.set(generation, 2)
      yield* board.refresh
      const seen = yield* events
      expect(seen.some((e) => e._tag === "log" && e.entry.text.startsWith("plugin generation 2 ready"))).toBe(true)
      expect((yield* board.current).generation.number).toBe(2)
    }))

  it.scoped("on a host of a fleet: the fleet with each health event, a host down or joining a log line, a failed read keeps the last", () =>
    Effect.gen(function*() {
      const fleetHost = (host: string, up: boolean): StatusFleetHost => ({
        host,
        up,
        started_at: at,
        seen_at: at,
        peers: 1,
        endpoints: 2,
        owed_reloads: 0,
        owed_removals: 0
      })
      const read = yield* Ref.make<Either.Either<ReadonlyArray<StatusFleetHost>, string>>(
        Either.right([fleetHost("web-01", true), fleetHost("web-02", true)])
      )
      const { board } = yield* world({
        host: "web-01",
        read: Effect.flatMap(Ref.get(read), (e) =>
          Either.match(e, {
            onLeft: (message) => Effect.fail({ message }),
            onRight: (hosts) => Effect.succeed({ hosts, invalid: ["city_peers (web-02, bob): runtimes: is missing"] })
          }))
      })
      const first = yield* board.current
      expect(first.fleet).toMatchObject({ host: "web-01", hosts: [fleetHost("web-01", true), fleetHost("web-02", true)] })
      expect(first.fleet?.read_at).not.toBeNull()
      expect(first.fleet?.invalid).toEqual(["city_peers (web-02, bob): runtimes: is missing"])
      // The first read is how the fleet was found, not news.
      expect(first.log.filter((e) => e.kind === "fleet")).toEqual([])

      const seen = yield* subscribed(board.events, (events) => events.some((e) => e._tag === "health"))
      const next = [fleetHost("web-01", true), fleetHost("web-02", false), { ...fleetHost("web-03", true), owed_reloads: 3, owed_removals: 1 }]
      yield* Ref.set(read, Either.right(next))
      yield* board.refresh
      const events = yield* seen
      expect(events.flatMap((e) => (e._tag === "log" ? [[e.entry.kind, e.entry.text]] : []))).toEqual([
        ["fleet", `web-02 down (last seen ${at})`],
        ["fleet", "web-03 joined the fleet (up)"]
      ])
      const health = events.find((e) => e._tag === "health")
      expect(health?._tag === "health" ? health.fleet?.hosts : undefined).toEqual(next)
      expect(Schema.decodeUnknownSync(StatusEvent)(JSON.parse(JSON.stringify(Schema.encodeSync(StatusEvent)(health!))))).toEqual(health)

      // The same figures on /metrics, per host.
      const fleetMetrics = Effect.map(
        PrometheusText.snapshot,
        (text) => text.split("\n").filter((line) => /^city_fleet_\w+\{host="web-0[123]"\}/.test(line)).sort()
      )
      const expected = [
        "city_fleet_endpoints{host=\"web-01\"} 2",
        "city_fleet_endpoints{host=\"web-02\"} 2",
        "city_fleet_endpoints{host=\"web-03\"} 2",
        "city_fleet_host_up{host=\"web-01\"} 1",
        "city_fleet_host_up{host=\"web-02\"} 0",
        "city_fleet_host_up{host=\"web-03\"} 1",
        "city_fleet_reloads_owed{host=\"web-01\"} 0",
        "city_fleet_reloads_owed{host=\"web-02\"} 0",
        "city_fleet_reloads_owed{host=\"web-03\"} 3",
        "city_fleet_removals_owed{host=\"web-01\"} 0",
        "city_fleet_removals_owed{host=\"web-02\"} 0",
        "city_fleet_removals_owed{host=\"web-03\"} 1"
      ]
      expect(yield* fleetMetrics).toEqual(expected)

      // A read that fails keeps what was seen, with the time it was read, and the metrics.
      const kept = (yield* board.current).fleet
      yield* Ref.set(read, Either.left("connection refused"))
      yield* board.refresh
      expect((yield* board.current).fleet).toEqual(kept)
      expect(yield* fleetMetrics).toEqual(expected)
      expect(decodeDocument(JSON.parse(yield* board.encoded))).toEqual(yield* board.current)

      // Up again.
      yield* Ref.set(read, Either.right([fleetHost("web-01", true), fleetHost("web-02", true), fleetHost("web-03", true)]))
      yield* board.refresh
      expect((yield* board.current).log.at(-1)).toMatchObject({ kind: "fleet", text: "web-02 up" })
      expect(yield* fleetMetrics).toContain("city_fleet_host_up{host=\"web-02\"} 1")
    }))

  it.scoped("a host alone has no fleet part", () =>
    Effect.gen(function*() {
      const { board } = yield* world()
      expect((yield* board.current).fleet).toBeNull()
      expect(JSON.parse(yield* board.encoded).fleet).toBeNull()
    }))
})
