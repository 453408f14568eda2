/**
 * A sweep across a fleet whose PostgreSQL database is lost (docs/cluster.md, "Faults"), through
 * the real `city` binary and a real `city daemon --cluster` host:
 * - lost while the verb writes the sweep's request (the write waits on a lock the test holds, then
 *   every connection of the verb is cut, its server sessions ended, new ones refused): the verb
 *   ends with one line, `city: error: the cluster cannot be used: …` naming the sweep and why,
 *   exit 1 (with `--json`, the envelope of `ClusterUnavailable`); no call was made, and the verb
 *   run again once the database answers sweeps a new revision;
 * - lost for 3 s while the host runs the sweep's one call (a provision that waits for a file; every
 *   connection, the host's and the verb's, cut and refused): the verb waits; once the database
 *   answers, the call ends, the sweep completes where it was (the call made once) and the verb
 *   prints its report, exit 0; the host's daemon goes on;
 * - lost when the host saves the answer of the sweep's call, or the sweep's report (the table or
 *   row it writes locked, and each write that waits on it has its session ended, for 2.5 s):
 *   `@effect/cluster`'s 5 tries fail, the host keeps the answer and saves it once the database
 *   answers, saying so in its log; the verb prints the report, exit 0, the call made once. Killed
 *   (SIGKILL) while it keeps a call's answer, the daemon started again makes the call again.
 */
import { describe, expect, inject, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { join } from "node:path"
import { eventually } from "../fixtures.ts"
import { startDaemon } from "../support/daemonProcess.ts"
import { freePort } from "../support/freePort.ts"
import { freshDatabase } from "../support/pgDatabase.ts"
import { pgProxy, viaPort } from "../support/pgProxy.ts"
import { awaitLog, logLines } from "../support/pluginDaemon.ts"
import { world } from "../support/world.ts"
import { cityProcess, declaration, journalOf, provisioner, seedPeer, sh, writeJson } from "./cityCli.ts"

/** A sweep's document with `--json`: each outcome's host, peer and state. */
type SweepDocument = { readonly outcomes: ReadonlyArray<{ readonly host: string; readonly peer: string; readonly state: string }> }

/**
 * A fresh database, a proxy to it that the test can cut, and one host, web-01 (through the proxy
 * when `hostViaProxy`), whose alice (claude) is imported from her file at its start; a capability
 * `probe` whose provision journals its call after `body`; `register` runs the real verb through
 * the proxy.
 */
const fleetOfOne = (options: { readonly hostViaProxy: boolean; readonly body: (base: string) => string }) =>
  Effect.gen(function*() {
    const w = yield* world
    const direct = yield* freshDatabase(inject("postgresUrl"))
    const port = yield* freePort
    const gate = { admitting: true }
    const proxy = yield* pgProxy(port, new URL(direct), () => gate.admitting)
    const viaProxy = viaPort(new URL(direct), port)
    const status = yield* sh(join(w.bin, "status"), ["echo idle"])
    const reload = yield* sh(join(w.bin, "reload"), ["exit 0"])
    const cmd = (command: string) => ({ command, args: ["{personality}", "{runtime}"] })
    yield* writeJson(w.root, "host.json", {
      schema: 1,
      agent_runtimes: ["claude"],
      channel_runtimes: [],
      profiles: { claude: { commands: { status: cmd(status), reload: cmd(reload) } } }
    })
    yield* seedPeer(w.root, "alice", w.work, ["claude"])
    const daemonPort = yield* freePort
    // The host's daemon (its log named `log`), started again by `restart` at the same address.
    const startHost = (log: string) =>
      Effect.tap(
        startDaemon(w.root, w.base, log, [
          "--cluster",
          options.hostViaProxy ? viaProxy : direct,
          "--cluster-host",
          "web-01",
          "--cluster-address",
          `127.0.0.1:${daemonPort}`
        ]),
        (started) => awaitLog(started, "city daemon started")
      )
    const daemon = yield* startHost("web-01")
    const journal = join(w.base, "journal")
    const command = yield* provisioner(w.bin, "probe", journal, options.body(w.base))
    const file = yield* writeJson(w.base, "probe.json", declaration({ name: "probe", runtimes: ["claude"], command }))
    const register = cityProcess(["capability", "register", file, "--cluster", viaProxy, "--timeout-ms", "30000", "--json"], {
      root: w.root
    })
    const sql = yield* Effect.provide(SqlClient.SqlClient, yield* Layer.build(PgClient.layer({ url: Redacted.make(direct) })))
    return { w, gate, proxy, daemon, restart: startHost("web-01-again"), register, sql, calls: journalOf(journal) }
  })

/** A provision that waits for the file `gate` in the test's folder (at most 30 s): the sweep's call is in flight on the host. */
const untilGate = (base: string) =>
  `i=0; while [ ! -e '${join(base, "gate")}' ] && [ "$i" -lt 300 ]; do sleep 0.1; i=$((i+1)); done`

/** A fleet of one host whose provision waits for the gate, and the verb forked: its call is in flight on the host. */
const callInFlight = (hostViaProxy: boolean) =>
  Effect.gen(function*() {
    const fleet = yield* fleetOfOne({ hostViaProxy, body: untilGate })
    const verb = yield* Effect.fork(fleet.register)
    yield* eventually(Effect.map(fleet.calls, (made) => made.length === 1), 30_000)
    return { ...fleet, verb }
  })

/**
 * A sweep of one call whose answer the host cannot save for 2.5 s: `lock` (taken while the call
 * runs) makes the host's write of the answer of `tag` wait, and each such write (`writes`, a LIKE
 * pattern of its query) that waits has its session ended at once, so every attempt fails as if the
 * server were gone (`@effect/cluster` itself tries 5 times, 200 ms apart); then the lock goes.
 */
const answerCut = (cut: {
  readonly lock: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, unknown>
  readonly writes: string
  readonly tag: "activity" | "run"
  /** The host's daemon killed (SIGKILL) while it keeps the answer, then started again. */
  readonly killed?: boolean
}) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const { calls, daemon, restart, sql, verb, w } = yield* callInFlight(false)
    const locked = yield* Deferred.make<void>()
    const release = yield* Deferred.make<void>()
    const holder = yield* Effect.fork(sql.withTransaction(Effect.gen(function*() {
      yield* Effect.orDie(cut.lock(sql))
      yield* Deferred.succeed(locked, undefined)
      yield* Deferred.await(release)
    })))
    yield* Deferred.await(locked)
    yield* fs.writeFileString(join(w.base, "gate"), "")
    const writers = sql<{ readonly pid: number }>`SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock'
      AND query LIKE ${`%${cut.writes}%`} AND pid <> pg_backend_pid()`
    yield* eventually(Effect.map(Effect.orDie(writers), (rows) => rows.length > 0), 30_000)
    let ended = 0
    const until = Date.now() + 2_500
    while (Date.now() < until) {
      for (const { pid } of yield* Effect.orDie(writers)) {
        yield* Effect.orDie(sql`SELECT pg_terminate_backend(${pid})`)
        ended++
      }
      yield* Effect.sleep("25 millis")
    }
    expect(ended).toBeGreaterThanOrEqual(5)
    if (cut.killed === true) {
      // The daemon that keeps the answer dies; the database answers again; the daemon is started again.
      yield* daemon.kill("SIGKILL")
      yield* Deferred.await(daemon.exited)
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)
      const backAt = Date.now()
      const again = yield* restart
      const done = yield* Fiber.join(verb).pipe(Effect.timeout("20 seconds"), Effect.orDie)
      expect(done.code, done.stderr).toBe(0)
      expect(Date.now() - backAt).toBeLessThan(10_000)
      const report = JSON.parse(done.stdout) as SweepDocument
      expect(report.outcomes.map((o) => [o.host, o.peer, o.state])).toEqual([["web-01", "alice", "ok"]])
      // The answer died with the daemon: the call was made again (at least once, not exactly once).
      expect((yield* calls).map((call) => call.args.slice(0, 3))).toEqual([
        ["provision-peer", "alice", "claude"],
        ["provision-peer", "alice", "claude"]
      ])
      expect(yield* Deferred.isDone(again.exited)).toBe(false)
      return
    }
    // The database answers again.
    yield* Deferred.succeed(release, undefined)
    yield* Fiber.join(holder)
    const backAt = Date.now()
    const done = yield* Fiber.join(verb).pipe(Effect.timeout("20 seconds"), Effect.orDie)
    expect(done.code, done.stderr).toBe(0)
    expect(Date.now() - backAt).toBeLessThan(10_000)
    const report = JSON.parse(done.stdout) as SweepDocument
    expect(report.outcomes.map((o) => [o.host, o.peer, o.state])).toEqual([["web-01", "alice", "ok"]])
    // The call was made once: its answer was kept, not its call made again.
    expect((yield* calls).map((call) => call.args.slice(0, 3))).toEqual([["provision-peer", "alice", "claude"]])
    expect(yield* Deferred.isDone(daemon.exited)).toBe(false)
    // The host said so: one warning when the answer could not be saved, one line once it was.
    const kept = (yield* logLines(daemon, "code=cluster.answer_kept")).map((line) => line.replace(/^.*message=/, ""))
    const named = `the answer to message \\d+ \\(${cut.tag} to Workflow/effect-city/CapabilitySweep [0-9a-f]+\\)`
    expect(kept).toEqual([
      expect.stringMatching(
        new RegExp(`^"${named} could not be saved \\(.*Connection terminated unexpectedly\\): trying again until the database answers"`)
      ),
      expect.stringMatching(new RegExp(`^"${named} is saved"`))
    ])
  })

describe("a sweep across a fleet whose database is lost", () => {
  it.scopedLive("lost while the verb writes the sweep's request: one ClusterUnavailable line, exit 1, no call made; run again, the sweep completes", () =>
    Effect.gen(function*() {
      const { calls, gate, proxy, register, sql } = yield* fleetOfOne({ hostViaProxy: false, body: () => "exit 0" })
      // The sweep's request waits: the messages' table is locked against writes until released.
      const locked = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const holder = yield* Effect.fork(sql.withTransaction(Effect.gen(function*() {
        yield* sql`LOCK TABLE city_cluster_messages IN SHARE MODE`
        yield* Deferred.succeed(locked, undefined)
        yield* Deferred.await(release)
      })))
      yield* Deferred.await(locked)
      const verb = yield* Effect.fork(register)
      // The verb's session waiting on the lock: its insert of the sweep's request.
      const waiting = Effect.flatMap(proxy.serverPorts, (ports) =>
        ports.length === 0 ? Effect.succeed(false) : Effect.map(
          sql<{ readonly pid: number }>`SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock'
            AND client_port IN ${sql.in(ports)} AND query LIKE '%INSERT INTO%city_cluster_messages%'`,
          (rows) => rows.length > 0
        ))
      yield* eventually(Effect.orDie(waiting), 30_000)
      // The server goes: every connection of the verb cut, its sessions ended, no new one admitted.
      const ports = yield* proxy.serverPorts
      gate.admitting = false
      yield* proxy.cut
      yield* sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE client_port IN ${sql.in(ports)}`
      const cutAt = Date.now()
      const dropped = yield* Fiber.join(verb)
      const tookMs = Date.now() - cutAt
      const lines = dropped.stderr.split("\n").filter((line) => line !== "")
      expect([dropped.code, lines], dropped.stderr).toEqual([1, [expect.stringMatching(/^city: error: the cluster cannot be used: \S/)]])
      expect(lines[0]).toMatch(/the sweep register\/probe\/1 \(.*Connection terminated unexpectedly\); whether it started is not known: run it again/)
      expect(tookMs).toBeLessThan(5_000)
      expect(JSON.parse(dropped.stdout)).toEqual({
        ok: false,
        verb: "capability register",
        error: expect.objectContaining({ _tag: "ClusterUnavailable", message: lines[0]!.slice("city: error: ".length) })
      })
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)

      // The database answers again: the verb run again sweeps a new revision, its one call made.
      gate.admitting = true
      const again = yield* register
      expect(again.code, again.stderr).toBe(0)
      const report = JSON.parse(again.stdout) as SweepDocument
      expect(report.outcomes.map((o) => [o.host, o.peer, o.state])).toEqual([["web-01", "alice", "ok"]])
      expect((yield* calls).map((call) => call.args.slice(0, 3))).toEqual([["provision-peer", "alice", "claude"]])
    }).pipe(Effect.provide(NodeContext.layer)), 60_000)

  it.scopedLive("lost for 3 s while the host runs the sweep's call: the verb waits; the database back, the call answers and the verb prints the report, exit 0", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { calls, daemon, gate, proxy, verb, w } = yield* callInFlight(true)
      // The server goes for 3 s: every connection, the host's and the verb's, cut and refused.
      gate.admitting = false
      yield* proxy.cut
      yield* Effect.sleep("3 seconds")
      expect(Option.isNone(yield* Fiber.poll(verb))).toBe(true)
      // Back: then the call ends, and the host answers.
      gate.admitting = true
      const backAt = Date.now()
      yield* fs.writeFileString(join(w.base, "gate"), "")
      const done = yield* Fiber.join(verb)
      expect(done.code, done.stderr).toBe(0)
      expect(Date.now() - backAt).toBeLessThan(10_000)
      const report = JSON.parse(done.stdout) as SweepDocument
      expect(report.outcomes.map((o) => [o.host, o.peer, o.state])).toEqual([["web-01", "alice", "ok"]])
      // The call was made once: the sweep went on where it was.
      expect((yield* calls).map((call) => call.args.slice(0, 3))).toEqual([["provision-peer", "alice", "claude"]])
      expect(yield* Deferred.isDone(daemon.exited)).toBe(false)
    }).pipe(Effect.provide(NodeContext.layer)), 60_000)

  it.scopedLive("lost when the host saves the call's answer (each write of it cut for 2.5 s): the host keeps the answer and saves it once the database answers; the verb prints the report, exit 0, the call made once", () =>
    answerCut({
      // The replies' table locked against writes: the host's write of the call's answer waits.
      lock: (sql) => sql`LOCK TABLE city_cluster_replies IN SHARE MODE`,
      writes: "INSERT INTO%city_cluster_replies",
      tag: "activity"
    }).pipe(Effect.provide(NodeContext.layer)), 60_000)

  it.scopedLive("lost when the host saves the sweep's report (each write of it cut for 2.5 s): the host keeps it and saves it once the database answers; the verb prints it, exit 0, the call made once", () =>
    answerCut({
      // The sweep's own message locked: the host's write of the sweep's answer (its report) waits,
      // the call's answer before it is saved.
      lock: (sql) =>
        sql`SELECT id FROM city_cluster_messages WHERE entity_type = 'Workflow/effect-city/CapabilitySweep' AND tag = 'run'
          FOR UPDATE`,
      writes: "UPDATE%city_cluster_messages%SET processed",
      tag: "run"
    }).pipe(Effect.provide(NodeContext.layer)), 60_000)

  it.scopedLive("lost when the host saves the call's answer, and the host's daemon killed while it keeps it: started again, the call is made again (at least once) and the verb prints the report, exit 0", () =>
    answerCut({
      lock: (sql) => sql`LOCK TABLE city_cluster_replies IN SHARE MODE`,
      writes: "INSERT INTO%city_cluster_replies",
      tag: "activity",
      killed: true
    }).pipe(Effect.provide(NodeContext.layer)), 60_000)
})
