/**
 * `city daemon --cluster` as real processes on PostgreSQL (docs/cluster.md, "Running a fleet" and
 * "Owed reloads: one path"). Owed reloads travel one way, as a user makes them: `city reload` on
 * the host (the verb applies an idle endpoint's reload itself, under the claim) and an edit of a
 * launch-read file (the daemon's watcher owes it in the host's store, its worker applies it). One
 * host: each applied once; the fleet on its status page and in `city status`. A sweep over three
 * hosts, one of them down: the two others run their endpoints' calls, the third's endpoints are
 * `failed` after the call timeout, the verdict is `failed`, every outcome names its host (a HOST
 * column, `host` in --json), nothing hangs. And three hosts whose peers come from their files (the
 * first start imports them), each owed a reload by an edit: web-02's daemon is killed with SIGKILL
 * in the middle of its reload and started again, web-03's is stopped with SIGSTOP in the middle
 * of its reload for longer than the lock expiry (its runner loses its shards while alive) while
 * `city reload` asks again, then continued: every owed reload applied exactly once after its
 * request, never two of one endpoint at once, and every daemon still stops cleanly.
 */
import { describe, expect, inject, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { Declaration } from "../../src/schema/Declaration.ts"
import { join } from "node:path"
import * as Json from "../../src/programs/jsonOutput.ts"
import * as ClusterRunner from "../../src/services/cluster/ClusterRunner.ts"
import * as SqlReloads from "../../src/services/cluster/SqlReloads.ts"
import { eventually } from "../fixtures.ts"
import { startDaemon } from "../support/daemonProcess.ts"
import { startStatusDaemon } from "../support/statusWorld.ts"
import type { StatusFleet } from "../../src/schema/StatusDocument.ts"
import { world } from "../support/world.ts"
import { freshDatabase } from "../support/pgDatabase.ts"
import * as WorkflowEngine from "@effect/workflow/WorkflowEngine"
import { Capabilities } from "../../src/services/capabilities/Capabilities.ts"
import * as RuntimeProfiles from "../../src/services/capabilities/RuntimeProfiles.ts"
import * as ClusterFleetCalls from "../../src/services/cluster/ClusterFleetCalls.ts"
import * as SqlCapabilities from "../../src/services/cluster/SqlCapabilities.ts"
import * as SqlHosts from "../../src/services/cluster/SqlHosts.ts"
import * as Sweep from "../../src/services/cluster/Sweep.ts"
import { FleetCalls } from "../../src/services/cluster/FleetCalls.ts"
import { city, cityProcess, declaration, journalOf, provisioner, seedPeer, sh, writeJson } from "./cityCli.ts"
import { freePort } from "../support/freePort.ts"

const key = { runtime: "claude", personality: "alice" }

/**
 * A host's root whose `claude` endpoints run through commands: `status` says idle, `reload` writes
 * `start <pid>` and `end <pid>` lines around a sleep of as many seconds as the file `delay` says.
 * `owe` edits alice's launch-read file (`<cwd>/.mcp.json`) once the endpoint has a fingerprint
 * baseline (an endpoint without one adopts what it finds and owes nothing): the daemon's watcher
 * owes one reload for it.
 */
const hostRoot = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const w = yield* world
  const runs = join(w.base, "runs")
  const delay = join(w.base, "delay")
  yield* fs.writeFileString(delay, "0")
  const status = yield* sh(join(w.bin, "status"), ["echo idle"])
  const reload = yield* sh(join(w.bin, "reload"), [
    `echo "start $$" >> '${runs}'`,
    `sleep "$(cat '${delay}')"`,
    `echo "end $$" >> '${runs}'`
  ])
  const cmd = (command: string) => ({ command, args: ["{personality}", "{runtime}"] })
  const profiles = { claude: { commands: { status: cmd(status), reload: cmd(reload) } } }
  /** host.json, naming the fleet when given one. */
  const configure = (cluster?: { readonly url: string; readonly host: string; readonly address: string }) =>
    writeJson(w.root, "host.json", {
      schema: 1,
      agent_runtimes: ["claude"],
      channel_runtimes: [],
      profiles,
      ...(cluster === undefined ? {} : { cluster })
    })
  yield* configure()
  const lines = Effect.map(
    Effect.orElseSucceed(fs.readFileString(runs), () => ""),
    (text) => text.split("\n").filter((line) => line !== "")
  )
  const starts = Effect.map(lines, (l) => l.filter((x) => x.startsWith("start")))
  let edits = 0
  const owe = Effect.gen(function*() {
    yield* eventually(fs.exists(join(w.root, "state", "fingerprints", "claude-alice.json")), 60_000)
    // Written whole, then renamed into place, as an editor saves: a check between a truncation and
    // the write would see two differences, and owe two reloads (rightly).
    yield* fs.writeFileString(join(w.work, ".mcp.json.tmp"), JSON.stringify({ mcpServers: {}, edit: ++edits }))
    yield* fs.rename(join(w.work, ".mcp.json.tmp"), join(w.work, ".mcp.json"))
  })
  return { w, lines, starts, owe, configure, setDelay: (seconds: number) => fs.writeFileString(delay, String(seconds)) }
})

/** The fleet's database, a client of it, and this test's side of the fleet. */
const fleet = Effect.gen(function*() {
  const url = yield* freshDatabase(inject("postgresUrl"))
  const pg = PgClient.layer({ url: Redacted.make(url) })
  const context = yield* Layer.build(ClusterRunner.clientLayer.pipe(Layer.provideMerge(pg)))
  const sql = Context.get(context, SqlClient.SqlClient)
  /** Nothing owed to `host`'s alice any more. */
  const settled = (host: string) =>
    Effect.flatMap(SqlReloads.make(host), (store) => Effect.map(store.get(key), Option.isNone)).pipe(Effect.provide(context))
  const announced = (n: number) =>
    eventually(
      Effect.map(Effect.orElseSucceed(sql<{ readonly host: string }>`SELECT host FROM city_hosts`, () => []), (rows) => rows.length === n),
      60_000
    )
  return { url, context, sql, settled, announced }
})

/**
 * Never two at once, and each reload after the one before: every `start` is followed by its own
 * `end` before the next `start`, except a start whose process was ended (the command of a reload
 * cut by a SIGKILL of its daemon, ended by the restarted daemon before its own run).
 */
const oneAtATime = (lines: ReadonlyArray<string>, cut: ReadonlyArray<string> = []) => {
  let running: string | undefined
  for (const line of lines) {
    const [what, pid] = line.split(" ")
    if (what === "start") {
      expect(running === undefined || cut.includes(running), `start ${pid} while ${running} runs: ${lines.join(", ")}`).toBe(true)
      running = pid
    } else if (pid === running) running = undefined
  }
  expect(running, `the last reload ended: ${lines.join(", ")}`).toBeUndefined()
}

describe("city daemon --cluster, real processes on PostgreSQL", () => {
  it.scopedLive("one host: city reload applies an owed reload, an edit of a launch-read file owes one the daemon applies, each once; the fleet on its status page and in city status", () =>
    Effect.gen(function*() {
      const host = yield* hostRoot
      const { announced, settled, sql, url } = yield* fleet
      const fs = yield* FileSystem.FileSystem
      const port = yield* freePort
      yield* host.configure({ url, host: "web-01", address: `127.0.0.1:${port}` })
      // Started with no flags: host.json names the fleet.
      const { daemon, url: page } = yield* startStatusDaemon(host.w, "daemon-1")
      yield* announced(1)
      // The peer, by the verb, on a host whose host.json names the fleet: written to its rows.
      const created = yield* city(["peer", "create", "alice", "--cwd", host.w.work, "--runtime", "claude"], { root: host.w.root })
      expect(created.code).toBe(0)
      expect(yield* fs.exists(join(host.w.root, "peers", "alice.json"))).toBe(false)
      const rows = yield* sql<{ readonly host: string; readonly personality: string }>`SELECT host, personality FROM city_peers`
      expect(rows.map((row) => [row.host, row.personality])).toEqual([["web-01", "alice"]])
      const listed = JSON.parse((yield* city(["peer", "list", "--json"], { root: host.w.root })).stdout) as {
        readonly peers: ReadonlyArray<{ readonly peer: string }>
      }
      expect(listed.peers.map((p) => p.peer)).toEqual(["alice"])

      // The verb: owed in the host's store, applied by the verb itself (the endpoint is idle).
      const reloaded = yield* cityProcess(["reload", "alice"], { root: host.w.root })
      expect(reloaded.stdout).toContain("claude-alice runtime=applied")
      expect(yield* host.starts).toHaveLength(1)
      expect(yield* settled("web-01")).toBe(true)
      // An edit: owed by the daemon's watcher, applied by its worker, once.
      yield* host.owe
      yield* eventually(Effect.map(host.starts, (s) => s.length === 2), 60_000)
      yield* eventually(settled("web-01"), 30_000)
      const lines = yield* host.lines
      expect(lines.filter((l) => l.startsWith("start"))).toHaveLength(2)
      oneAtATime(lines)

      // The fleet, as this host shows it: on its status page (the document and the HTML), and by
      // `city status`.
      const fleetOf = (document: unknown) => (document as { readonly fleet: StatusFleet | null }).fleet
      const served = (path: string) => Effect.promise(() => fetch(new URL(path, page)).then((r) => r.text()))
      // Read at most every 5 s: it shows the owed reload settled a little after the database does.
      const hostsOnPage = Effect.map(served("/api/status"), (text) =>
        fleetOf(JSON.parse(text))?.hosts.map((h) => [h.host, h.up, h.peers, h.endpoints, h.owed_reloads]))
      yield* eventually(Effect.map(hostsOnPage, (hosts) => JSON.stringify(hosts) === JSON.stringify([["web-01", true, 1, 1, 0]])), 30_000)
      expect(fleetOf(JSON.parse(yield* served("/api/status")))?.host).toBe("web-01")
      expect(yield* served("/")).toMatch(/<tr data-host="web-01" data-up="true" data-this-host="">/)
      const metrics = yield* served("/metrics")
      expect(metrics).toMatch(/^city_fleet_host_up\{host="web-01"\} 1$/m)
      expect(metrics).toMatch(/^city_fleet_endpoints\{host="web-01"\} 1$/m)
      expect(metrics).toMatch(/^city_fleet_reloads_owed\{host="web-01"\} 0$/m)
      expect(metrics).toMatch(/^# TYPE effect_cluster_entities gauge$/m)
      // `@effect/cluster`'s runner-health check runs: its singleton lives in the cluster's own shard
      // group, which the host's runner serves (ClusterRunner.ts).
      expect(metrics).toMatch(/^effect_cluster_singletons 1$/m)
      const status = yield* city(["status", "--json"], { root: host.w.root })
      expect(status.code).toBe(0)
      expect(fleetOf(JSON.parse(status.stdout))).toMatchObject({ host: "web-01", hosts: [{ host: "web-01", up: true, endpoints: 1 }] })
      expect((yield* city(["status"], { root: host.w.root })).stdout).toContain("fleet: this is host web-01; 1 host(s), 1 up")
      yield* daemon.kill("SIGTERM")
      expect((yield* Deferred.await(daemon.exited)).code).toBe(0)
    }).pipe(Effect.provide(NodeContext.layer)), 180_000)

  it.scopedLive("a sweep over three hosts with one down: the others' calls run, the silent host's endpoints are failed after the call timeout; each outcome names its host", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { context, sql, url } = yield* fleet
      const hosts = ["web-01", "web-02", "web-03"] as const
      // alice on two hosts: two endpoints, told apart by their host.
      const personalities = { "web-01": "alice", "web-02": "alice", "web-03": "carol" } as const
      const roots = yield* Effect.forEach(hosts, () => hostRoot)
      const daemons = yield* Effect.forEach(hosts, (name, i) =>
        Effect.flatMap(freePort, (port) =>
          startDaemon(roots[i]!.w.root, roots[i]!.w.base, name, [
            "--cluster",
            url,
            "--cluster-host",
            name,
            "--cluster-address",
            `127.0.0.1:${port}`
          ])))
      yield* eventually(
        Effect.map(
          Effect.orElseSucceed(sql<{ readonly host: string }>`SELECT host FROM city_hosts`, () => []),
          (rows) => rows.length === 3
        ),
        60_000
      )
      for (const [i, name] of hosts.entries()) {
        const personality = personalities[name]
        yield* sql`INSERT INTO city_peers (host, personality, peer) VALUES (${name}, ${personality}, ${
          JSON.stringify({ schema: 1, personality, cwd: roots[i]!.w.work, runtimes: ["claude"], default_runtime: "claude" })
        })`
      }
      const journal = join(roots[0]!.w.base, "journal")
      const command = yield* provisioner(roots[0]!.w.bin, "stamp", journal)
      const hostConfig = JSON.parse(yield* fs.readFileString(join(roots[0]!.w.root, "host.json")))
      const stores = yield* Layer.build(
        Layer.mergeAll(SqlCapabilities.layer, SqlHosts.layer).pipe(
          Layer.provideMerge(Layer.succeed(RuntimeProfiles.RuntimeProfiles, RuntimeProfiles.fromConfig(hostConfig))),
          Layer.provideMerge(Layer.succeedContext(context)),
          Layer.provideMerge(NodeContext.layer)
        )
      )
      yield* Effect.flatMap(Capabilities, (c) => c.store(Schema.decodeUnknownSync(Declaration)(declaration({ name: "stamp", runtimes: ["claude"], command })))).pipe(
        Effect.provide(stores)
      )
      const revision = Option.getOrThrow(yield* SqlCapabilities.revision("stamp").pipe(Effect.provide(stores)))
      // web-03 goes down.
      yield* daemons[2]!.kill("SIGTERM")
      yield* Deferred.await(daemons[2]!.exited)

      const calls = yield* Layer.build(ClusterFleetCalls.layer.pipe(Layer.provide(Layer.succeedContext(stores))))
      // The client learns the runners' shards (it refreshes them every 3 s) before the timed sweep.
      yield* Effect.flatMap(FleetCalls, (fleetCalls) =>
        Effect.forEach(["web-01", "web-02"] as const, (name) =>
          fleetCalls.call(
            { host: name, runtime: "claude", personality: personalities[name] },
            { verb: "sync", capability: "stamp", revision: "warm-up" }
          ))).pipe(Effect.provide(calls))
      const before = (yield* journalOf(journal)).length
      const report = yield* Sweep.run({ verb: "register", capability: "stamp", revision: String(revision) }).pipe(
        Effect.provide(Sweep.layer({ callTimeout: "5 seconds" }).pipe(Layer.provideMerge(WorkflowEngine.layerMemory))),
        Effect.provide(calls)
      )
      expect(report.verdict).toBe("failed")
      expect(report.outcomes.map((o) => [o.host, o.personality, o.state])).toEqual([
        ["web-01", "alice", "ok"],
        ["web-02", "alice", "ok"],
        ["web-03", "carol", "failed"]
      ])
      expect(report.outcomes[2]!.detail).toContain("web-03")
      const made = (yield* journalOf(journal)).slice(before).map((call) => call.args[1])
      expect([...made].sort()).toEqual(["alice", "alice"])

      // The verb on the fleet: stored for the fleet, swept on every host by a host's runner, printed
      // as on one host, exit 1 for the silent host's endpoint.
      const file = yield* writeJson(roots[0]!.w.base, "stamp2.json", declaration({ name: "stamp2", runtimes: ["claude"], command }))
      const registered = yield* city(
        ["capability", "register", file, "--cluster", url, "--timeout-ms", "5000", "--json"],
        { root: roots[0]!.w.root }
      )
      expect(registered.code).toBe(1)
      // The verb's document, each outcome with its `host` (docs/cli.md, "--json fields").
      const sweep = Schema.decodeUnknownSync(Schema.parseJson(Json.documents["capability register"]), { onExcessProperty: "error" })(
        registered.stdout
      )
      expect(sweep.outcomes.map((o) => [o.host, o.peer, o.state])).toEqual([
        ["web-01", "alice", "ok"],
        ["web-02", "alice", "ok"],
        ["web-03", "carol", "failed"]
      ])
      // The table: a HOST column, one row per host's endpoint; the failure names its host.
      const synced = yield* city(["capability", "sync", "stamp2", "--cluster", url, "--timeout-ms", "5000"], { root: roots[0]!.w.root })
      expect(synced.code).toBe(1)
      expect(synced.stdout).toMatch(/^HOST\s+CAPABILITY\s+PEER\s+RUNTIME\s/m)
      expect(synced.stdout).toMatch(/^web-01\s+stamp2\s+alice\s+claude\s+sweep-on\s+ok\s/m)
      expect(synced.stdout).toMatch(/^web-02\s+stamp2\s+alice\s+claude\s+sweep-on\s+ok\s/m)
      expect(synced.stdout).toMatch(/^web-03\s+stamp2\s+carol\s+claude\s+sweep-on\s+failed\s/m)
      expect(synced.stdout).toContain("stamp2 peer carol runtime claude on host web-03: failed")

      // The fleet's status: three hosts, web-03 down, one peer each.
      const status = yield* city(["fleet", "--cluster", url, "--json"], {})
      expect(status.code).toBe(0)
      const document = JSON.parse(status.stdout) as { readonly hosts: ReadonlyArray<Record<string, unknown>> }
      expect(document.hosts.map((h) => [h["host"], h["up"], h["peers"], h["endpoints"]])).toEqual([
        ["web-01", true, 1, 1],
        ["web-02", true, 1, 1],
        ["web-03", false, 1, 1]
      ])
      const plain = yield* city(["fleet", "--cluster", url], {})
      expect(plain.stdout).toMatch(/web-03\s+down/)
    }).pipe(Effect.provide(NodeContext.layer)), 180_000)

  it.scopedLive("three hosts, peers imported from their files: one daemon killed with SIGKILL mid-reload, one stopped with SIGSTOP mid-reload past the lock expiry while city reload asks again: every owed reload applied exactly once after its request, never two at once", () =>
    Effect.gen(function*() {
      const { announced, settled, sql, url } = yield* fleet
      const hosts = ["web-01", "web-02", "web-03"] as const
      const roots = yield* Effect.forEach(hosts, () => hostRoot)
      // Each host's alice is a peer file from before the fleet: the first start imports it.
      for (const [i, name] of hosts.entries()) {
        const port = yield* freePort
        yield* roots[i]!.configure({ url, host: name, address: `127.0.0.1:${port}` })
        yield* seedPeer(roots[i]!.w.root, "alice", roots[i]!.w.work, ["claude"])
      }
      const start = (i: number, name: string) => startDaemon(roots[i]!.w.root, roots[i]!.w.base, name)
      const daemons = yield* Effect.forEach(hosts, (name, i) => start(i, name))
      yield* announced(3)
      yield* eventually(
        Effect.map(Effect.orElseSucceed(sql<{ readonly n: number }>`SELECT COUNT(*) AS n FROM city_peers`, () => []), (r) => Number(r[0]?.n) === 3),
        60_000
      )
      // web-02's and web-03's reloads take 3 s; each host is owed one reload by an edit.
      yield* roots[1]!.setDelay(3)
      yield* roots[2]!.setDelay(3)
      yield* Effect.forEach(roots, (root) => root.owe, { concurrency: "unbounded", discard: true })
      yield* eventually(Effect.map(Effect.all([roots[1]!.starts, roots[2]!.starts]), ([a, b]) => a.length === 1 && b.length === 1), 60_000)

      // web-02: killed in the middle of its reload, started again.
      yield* daemons[1]!.kill("SIGKILL")
      // web-03: frozen in the middle of its reload, longer than the lock expiry (15 s, refreshed
      // every 5 s: its shards are lost by 15 s), so its runner loses its shards while alive. Its
      // reload's command runs on (its own process group) and ends meanwhile.
      yield* daemons[2]!.kill("SIGSTOP")
      const frozenAt = Date.now()
      yield* Deferred.await(daemons[1]!.exited)
      yield* roots[1]!.setDelay(0)
      yield* roots[2]!.setDelay(0)
      // A request while web-03's daemon is frozen: its claim is a live process's, so the verb
      // applies nothing and leaves the reload owed: exactly one more, after the claimed one.
      const asked = yield* cityProcess(["reload", "alice"], { root: roots[2]!.w.root })
      expect(asked.code, asked.stderr).toBe(0)
      expect(asked.stdout).toContain("claude-alice runtime=pending")
      const again = yield* start(1, "web-02-again")
      yield* Effect.sleep(Math.max(0, frozenAt + 17_000 - Date.now()))
      yield* daemons[2]!.kill("SIGCONT")

      // Every host's owed reload is applied: the records settle.
      for (const name of hosts) yield* eventually(settled(name), 90_000)
      // web-01: exactly once.
      const first = yield* roots[0]!.lines
      expect(first.filter((l) => l.startsWith("start"))).toHaveLength(1)
      oneAtATime(first)
      // web-02: the cut reload, then exactly one more, never two at once.
      const second = yield* roots[1]!.lines
      const cut = second.filter((l) => l.startsWith("start")).map((l) => l.split(" ")[1]!)
      expect(cut).toHaveLength(2)
      oneAtATime(second, cut.slice(0, 1))
      // web-03: the reload it was frozen in, finished once, then exactly one for the request made
      // during the freeze; never two at once.
      const third = yield* roots[2]!.lines
      expect(third.filter((l) => l.startsWith("start"))).toHaveLength(2)
      expect(third.filter((l) => l.startsWith("end"))).toHaveLength(2)
      oneAtATime(third)
      // No daemon exited but the one killed; each stops cleanly.
      for (const d of [daemons[0]!, again, daemons[2]!]) {
        expect(yield* Deferred.isDone(d.exited)).toBe(false)
        yield* d.kill("SIGTERM")
        expect((yield* Deferred.await(d.exited)).code).toBe(0)
      }
    }).pipe(Effect.provide(NodeContext.layer)), 180_000)
})
