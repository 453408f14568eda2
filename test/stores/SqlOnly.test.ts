/**
 * What only the SQL stores do (docs/cluster.md, "Capability, peer and host stores on SQL"): a
 * declaration's revision, each host's peers apart in one table and the fleet read of them all, the
 * host table, invalid rows named by their table locator, and the one migration set applied once
 * however many stores build together. The behaviour they share with the file stores is tested
 * against both in test/stores/FileAndSql.test.ts and test/property/Reloads.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { existsSync, mkdirSync } from "node:fs"
import { join } from "node:path"
import type { Declaration } from "../../src/schema/Declaration.ts"
import { defaultHostConfig, type HostConfig } from "../../src/schema/HostConfig.ts"
import type { Peer } from "../../src/schema/Peer.ts"
import { Capabilities } from "../../src/services/capabilities/Capabilities.ts"
import { Peers } from "../../src/services/capabilities/Peers.ts"
import * as RuntimeProfiles from "../../src/services/capabilities/RuntimeProfiles.ts"
import * as StateRoot from "../../src/services/root/StateRoot.ts"
import * as FleetStatus from "../../src/services/cluster/FleetStatus.ts"
import * as Migrations from "../../src/services/cluster/Migrations.ts"
import * as SqlCapabilities from "../../src/services/cluster/SqlCapabilities.ts"
import * as SqlHosts from "../../src/services/cluster/SqlHosts.ts"
import * as SqlPeers from "../../src/services/cluster/SqlPeers.ts"
import * as SqlReloads from "../../src/services/cluster/SqlReloads.ts"
import { Reloads } from "../../src/services/owed/Reloads.ts"

/** A temp folder holding a state root and an SQLite file, with the client and this host's services. */
const onDatabase = <A, E, R>(body: (root: string) => Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const root = yield* fs.makeTempDirectoryScoped()
    const host = Layer.mergeAll(
      StateRoot.layer({ root }),
      Layer.succeed(RuntimeProfiles.RuntimeProfiles, RuntimeProfiles.fromConfig(defaultHostConfig)),
      SqliteClient.layer({ filename: join(root, "city.db") })
    ).pipe(Layer.provideMerge(NodeContext.layer))
    return yield* body(root).pipe(Effect.provide(host))
  }).pipe(Effect.provide(NodeContext.layer))

const declaration = (capability: string, version = "1.0.0"): Declaration => ({
  schema: 1,
  capability,
  package: `@test/${capability}`,
  version,
  runtimes: ["claude"],
  provision: { command: "/abs/bin", args: ["{personality}"] },
  unprovision: { command: "/abs/bin", args: ["{personality}"] }
})

const peer = (personality: string, cwd: string): Peer => ({
  schema: 1,
  personality,
  cwd,
  runtimes: ["claude", "opencode"],
  default_runtime: "claude"
})

const applied = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ migration_id: number; name: string }>`SELECT migration_id, name FROM city_migrations ORDER BY migration_id`)

describe("SqlCapabilities", () => {
  it.scoped("every store raises the revision by one, the first is 1; a removed capability has none; registered again, it goes on from its last", () =>
    onDatabase(() =>
      Effect.gen(function*() {
        const capabilities = yield* Capabilities
        expect(yield* SqlCapabilities.revision("mail")).toEqual(Option.none())
        yield* capabilities.store(declaration("mail"))
        expect(yield* SqlCapabilities.revision("mail")).toEqual(Option.some(1))
        yield* capabilities.store(declaration("mail", "2.0.0"))
        yield* capabilities.store(declaration("mail", "2.0.0")) // the same declaration again: a new register
        expect(yield* SqlCapabilities.revision("mail")).toEqual(Option.some(3))
        yield* capabilities.store(declaration("notes"))
        expect(yield* SqlCapabilities.revision("notes")).toEqual(Option.some(1))
        expect((yield* capabilities.get("mail")).version).toBe("2.0.0")
        yield* capabilities.remove("mail")
        expect(yield* SqlCapabilities.revision("mail")).toEqual(Option.none())
        // A revision never repeats: a sweep keyed by it is never mistaken for an earlier one.
        yield* capabilities.store(declaration("mail"))
        expect(yield* SqlCapabilities.revision("mail")).toEqual(Option.some(4))
      }).pipe(Effect.provide(SqlCapabilities.layer))))

  it.scoped("a row that does not decode is named city_capabilities (<name>), as file(name) is", () =>
    onDatabase(() =>
      Effect.gen(function*() {
        const capabilities = yield* Capabilities
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO city_capabilities (name, revision, declaration) VALUES ('bad', 1, ${JSON.stringify({ schema: 2 })})`
        expect(capabilities.file("bad")).toBe("city_capabilities (bad)")
        const refused = yield* Effect.flip(capabilities.get("bad"))
        // Every fault of the row, a line each.
        expect(refused.message.split("\n")).toEqual([
          `invalid capability declaration city_capabilities (bad): field "schema": must be 1`,
          ...["capability", "runtimes", "provision", "unprovision"].map((field) =>
            `invalid capability declaration city_capabilities (bad): field "${field}": is missing`
          )
        ])
        expect((yield* capabilities.scan).invalid.map((e) => e.message)).toEqual([refused.message])
      }).pipe(Effect.provide(SqlCapabilities.layer))))
})

describe("SqlPeers", () => {
  it.scoped("each host sees and changes its own peers; two hosts may each have alice; fleet lists every host's", () =>
    onDatabase((root) =>
      Effect.gen(function*() {
        yield* Migrations.migrate
        const web1 = yield* SqlPeers.make("web-01")
        const web2 = yield* SqlPeers.make("web-02")
        yield* web1.put(peer("alice", "/one"))
        yield* web2.put(peer("alice", "/two"))
        yield* web2.put(peer("bob", "/two/bob"))
        expect((yield* web1.get("alice")).cwd).toBe("/one")
        expect((yield* web2.get("alice")).cwd).toBe("/two")
        expect(yield* web1.exists("bob")).toBe(false)
        expect((yield* Effect.flip(web1.get("bob")))).toMatchObject({ _tag: "CapabilityError", reason: "UnknownPeer", file: "city_peers (web-01, bob)" })
        expect((yield* web1.scan).valid.map((p) => p.cwd)).toEqual(["/one"])

        mkdirSync(join(root, "state", "opencode", "alice"), { recursive: true })
        yield* web1.purge("alice")
        expect(existsSync(join(root, "state", "opencode", "alice"))).toBe(false)
        expect(yield* web1.exists("alice")).toBe(false)
        expect((yield* web2.get("alice")).cwd).toBe("/two")

        yield* web1.put(peer("zed", "/one/zed"))
        const fleet = yield* SqlPeers.fleet
        expect(fleet.valid.map(({ host, peer }) => [host, peer.personality])).toEqual([
          ["web-01", "zed"],
          ["web-02", "alice"],
          ["web-02", "bob"]
        ])
        expect(fleet.invalid).toEqual([])
      })))

  it.scoped("a row that does not decode is named city_peers (<host>, <personality>) by scan, get and fleet", () =>
    onDatabase(() =>
      Effect.gen(function*() {
        const peers = yield* Peers
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO city_peers (host, personality, peer) VALUES ('web-01', 'bob', '{ torn')`
        yield* sql`INSERT INTO city_peers (host, personality, peer) VALUES ('web-02', 'ann', ${JSON.stringify(peer("ann", "x"))})`
        expect(peers.file("bob")).toBe("city_peers (web-01, bob)")
        expect(yield* Effect.flip(peers.get("bob"))).toMatchObject({ file: "city_peers (web-01, bob)", field: "" })
        expect((yield* peers.scan).invalid.map((e) => e.file)).toEqual(["city_peers (web-01, bob)"])
        const fleet = yield* SqlPeers.fleet
        expect(fleet.invalid.map((e) => e.message)).toEqual([
          expect.stringMatching(/^invalid peer file city_peers \(web-01, bob\): not valid JSON/),
          `invalid peer file city_peers (web-02, ann): field "cwd": must be an absolute path`
        ])
      }).pipe(Effect.provide(SqlPeers.layer({ host: "web-01" })))))
})

describe("SqlHosts", () => {
  const channelsOnly: HostConfig = { ...defaultHostConfig, agent_runtimes: ["claude"], profiles: {} }

  it.scoped("two hosts announce themselves with their profiles; list gives both, decoded; seen refreshes one", () =>
    onDatabase(() =>
      Effect.gen(function*() {
        const hosts = yield* SqlHosts.Hosts
        yield* TestClock.setTime(Date.parse("2026-12-01T10:00:00.000Z"))
        yield* hosts.announce("web-02", channelsOnly)
        yield* TestClock.adjust("1 minute")
        yield* hosts.announce("web-01", defaultHostConfig)
        yield* TestClock.adjust("1 minute")
        expect(yield* hosts.seen("web-02")).toBe(true)
        expect(yield* hosts.seen("web-03")).toBe(false) // never announced: nothing is created
        const found = yield* hosts.list
        expect(found.invalid).toEqual([])
        expect(found.valid.map((h) => [h.host, h.profiles, DateTime.formatIso(h.started_at), DateTime.formatIso(h.seen_at)])).toEqual([
          ["web-01", defaultHostConfig, "2026-12-01T10:01:00.000Z", "2026-12-01T10:01:00.000Z"],
          ["web-02", channelsOnly, "2026-12-01T10:00:00.000Z", "2026-12-01T10:02:00.000Z"]
        ])
        // Announcing again is a new start.
        yield* hosts.announce("web-02", defaultHostConfig)
        const again = (yield* hosts.list).valid.find((h) => h.host === "web-02")
        expect(again && [again.profiles, DateTime.formatIso(again.started_at)]).toEqual([defaultHostConfig, "2026-12-01T10:02:00.000Z"])
      }).pipe(Effect.provide(SqlHosts.layer))))

  it.scoped("a row that does not decode is reported by list with city_hosts (<host>), never dropped", () =>
    onDatabase(() =>
      Effect.gen(function*() {
        const hosts = yield* SqlHosts.Hosts
        const sql = yield* SqlClient.SqlClient
        yield* hosts.announce("web-01", defaultHostConfig)
        const profiles = JSON.stringify({ ...defaultHostConfig, agent_runtimes: ["telegram"] })
        yield* sql`INSERT INTO city_hosts (host, profiles, started_at, seen_at)
          VALUES ('web-02', ${profiles}, '2026-12-01T10:00:00.000Z', '2026-12-01T10:00:00.000Z')`
        yield* sql`INSERT INTO city_hosts (host, profiles, started_at, seen_at)
          VALUES ('web-03', ${JSON.stringify(defaultHostConfig)}, 'yesterday', '2026-12-01T10:00:00.000Z')`
        const found = yield* hosts.list
        expect(found.valid.map((h) => h.host)).toEqual(["web-01"])
        expect(found.invalid.map((e) => [e.file, e.field])).toEqual([
          ["city_hosts (web-02)", "profiles.channel_runtimes"],
          ["city_hosts (web-03)", "started_at"]
        ])
        expect(found.invalid[0]!.message).toBe(
          `invalid host configuration city_hosts (web-02): field "profiles.channel_runtimes": telegram cannot be both an agent and a channel runtime`
        )
      }).pipe(Effect.provide(SqlHosts.layer))))
})

describe("Migrations", () => {
  const every = [[1, "owed_reloads"], [2, "capabilities"], [3, "peers"], [4, "hosts"], [5, "capability_revisions"]]
  const allStores = Layer.mergeAll(
    SqlReloads.layer({ host: "web-01" }),
    SqlCapabilities.layer,
    SqlPeers.layer({ host: "web-01" }),
    SqlHosts.layer
  )

  it.scoped("every store's layer building at once on a fresh database applies each migration once", () =>
    onDatabase(() =>
      Effect.gen(function*() {
        const rows = yield* applied.pipe(Effect.provide(allStores))
        expect(rows.map((r) => [r.migration_id, r.name])).toEqual(every)
        // Built again, and migrated at once from several fibers: nothing more.
        yield* Effect.all([Migrations.migrate, Migrations.migrate, Migrations.migrate], { concurrency: "unbounded" })
        const again = yield* Effect.gen(function*() {
          yield* Capabilities
          yield* Peers
          yield* Reloads
          return yield* applied
        }).pipe(Effect.provide(allStores))
        expect(again.map((r) => [r.migration_id, r.name])).toEqual(every)
        // One migration set: the owed-reload store does not export a second.
        expect(Object.keys(SqlReloads)).not.toContain("migrations")
      })))

  it.scoped("a database migrated by the owed-reload store alone gets the other tables and keeps its rows", () =>
    onDatabase(() =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* Migrator.make({})({
          loader: Migrator.fromRecord({ "1_owed_reloads": Migrations.migrations["1_owed_reloads"]! }),
          table: "city_migrations"
        })
        yield* sql`INSERT INTO city_owed_reloads (host, runtime, personality, record) VALUES ('web-01', 'claude', 'ann', '{}')`
        const rows = yield* applied.pipe(Effect.provide(allStores))
        expect(rows.map((r) => [r.migration_id, r.name])).toEqual(every)
        expect(yield* sql`SELECT personality FROM city_owed_reloads`).toEqual([{ personality: "ann" }])
      })))
})

describe("FleetStatus", () => {
  it.scoped("each host with its peers, its endpoints by its own profiles and its owed work; torn rows listed; no runner means down", () =>
    onDatabase(() =>
      Effect.gen(function*() {
        const fresh = yield* FleetStatus.read
        expect(fresh).toEqual({ hosts: [], invalid: [] })
        const hosts = yield* SqlHosts.Hosts
        const sql = yield* SqlClient.SqlClient
        // web-02 runs only claude as an agent: opencode there is no endpoint.
        yield* hosts.announce("web-02", { ...defaultHostConfig, agent_runtimes: ["claude"], channel_runtimes: ["opencode"] })
        yield* hosts.announce("web-01", defaultHostConfig)
        const web1 = yield* SqlPeers.make("web-01")
        const web2 = yield* SqlPeers.make("web-02")
        yield* web1.put(peer("alice", "/one"))
        yield* web2.put(peer("alice", "/two"))
        yield* web2.put(peer("bob", "/two/bob"))
        const reloads1 = yield* SqlReloads.make("web-01")
        yield* reloads1.request([{ personality: "alice", runtime: "claude" }], "register mail")
        yield* reloads1.request([{ personality: "alice", runtime: "opencode" }], "register mail")
        yield* reloads1.requestRemoval({ personality: "alice", runtime: "opencode" })
        yield* sql`INSERT INTO city_owed_reloads (host, runtime, personality, record) VALUES ('web-02', 'claude', 'bob', '{ torn')`
        const found = yield* Effect.provide(FleetStatus.current, FleetStatus.runners)
        expect(found.hosts.map((h) => [h.host, h.up, h.peers, h.endpoints, h.owed_reloads, h.owed_removals])).toEqual([
          ["web-01", false, 1, 2, 2, 1],
          ["web-02", false, 2, 2, 1, 0]
        ])
        expect(found.invalid).toEqual([expect.objectContaining({ file: "city_owed_reloads (web-02, claude, bob)" })])
      }).pipe(Effect.provide(SqlHosts.layer))))
})
