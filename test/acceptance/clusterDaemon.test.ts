/**
 * `city daemon --cluster` as real processes on PostgreSQL (docs/cluster.md, "Running a fleet"): a
 * host's daemon announces itself and serves its endpoints' messages; a client elsewhere owes a
 * reload in the host's store and sends it: the endpoint's reload command runs once, a resend of the
 * same message runs nothing. Then the daemon is killed with SIGKILL in the middle of a reload and
 * started again: the owed reload is applied exactly once after it took its shards back, and no
 * reload command of the endpoint ever runs while another one does.
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
import { createServer } from "node:net"
import { join } from "node:path"
import * as ClusterRunner from "../../src/services/cluster/ClusterRunner.ts"
import { EndpointEntity, entityIdOf } from "../../src/services/cluster/EndpointEntity.ts"
import * as SqlReloads from "../../src/services/cluster/SqlReloads.ts"
import { eventually } from "../fixtures.ts"
import { startDaemon } from "../live/daemonProcess.ts"
import { world } from "../live/world.ts"
import { freshDatabase } from "../support/pgDatabase.ts"
import { sh, writeJson } from "./cityCli.ts"

const freePort = Effect.async<number>((resume) => {
  const server = createServer()
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})

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
  it.scopedLive("a client's Reload runs the endpoint's reload on its host once; a SIGKILL mid-reload, then a restart: applied exactly once, never two at once", () =>
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
      yield* sql`INSERT INTO city_peers (host, personality, peer) VALUES (${"web-01"}, ${"alice"}, ${
        JSON.stringify({ schema: 1, personality: "alice", cwd: host.w.work, runtimes: ["claude"], default_runtime: "claude" })
      })`
      const reloads = yield* SqlReloads.make("web-01").pipe(Effect.provide(context))
      const send = (yield* Effect.provide(EndpointEntity.client, context))(entityIdOf(alice))

      yield* reloads.request([key], "sync")
      expect(yield* send.Reload({ id: "first", reason: "sync" })).toEqual({ state: "applied" })
      expect((yield* host.lines).filter((l) => l.startsWith("start"))).toHaveLength(1)
      expect(yield* send.Reload({ id: "first", reason: "sync" })).toEqual({ state: "applied" })
      expect((yield* host.lines).filter((l) => l.startsWith("start"))).toHaveLength(1)

      // A reload that takes 3 s; the daemon dies in the middle of it.
      yield* host.setDelay(3)
      yield* reloads.request([key], "sync")
      yield* send.Reload({ id: "second", reason: "sync" }, { discard: true })
      yield* eventually(Effect.map(host.lines, (l) => l.filter((x) => x.startsWith("start")).length === 2), 30_000)
      yield* first.kill("SIGKILL")
      yield* Deferred.await(first.exited)
      yield* host.setDelay(0)
      const second = yield* startDaemon(host.w.root, host.w.base, "daemon-2", args)
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
      yield* second.kill("SIGTERM")
      expect((yield* Deferred.await(second.exited)).code).toBe(0)
    }).pipe(Effect.provide(NodeContext.layer)), 180_000)
})
