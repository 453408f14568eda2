/**
 * `FleetCalls` on the cluster (docs/cluster.md, "Sweeps across hosts"): two hosts, each with one
 * runner, over one SQLite file in one process, their peers, hosts and the declaration stored
 * through the SQL stores. The listing applies each host's own profiles (a runtime that is a
 * channel on web-02 is no endpoint there) and reports invalid rows; a call reaches the runner of
 * the endpoint's host; a whole sweep on the memory workflow engine over it is `ok`; a host
 * announced with no runner makes its endpoints `failed` after the sweep's call timeout.
 */
import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as WorkflowEngine from "@effect/workflow/WorkflowEngine"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import { join } from "node:path"
import { StateRootError } from "../../../src/schema/CapabilityErrors.ts"
import type { Declaration } from "../../../src/schema/Declaration.ts"
import { defaultHostConfig, type HostConfig } from "../../../src/schema/HostConfig.ts"
import type { Peer } from "../../../src/schema/Peer.ts"
import { Capabilities } from "../../../src/services/capabilities/Capabilities.ts"
import * as RuntimeProfiles from "../../../src/services/capabilities/RuntimeProfiles.ts"
import * as StateRoot from "../../../src/services/root/StateRoot.ts"
import * as ClusterFleetCalls from "../../../src/services/cluster/ClusterFleetCalls.ts"
import * as ClusterRunner from "../../../src/services/cluster/ClusterRunner.ts"
import { FleetCalls, type FleetEndpoint } from "../../../src/services/cluster/FleetCalls.ts"
import { reasonOf } from "../../../src/services/cluster/internal/clusterFleetCalls.ts"
import { HostWork } from "../../../src/services/cluster/HostWork.ts"
import * as Migrations from "../../../src/services/cluster/Migrations.ts"
import * as SqlCapabilities from "../../../src/services/cluster/SqlCapabilities.ts"
import { Hosts } from "../../../src/services/cluster/SqlHosts.ts"
import * as SqlHosts from "../../../src/services/cluster/SqlHosts.ts"
import * as SqlPeers from "../../../src/services/cluster/SqlPeers.ts"
import * as Sweep from "../../../src/services/cluster/Sweep.ts"
import { freePort } from "../../support/freePort.ts"

type Seen = Ref.Ref<ReadonlyArray<string>>

/** A host's work that records `<runner>: <verb> <runtime>/<personality>` and answers `ok`. */
const recorder = (runner: string, seen: Seen) =>
  Layer.succeed(HostWork, {
    provision: (key, call) =>
      Ref.update(seen, (all) => [...all, `${runner}: ${call.verb} ${key.runtime}/${key.personality}`]).pipe(
        Effect.as({
          capability: call.capability,
          personality: key.personality,
          runtime: key.runtime,
          occasion: call.verb === "unregister" ? "off-all" as const : "sweep-on" as const,
          state: "ok" as const,
          ms: 1
        })
      )
  })

const scribe: Declaration = {
  schema: 1,
  capability: "scribe",
  package: "@test/scribe",
  version: "1.0.0",
  runtimes: ["claude", "codex"],
  provision: { command: "/abs/bin", args: ["{personality}"] },
  unprovision: { command: "/abs/bin", args: ["{personality}"] }
}

const peer = (personality: string, runtimes: ReadonlyArray<string>): Peer => ({
  schema: 1,
  personality,
  cwd: `/home/${personality}`,
  runtimes,
  default_runtime: runtimes[0]!
})

/** web-02 runs codex as an agent and claude as a channel. */
const web02: HostConfig = { schema: 1, agent_runtimes: ["codex"], channel_runtimes: ["claude"], profiles: {} }

const peersOf: Record<string, ReadonlyArray<Peer>> = {
  "web-01": [peer("bob", ["claude"]), peer("alice", ["codex", "claude", "opencode"])],
  "web-02": [peer("alice", ["claude", "codex"]), peer("carol", ["claude"])],
  "web-03": [peer("dave", ["claude"])]
}

const expected: ReadonlyArray<FleetEndpoint> = [
  { host: "web-01", runtime: "claude", personality: "alice" },
  { host: "web-01", runtime: "codex", personality: "alice" },
  { host: "web-01", runtime: "claude", personality: "bob" },
  { host: "web-02", runtime: "codex", personality: "alice" }
]

/**
 * One SQLite file in a temp folder: the declaration, the hosts (`web-03` too when asked, with no
 * runner) and their peers stored; a runner for web-01 and one for web-02, each with its recorder;
 * and `FleetCalls` on a client of the fleet.
 */
const onFleet = <A, E, R>(
  options: { readonly web03: boolean },
  body: (seen: Seen) => Effect.Effect<A, E, R>
) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const root = yield* fs.makeTempDirectoryScoped()
    const base = yield* Layer.build(
      Layer.mergeAll(
        StateRoot.layer({ root }),
        Layer.succeed(RuntimeProfiles.RuntimeProfiles, RuntimeProfiles.fromConfig(defaultHostConfig)),
        SqliteClient.layer({ filename: join(root, "fleet.db") })
      ).pipe(Layer.provideMerge(NodeContext.layer))
    )
    const stores = yield* Layer.build(
      Layer.mergeAll(SqlCapabilities.layer, SqlHosts.layer).pipe(Layer.provide(Layer.succeedContext(base)))
    )
    const database = Context.merge(base, stores)
    yield* Effect.gen(function*() {
      yield* Migrations.migrate
      yield* (yield* Capabilities).store(scribe)
      const hosts = yield* Hosts
      yield* hosts.announce("web-01", defaultHostConfig)
      yield* hosts.announce("web-02", web02)
      if (options.web03) yield* hosts.announce("web-03", defaultHostConfig)
      for (const [host, peers] of Object.entries(peersOf)) {
        if (host === "web-03" && !options.web03) continue
        const store = yield* SqlPeers.make(host)
        yield* Effect.forEach(peers, store.put)
      }
    }).pipe(Effect.provide(database))

    const seen = yield* Ref.make<ReadonlyArray<string>>([])
    for (const host of ["web-01", "web-02"]) {
      const port = yield* freePort
      yield* Layer.build(
        ClusterRunner.layer({ host, address: { host: "127.0.0.1", port } }).pipe(
          Layer.provide(recorder(host, seen)),
          Layer.provide(Layer.succeedContext(base))
        )
      )
    }
    const client = yield* Layer.build(
      ClusterFleetCalls.layer.pipe(
        Layer.provideMerge(ClusterRunner.clientLayer),
        Layer.provide(Layer.succeedContext(database))
      )
    )
    return yield* body(seen).pipe(Effect.provide(Context.merge(database, client)))
  }).pipe(Effect.scoped, Effect.provide(NodeContext.layer))

/** A call to each host that has a runner, so the client knows their shards before a timed sweep. */
const warmUp = Effect.gen(function*() {
  const fleet = yield* FleetCalls
  for (const endpoint of [expected[0]!, expected[3]!]) {
    yield* fleet.call(endpoint, { verb: "sync", capability: "scribe", revision: "0" })
  }
})

const sweepOn = (callTimeout: Duration.DurationInput) =>
  Sweep.layer({ callTimeout }).pipe(Layer.provideMerge(WorkflowEngine.layerMemory))

describe("FleetCalls on the cluster", () => {
  it.live("endpoints: every host's peers by that host's profiles, in host, personality, runtime order; invalid rows reported", () =>
    onFleet({ web03: false }, () =>
      Effect.gen(function*() {
        const fleet = yield* FleetCalls
        const found = yield* fleet.endpoints("scribe")
        expect(found).toEqual({ endpoints: expected, invalid: [] })

        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO city_peers (host, personality, peer) VALUES ('web-01', 'zed', '{}')`
        yield* sql`INSERT INTO city_hosts (host, profiles, started_at, seen_at)
          VALUES ('web-05', ${JSON.stringify({ schema: 2 })}, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')`
        const web04 = yield* SqlPeers.make("web-04")
        yield* web04.put(peer("erin", ["claude"]))
        const web05 = yield* SqlPeers.make("web-05")
        yield* web05.put(peer("fay", ["claude"]))
        const again = yield* fleet.endpoints("scribe")
        expect(again.endpoints).toEqual(expected)
        expect(again.invalid.map((e) => [e.reason, e.file])).toEqual([
          ["PeerFile", "city_peers (web-01, zed)"],
          ["HostConfig", "city_hosts (web-05)"],
          ["HostConfig", "city_hosts (web-04)"]
        ])
        expect(again.invalid[2]!.message).toBe(
          "invalid host configuration city_hosts (web-04): is missing: the host has peers in city_peers but never " +
            "announced itself (its daemon announces it when it starts)"
        )

        const unknown = yield* Effect.flip(fleet.endpoints("nothing"))
        expect(unknown.message).toBe("state root: cannot read city_capabilities (nothing): no declaration: nothing to sweep")
      })), { timeout: 120_000 })

  it.live("call: the Provision reaches the runner of the endpoint's host and answers its outcome", () =>
    onFleet({ web03: false }, (seen) =>
      Effect.gen(function*() {
        const fleet = yield* FleetCalls
        const request = { verb: "register" as const, capability: "scribe", revision: "1" }
        const outcome = yield* fleet.call(expected[3]!, request)
        expect(outcome).toMatchObject({ capability: "scribe", personality: "alice", runtime: "codex", state: "ok" })
        yield* fleet.call(expected[2]!, request)
        expect(yield* Ref.get(seen)).toEqual(["web-02: register codex/alice", "web-01: register claude/bob"])
      })), { timeout: 120_000 })

  it.live("a sweep over the cluster calls every endpoint on its own host once and is ok", () =>
    onFleet({ web03: false }, (seen) =>
      Effect.gen(function*() {
        yield* warmUp
        yield* Ref.set(seen, [])
        const report = yield* Sweep.run({ verb: "register", capability: "scribe", revision: "1" }).pipe(
          Effect.provide(sweepOn("30 seconds"))
        )
        expect(report.verdict).toBe("ok")
        expect(report.invalid).toEqual([])
        expect(report.outcomes.map((o) => [o.host, o.runtime, o.personality, o.state])).toEqual(
          expected.map((e) => [e.host, e.runtime, e.personality, "ok"])
        )
        expect([...(yield* Ref.get(seen))].sort()).toEqual([
          "web-01: register claude/alice",
          "web-01: register claude/bob",
          "web-01: register codex/alice",
          "web-02: register codex/alice"
        ])
      })), { timeout: 120_000 })

  it.live("a host announced with no runner: its endpoints are failed after the call timeout, the others ok", () =>
    onFleet({ web03: true }, () =>
      Effect.gen(function*() {
        yield* warmUp
        const report = yield* Sweep.run({ verb: "sync", capability: "scribe", revision: "2" }).pipe(
          Effect.provide(sweepOn("3 seconds"))
        )
        expect(report.verdict).toBe("failed")
        expect(report.outcomes.map((o) => [o.host, o.runtime, o.personality, o.state])).toEqual([
          ...expected.map((e) => [e.host, e.runtime, e.personality, "ok"]),
          ["web-03", "claude", "dave", "failed"]
        ])
        expect(report.outcomes[4]!.detail).toContain("host web-03 did not answer within 3000 ms")
      })), { timeout: 120_000 })
})

describe("a failed send", () => {
  it("is named in one line: the carrier's error with its tag, or the transport's defect", () => {
    expect(reasonOf(Cause.fail(new StateRootError({ reason: "StateError", operation: "write", path: "city_cluster_messages", detail: "disk full" }))))
      .toBe("the send failed: StateError: state root: cannot write city_cluster_messages: disk full")
    expect(reasonOf(Cause.die(new Error("socket closed\nby peer")))).toBe("the transport died: socket closed\\nby peer")
  })
})
