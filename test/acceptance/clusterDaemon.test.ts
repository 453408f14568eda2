/**
 * `city daemon --cluster` as real processes on PostgreSQL (docs/cluster.md, "Running a fleet"): a
 * host's daemon announces itself and serves its endpoints' messages; a client elsewhere owes a
 * reload in the host's store and sends it: the endpoint's reload command runs once, a resend of the
 * same message runs nothing. Then the daemon is killed with SIGKILL in the middle of a reload and
 * started again: the owed reload is applied exactly once after it took its shards back, and no
 * reload command of the endpoint ever runs while another one does. And a sweep over three hosts,
 * one of them down: the two others run their endpoints' calls, the third's endpoints are `failed`
 * after the call timeout, the verdict is `failed`, nothing hangs. And three runner processes with
 * reloads owed on each, one killed with SIGKILL in the middle of its reload and started again:
 * every owed reload applied exactly once, never two of one endpoint at once. The restarted host
 * shows the fleet on its status page and in `city status`.
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
import * as ClusterRunner from "../../src/services/cluster/ClusterRunner.ts"
import { EndpointEntity, entityIdOf } from "../../src/services/cluster/EndpointEntity.ts"
import * as SqlReloads from "../../src/services/cluster/SqlReloads.ts"
import { eventually } from "../fixtures.ts"
import { startDaemon } from "../live/daemonProcess.ts"
import { startStatusDaemon } from "../status/statusWorld.ts"
import type { StatusFleet } from "../../src/schema/StatusDocument.ts"
import { world } from "../live/world.ts"
import { freshDatabase } from "../support/pgDatabase.ts"
import * as WorkflowEngine from "@effect/workflow/WorkflowEngine"
import { Capabilities } from "../../src/services/capabilities/Capabilities.ts"
import * as RuntimeProfiles from "../../src/services/capabilities/RuntimeProfiles.ts"
import * as ClusterFleetCalls from "../../src/services/cluster/ClusterFleetCalls.ts"
import * as SqlCapabilities from "../../src/services/cluster/SqlCapabilities.ts"
import * as SqlHosts from "../../src/services/cluster/SqlHosts.ts"
import * as Sweep from "../../src/services/cluster/Sweep.ts"
import { FleetCalls } from "../../src/services/cluster/FleetCalls.ts"
import { city, declaration, journalOf, provisioner, sh, writeJson } from "./cityCli.ts"
import { freePort } from "../support/freePort.ts"

const key = { runtime: "claude", personality: "alice" }
const alice = { host: "web-01", ...key }

/**
 * A host's root whose `claude` endpoints run through commands: `status` says idle, `reload` writes
 * `start <pid>` and `end <pid>` lines around a sleep of as many seconds as the file `delay` says.
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
  yield* writeJson(w.root, "host.json", {
    schema: 1,
    agent_runtimes: ["claude"],
    channel_runtimes: [],
    profiles: { claude: { commands: { status: cmd(status), reload: cmd(reload) } } }
  })
  const lines = Effect.map(
    Effect.orElseSucceed(fs.readFileString(runs), () => ""),
    (text) => text.split("\n").filter((line) => line !== "")
  )
  return { w, lines, setDelay: (seconds: number) => fs.writeFileString(delay, String(seconds)) }
})

/** The fleet's database, a client of it, and this test's side of the fleet. */
const fleet = Effect.gen(function*() {
  const url = yield* freshDatabase(inject("postgresUrl"))
  const pg = PgClient.layer({ url: Redacted.make(url) })
  const context = yield* Layer.build(ClusterRunner.clientLayer.pipe(Layer.provideMerge(pg)))
  const sql = Context.get(context, SqlClient.SqlClient)
  return { url, context, sql }
})

describe("city daemon --cluster, real processes on PostgreSQL", () => {
  it.scopedLive("a client's Reload runs the endpoint's reload on its host once; a SIGKILL mid-reload, then a restart (configured by host.json): applied exactly once, never two at once", () =>
    Effect.gen(function*() {
      const host = yield* hostRoot
      const { context, sql, url } = yield* fleet
      const port = yield* freePort
      const args = ["--cluster", url, "--cluster-host", "web-01", "--cluster-address", `127.0.0.1:${port}`]
      const first = yield* startDaemon(host.w.root, host.w.base, "daemon-1", args)
      // Started: the host is announced (the tables exist once it is).
      yield* eventually(
        Effect.map(
          Effect.orElseSucceed(sql<{ readonly host: string }>`SELECT host FROM city_hosts`, () => []),
          (rows) => rows.some((row) => row.host === "web-01")
        ),
        60_000
      )
      // The peer, by the verb, on a host whose host.json names the fleet: written to its rows.
      const fs = yield* FileSystem.FileSystem
      const hostJson = join(host.w.root, "host.json")
      const config = JSON.parse(yield* fs.readFileString(hostJson)) as Record<string, unknown>
      yield* fs.writeFileString(
        hostJson,
        JSON.stringify({ ...config, cluster: { url, host: "web-01", address: `127.0.0.1:${port}` } })
      )
      const created = yield* city(["peer", "create", "alice", "--cwd", host.w.work, "--runtime", "claude"], { root: host.w.root })
      expect(created.code).toBe(0)
      expect(yield* fs.exists(join(host.w.root, "peers", "alice.json"))).toBe(false)
      const rows = yield* sql<{ readonly host: string; readonly personality: string }>`SELECT host, personality FROM city_peers`
      expect(rows.map((row) => [row.host, row.personality])).toEqual([["web-01", "alice"]])
      const listed = JSON.parse((yield* city(["peer", "list", "--json"], { root: host.w.root })).stdout) as {
        readonly peers: ReadonlyArray<{ readonly peer: string }>
      }
      expect(listed.peers.map((p) => p.peer)).toEqual(["alice"])
      const reloads = yield* SqlReloads.make("web-01").pipe(Effect.provide(context))
      const send = (yield* Effect.provide(EndpointEntity.client, context))(entityIdOf(alice))

      yield* reloads.request([key], "sync")
      // The message drains the endpoint (`applied`), unless the daemon's own pass over its owed
      // work got there first (`none`: the message found nothing owed); either way, once.
      const answer = yield* send.Reload({ id: "first", reason: "sync" })
      expect(["applied", "none"]).toContain(answer.state)
      expect((yield* host.lines).filter((l) => l.startsWith("start"))).toHaveLength(1)
      expect(yield* send.Reload({ id: "first", reason: "sync" })).toEqual(answer)
      expect((yield* host.lines).filter((l) => l.startsWith("start"))).toHaveLength(1)

      // A reload that takes 3 s; the daemon dies in the middle of it.
      yield* host.setDelay(3)
      yield* reloads.request([key], "sync")
      yield* send.Reload({ id: "second", reason: "sync" }, { discard: true })
      yield* eventually(Effect.map(host.lines, (l) => l.filter((x) => x.startsWith("start")).length === 2), 30_000)
      yield* first.kill("SIGKILL")
      yield* Deferred.await(first.exited)
      yield* host.setDelay(0)
      // Started again with no flags but a status page: host.json names the fleet.
      const { daemon: second, url: page } = yield* startStatusDaemon(host.w, "daemon-2")
      // The owed reload is applied after the restart: the record settles.
      yield* eventually(Effect.map(reloads.get(key), Option.isNone), 90_000)
      const lines = yield* host.lines
      const starts = lines.filter((l) => l.startsWith("start"))
      expect(starts).toHaveLength(3) // the first reload, the one cut by the kill, exactly one after the restart
      // Never two at once: each start follows the end of the one before, or that one's process
      // was ended (the cut reload's command, ended by the restarted daemon before its own run).
      const pids = starts.map((l) => l.split(" ")[1])
      const third = lines.indexOf(`start ${pids[2]}`)
      const cutEnd = lines.indexOf(`end ${pids[1]}`)
      expect(cutEnd === -1 || cutEnd < third).toBe(true)
      expect(lines.indexOf(`end ${pids[2]}`)).toBeGreaterThan(third)

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
      const status = yield* city(["status", "--json"], { root: host.w.root })
      expect(status.code).toBe(0)
      expect(fleetOf(JSON.parse(status.stdout))).toMatchObject({ host: "web-01", hosts: [{ host: "web-01", up: true, endpoints: 1 }] })
      expect((yield* city(["status"], { root: host.w.root })).stdout).toContain("fleet: this is host web-01; 1 host(s), 1 up")
      yield* second.kill("SIGTERM")
      expect((yield* Deferred.await(second.exited)).code).toBe(0)
    }).pipe(Effect.provide(NodeContext.layer)), 180_000)

  it.scopedLive("a sweep over three hosts with one down: the others' calls run, the silent host's endpoints are failed after the call timeout", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { context, sql, url } = yield* fleet
      const hosts = ["web-01", "web-02", "web-03"] as const
      const personalities = { "web-01": "alice", "web-02": "bob", "web-03": "carol" } as const
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
        ["web-02", "bob", "ok"],
        ["web-03", "carol", "failed"]
      ])
      expect(report.outcomes[2]!.detail).toContain("web-03")
      const made = (yield* journalOf(journal)).slice(before).map((call) => call.args[1])
      expect([...made].sort()).toEqual(["alice", "bob"])

      // The verb on the fleet: stored for the fleet, swept on every host by a host's runner, printed
      // as on one host, exit 1 for the silent host's endpoint.
      const file = yield* writeJson(roots[0]!.w.base, "stamp2.json", declaration({ name: "stamp2", runtimes: ["claude"], command }))
      const registered = yield* city(
        ["capability", "register", file, "--cluster", url, "--timeout-ms", "5000", "--json"],
        { root: roots[0]!.w.root }
      )
      expect(registered.code).toBe(1)
      const sweep = JSON.parse(registered.stdout) as { readonly outcomes: ReadonlyArray<Record<string, unknown>> }
      expect(sweep.outcomes.map((o) => [o["peer"], o["state"]])).toEqual([["alice", "ok"], ["bob", "ok"], ["carol", "failed"]])

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

  it.scopedLive("three runner processes, one killed with SIGKILL mid-reload and started again: every owed reload applied exactly once, never two at once", () =>
    Effect.gen(function*() {
      const { context, sql, url } = yield* fleet
      const hosts = ["web-01", "web-02", "web-03"] as const
      const roots = yield* Effect.forEach(hosts, () => hostRoot)
      const ports = yield* Effect.forEach(hosts, () => freePort)
      const argsOf = (i: number) => ["--cluster", url, "--cluster-host", hosts[i]!, "--cluster-address", `127.0.0.1:${ports[i]}`]
      const daemons = yield* Effect.forEach(hosts, (name, i) => startDaemon(roots[i]!.w.root, roots[i]!.w.base, name, argsOf(i)))
      yield* eventually(
        Effect.map(
          Effect.orElseSucceed(sql<{ readonly host: string }>`SELECT host FROM city_hosts`, () => []),
          (rows) => rows.length === 3
        ),
        60_000
      )
      for (const [i, name] of hosts.entries()) {
        yield* sql`INSERT INTO city_peers (host, personality, peer) VALUES (${name}, ${"alice"}, ${
          JSON.stringify({ schema: 1, personality: "alice", cwd: roots[i]!.w.work, runtimes: ["claude"], default_runtime: "claude" })
        })`
      }
      const send = yield* Effect.provide(EndpointEntity.client, context)
      // web-02's reload takes 3 s; each host owes its endpoint one reload, sent as one message.
      yield* roots[1]!.setDelay(3)
      for (const name of hosts) {
        yield* Effect.flatMap(SqlReloads.make(name), (store) => store.request([key], "sync")).pipe(Effect.provide(context))
        yield* send(entityIdOf({ host: name, ...key })).Reload({ id: `once-${name}`, reason: "sync" }, { discard: true })
      }
      const starts = (i: number) => Effect.map(roots[i]!.lines, (l) => l.filter((x) => x.startsWith("start")))
      yield* eventually(Effect.map(starts(1), (s) => s.length === 1), 30_000)
      yield* daemons[1]!.kill("SIGKILL")
      yield* Deferred.await(daemons[1]!.exited)
      yield* roots[1]!.setDelay(0)
      yield* startDaemon(roots[1]!.w.root, roots[1]!.w.base, "web-02-again", argsOf(1))
      // Every host's owed reload is applied: the records settle.
      for (const name of hosts) {
        const store = yield* SqlReloads.make(name).pipe(Effect.provide(context))
        yield* eventually(Effect.map(store.get(key), Option.isNone), 90_000)
      }
      // web-01 and web-03: exactly once. web-02: the cut reload, then exactly one more, never two at once.
      for (const i of [0, 2]) {
        const lines = yield* roots[i]!.lines
        expect(lines.filter((l) => l.startsWith("start"))).toHaveLength(1)
        expect(lines.filter((l) => l.startsWith("end"))).toHaveLength(1)
      }
      const lines = yield* roots[1]!.lines
      const pids = lines.filter((l) => l.startsWith("start")).map((l) => l.split(" ")[1])
      expect(pids).toHaveLength(2)
      const cutEnd = lines.indexOf(`end ${pids[0]}`)
      const again = lines.indexOf(`start ${pids[1]}`)
      expect(cutEnd === -1 || cutEnd < again).toBe(true)
      expect(lines.indexOf(`end ${pids[1]}`)).toBeGreaterThan(again)
    }).pipe(Effect.provide(NodeContext.layer)), 180_000)
})
