/**
 * Peers from before the fleet (docs/cluster.md, "Peers from before the fleet"), through the `city`
 * binary on PostgreSQL: a root with peer files whose host.json names a fleet. Before its daemon
 * starts, `city peer list` names every file the fleet does not have. The daemon's first start
 * imports the new ones, one line each, and moves their files to `state/imported-peers/`; a file
 * whose peer the fleet already has differently, and a file that cannot be read, stay where they
 * are and are named in a warning, with the way out. Nothing vanishes without a word.
 */
import { describe, expect, inject, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { join } from "node:path"
import { eventually } from "../fixtures.ts"
import { startDaemon } from "../support/daemonProcess.ts"
import { freePort } from "../support/freePort.ts"
import { freshDatabase } from "../support/pgDatabase.ts"
import { cityProcess, seedPeer, world, writeJson } from "./cityCli.ts"

describe("a host joining a fleet with peer files", () => {
  it.scopedLive("peer list names each file before the start; the start imports the new ones (a line each) and names the ones it leaves", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const w = yield* world
      const url = yield* freshDatabase(inject("postgresUrl"))
      const sql = yield* Effect.provide(SqlClient.SqlClient, yield* Layer.build(PgClient.layer({ url: Redacted.make(url) })))
      const port = yield* freePort
      yield* fs.makeDirectory(w.root, { recursive: true })
      yield* writeJson(w.root, "host.json", {
        schema: 1,
        agent_runtimes: ["claude"],
        channel_runtimes: [],
        profiles: {},
        cluster: { url, host: "web-01", address: `127.0.0.1:${port}` }
      })
      // Created on the host alone: alice and bob, and a file that cannot be read.
      yield* seedPeer(w.root, "alice", w.work, ["claude"])
      yield* seedPeer(w.root, "bob", w.work, ["claude"])
      yield* fs.writeFileString(join(w.root, "peers", "carol.json"), "{ not json")
      const peersOf = (stdout: string) => (JSON.parse(stdout) as { readonly peers: ReadonlyArray<{ readonly peer: string; readonly cwd: string }> }).peers

      // Before the daemon's start: the fleet has none of them, and peer list says so, file by file.
      const before = yield* cityProcess(["peer", "list", "--json"], { root: w.root })
      expect(before.code, before.stderr).toBe(0)
      expect(peersOf(before.stdout)).toEqual([])
      expect(before.stderr).toContain(`${join(w.root, "peers", "alice.json")} is not in the fleet yet: the next start of city daemon imports it`)
      expect(before.stderr).toContain(`${join(w.root, "peers", "bob.json")} is not in the fleet yet`)
      expect(before.stderr).toMatch(/carol\.json.*it is not imported into the fleet: fix or delete it/)

      // Meanwhile the fleet gets another bob of this host (peer list created the tables).
      const elsewhere = join(w.base, "elsewhere")
      yield* fs.makeDirectory(elsewhere)
      yield* sql`INSERT INTO city_peers (host, personality, peer) VALUES (${"web-01"}, ${"bob"}, ${
        JSON.stringify({ schema: 1, personality: "bob", cwd: elsewhere, runtimes: ["claude"], default_runtime: "claude" })
      })`

      // The first start: alice imported, her file moved; bob and carol left, each named.
      const daemon = yield* startDaemon(w.root, w.base, "daemon")
      const log = Effect.orElseSucceed(fs.readFileString(daemon.log), () => "")
      yield* eventually(Effect.map(log, (text) => text.includes("city daemon started")), 60_000)
      const text = yield* log
      const alice = join(w.root, "peers", "alice.json")
      const moved = join(w.root, "state", "imported-peers", "alice.json")
      expect(text).toContain(`peer alice imported into the fleet as host web-01's from ${alice}; the file moved to ${moved}`)
      expect(text).toMatch(/level=WARN .*bob\.json is not imported: the fleet already has another peer bob of host web-01, which is the one used; delete the file, or remove the fleet's \(city peer remove bob\)/)
      expect(text).toMatch(/level=WARN .*carol\.json.*it is not imported into the fleet/)
      expect(text.match(/imported into the fleet as host/g)).toHaveLength(1)
      expect(yield* fs.exists(alice)).toBe(false)
      expect(JSON.parse(yield* fs.readFileString(moved))).toMatchObject({ personality: "alice", cwd: w.work })
      expect(yield* fs.exists(join(w.root, "peers", "bob.json"))).toBe(true)

      // The fleet's peers of this host: alice and its own bob; the files left are still named.
      const after = yield* cityProcess(["peer", "list", "--json"], { root: w.root })
      expect(peersOf(after.stdout).map((p) => [p.peer, p.cwd])).toEqual([["alice", w.work], ["bob", elsewhere]])
      expect(after.stderr).not.toContain("alice")
      expect(after.stderr).toContain("bob.json is not imported")
      const fleet = yield* cityProcess(["fleet", "--json"], { root: w.root })
      const hosts = (JSON.parse(fleet.stdout) as { readonly hosts: ReadonlyArray<{ readonly host: string; readonly peers: number }> }).hosts
      expect(hosts.map((h) => [h.host, h.peers])).toEqual([["web-01", 2]])
      yield* daemon.kill("SIGTERM")
      expect((yield* Deferred.await(daemon.exited)).code).toBe(0)
    }).pipe(Effect.provide(NodeContext.layer)), 120_000)
})
