/**
 * A fleet's hosts seen as they are, through real `city daemon --cluster` processes and the real
 * `city` binary (docs/cluster.md, "Faults"):
 * - a daemon waits for its PostgreSQL server at start, at the client and at every later step;
 * - hosts started at once on an empty PostgreSQL database all come up (the tables are created one
 *   run at a time), and none logs a failed prune (the first prune runs once the tables exist);
 * - a host whose daemon is killed with SIGKILL, and one stopped with SIGSTOP, are `down` within
 *   20 s in `city fleet --json`, in `city status` and on another host's status page (its `fleet`,
 *   its live log, its `city_fleet_host_up`); the stopped one stays `down` while stopped and is `up`
 *   again after SIGCONT;
 * - a fleet on SQLite is one host: a second daemon on its file is refused in one line that says to
 *   use PostgreSQL, the verbs still read it, and once the first daemon is killed another starts on it.
 */
import { describe, expect, inject, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import { join } from "node:path"
import type { StatusDocument } from "../../src/schema/StatusDocument.ts"
import { type Daemon, startDaemon } from "../support/daemonProcess.ts"
import { awaitLog, textOf, within } from "../support/pluginDaemon.ts"
import { world, type World } from "../support/world.ts"
import { startStatusDaemon } from "../support/statusWorld.ts"
import { freePort } from "../support/freePort.ts"
import { freshDatabase } from "../support/pgDatabase.ts"
import { pgProxy, viaPort } from "../support/pgProxy.ts"
import { city, cityProcess, writeJson } from "./cityCli.ts"

/** The spec's bound: a dead host is `down` within this long (docs/cluster.md, "Faults"). */
const seenWithinMs = 20_000

/** A state root whose host.json runs claude as an agent, naming the fleet when `cluster` is given. */
const hostWorld = (cluster?: { readonly url: string; readonly host: string; readonly address: string }) =>
  Effect.gen(function*() {
    const w = yield* world
    yield* writeJson(w.root, "host.json", {
      schema: 1,
      agent_runtimes: ["claude"],
      channel_runtimes: [],
      profiles: {},
      ...(cluster === undefined ? {} : { cluster })
    })
    return w
  })

/** `city daemon --cluster <url>` for `host` on its own root, at a free port. */
const hostDaemon = (w: World, url: string, host: string) =>
  Effect.flatMap(freePort, (port) =>
    startDaemon(w.root, w.base, host, ["--cluster", url, "--cluster-host", host, "--cluster-address", `127.0.0.1:${port}`]))

/** Each host's state by `city fleet --cluster <url> --json`, the real binary; dies with its stderr if it fails. */
const fleetStates = (url: string) =>
  Effect.flatMap(cityProcess(["fleet", "--cluster", url, "--json"]), (run) =>
    run.code === 0
      ? Effect.succeed(new Map((JSON.parse(run.stdout) as { readonly hosts: ReadonlyArray<{ readonly host: string; readonly up: boolean }> })
        .hosts.map((h) => [h.host, h.up ? "up" : "down"])))
      : Effect.dieMessage(`city fleet exited ${run.code}: ${run.stderr}`))

/** Dies with its log if a daemon has exited (none of these may, unless killed). */
const stillRunning = (daemons: ReadonlyArray<Daemon>) =>
  Effect.forEach(daemons, (daemon) =>
    Effect.flatMap(Deferred.isDone(daemon.exited), (done) =>
      done ? Effect.flatMap(textOf(daemon.log), (log) => Effect.dieMessage(`a daemon exited:\n${log}`)) : Effect.void), {
    discard: true
  })

const served = (page: string, path: string) => Effect.promise(() => fetch(new URL(path, page)).then((r) => r.text()))

describe("a fleet's hosts as they are, real processes", () => {
  it.scopedLive("a daemon started while its PostgreSQL server does not answer waits for it, a line per attempt, and comes up once it answers", () =>
    Effect.gen(function*() {
      const target = new URL(yield* freshDatabase(inject("postgresUrl")))
      // A port where nothing listens yet; once the daemon says it waits, a proxy to the real server opens there.
      const port = yield* freePort
      const url = viaPort(target, port)
      const w = yield* hostWorld()
      const daemon = yield* hostDaemon(w, url, "web-01")
      yield* awaitLog(daemon, "waiting for the fleet's database", 10_000)
      yield* pgProxy(port, target, () => true)
      yield* awaitLog(daemon, "city daemon started", 30_000)
      yield* stillRunning([daemon])
      yield* within("web-01 up in city fleet", Effect.map(fleetStates(url), (states) => states.get("web-01") === "up"))
    }).pipe(Effect.provide(NodeContext.layer)), 90_000)

  it.scopedLive("a daemon whose server stops answering after its client connected waits at the later steps of its start too, and comes up", () =>
    Effect.gen(function*() {
      const target = new URL(yield* freshDatabase(inject("postgresUrl")))
      const port = yield* freePort
      // The client's first connection gets through; every later one is closed at once until the
      // daemon says it waits: the tables, the stores or the runner find the server gone.
      let open = false
      yield* pgProxy(port, target, (n) => n === 1 || open)
      const w = yield* hostWorld()
      const daemon = yield* hostDaemon(w, viaPort(target, port), "web-01")
      yield* awaitLog(daemon, "waiting for the fleet's database", 30_000)
      open = true
      yield* awaitLog(daemon, "city daemon started", 60_000)
      yield* stillRunning([daemon])
      const log = yield* textOf(daemon.log)
      expect(log).not.toContain("cannot be used")
    }).pipe(Effect.provide(NodeContext.layer)), 120_000)

  it.scopedLive("four hosts started at once on an empty PostgreSQL database all come up, and none logs a failed prune", () =>
    Effect.gen(function*() {
      const url = yield* freshDatabase(inject("postgresUrl"))
      const hosts = ["web-01", "web-02", "web-03", "web-04"]
      const worlds = yield* Effect.forEach(hosts, () => hostWorld())
      // Spawned back to back: the four create the tables at the same moment.
      const daemons = yield* Effect.forEach(hosts, (host, i) => hostDaemon(worlds[i]!, url, host))
      // Started: every layer built, the first prune among them (it is forked as its layer builds).
      yield* Effect.forEach(daemons, (daemon) => awaitLog(daemon, "city daemon started"), { concurrency: "unbounded", discard: true })
      yield* within(
        "the four hosts up in city fleet",
        Effect.zipRight(stillRunning(daemons), Effect.map(fleetStates(url), (states) => hosts.every((h) => states.get(h) === "up")))
      )
      for (const daemon of daemons) {
        const log = yield* textOf(daemon.log)
        expect(log).not.toContain("pruning processed cluster messages failed")
        expect(log).not.toContain("cannot be used")
      }
    }).pipe(Effect.provide(NodeContext.layer)), 120_000)

  it.scopedLive("a host killed with SIGKILL and one stopped with SIGSTOP are down within 20 s (city fleet, city status, another host's page and metric); the stopped one is up again after SIGCONT", () =>
    Effect.gen(function*() {
      const url = yield* freshDatabase(inject("postgresUrl"))
      // web-01 names the fleet in its host.json (for `city status`) and serves its status page.
      const port = yield* freePort
      const first = yield* hostWorld({ url, host: "web-01", address: `127.0.0.1:${port}` })
      const { daemon: web01, url: page } = yield* startStatusDaemon(first, "web-01")
      const killed = yield* Effect.flatMap(hostWorld(), (w) => hostDaemon(w, url, "web-02"))
      const stopped = yield* Effect.flatMap(hostWorld(), (w) => hostDaemon(w, url, "web-03"))
      const hosts = ["web-01", "web-02", "web-03"]
      yield* within(
        "the three hosts up in city fleet",
        Effect.zipRight(
          stillRunning([web01, killed, stopped]),
          Effect.map(fleetStates(url), (states) => hosts.every((h) => states.get(h) === "up"))
        )
      )
      const metric = (host: string) =>
        Effect.map(served(page, "/metrics"), (text) => new RegExp(`^city_fleet_host_up\\{host="${host}"\\} (\\d)$`, "m").exec(text)?.[1])
      yield* within("web-01's page has web-03 up", Effect.map(metric("web-03"), (value) => value === "1"))

      const since = Date.now()
      yield* killed.kill("SIGKILL")
      yield* stopped.kill("SIGSTOP")
      // Each source, the first time it shows each host down: all within the bound.
      const seen = new Map<string, number>()
      const note = (what: string, down: boolean) =>
        Effect.sync(() => {
          if (down && !seen.has(what)) seen.set(what, Date.now() - since)
        })
      yield* within(
        "web-02 and web-03 down in city fleet and in web-01's city_fleet_host_up",
        Effect.gen(function*() {
          const states = yield* fleetStates(url)
          yield* note("fleet web-02", states.get("web-02") === "down")
          yield* note("fleet web-03", states.get("web-03") === "down")
          yield* note("metric web-02", (yield* metric("web-02")) === "0")
          yield* note("metric web-03", (yield* metric("web-03")) === "0")
          return seen.size === 4
        }),
        seenWithinMs
      )
      for (const [what, ms] of seen) expect([what, ms <= seenWithinMs]).toEqual([what, true])
      expect(states(yield* fleetStates(url))).toEqual([["web-01", "up"], ["web-02", "down"], ["web-03", "down"]])
      // The same on web-01: `city status`, the page's fleet, and a line of its live log per host.
      const status = yield* city(["status", "--json"], { root: first.root })
      expect(status.code).toBe(0)
      const fleetOfStatus = (JSON.parse(status.stdout) as { readonly fleet: { readonly hosts: ReadonlyArray<{ host: string; up: boolean }> } }).fleet
      expect(fleetOfStatus.hosts.map((h) => [h.host, h.up])).toEqual([["web-01", true], ["web-02", false], ["web-03", false]])
      const document = JSON.parse(yield* served(page, "/api/status")) as StatusDocument
      expect(document.fleet?.hosts.map((h) => [h.host, h.up])).toEqual([["web-01", true], ["web-02", false], ["web-03", false]])
      const fleetLines = document.log.filter((entry) => entry.kind === "fleet").map((entry) => entry.text)
      expect(fleetLines.some((line) => line.startsWith("web-02 down"))).toBe(true)
      expect(fleetLines.some((line) => line.startsWith("web-03 down"))).toBe(true)

      // Stopped for longer than the bound, web-03 stays down all along.
      yield* within(
        "web-03 stopped for more than 20 s, shown down",
        Effect.gen(function*() {
          expect((yield* fleetStates(url)).get("web-03")).toBe("down")
          return Date.now() - since > seenWithinMs
        }),
        seenWithinMs * 2
      )
      yield* stopped.kill("SIGCONT")
      yield* within(
        "web-03 up again in city fleet and in web-01's city_fleet_host_up",
        Effect.gen(function*() {
          yield* stillRunning([web01, stopped])
          const states = yield* fleetStates(url)
          return states.get("web-03") === "up" && states.get("web-02") === "down" && (yield* metric("web-03")) === "1"
        }),
        seenWithinMs
      )
    }).pipe(Effect.provide(NodeContext.layer)), 180_000)

  it.scopedLive("SQLite is one host: a second daemon on its file is refused in one line naming PostgreSQL; once the first is killed, another starts on it", () =>
    Effect.gen(function*() {
      const base = yield* Effect.map(world, (w) => w.base)
      const database = `sqlite:${join(base, "fleet.db")}`
      const first = yield* Effect.flatMap(hostWorld(), (w) => hostDaemon(w, database, "web-01"))
      yield* awaitLog(first, "city daemon started")
      const secondWorld = yield* hostWorld()
      const refused = yield* hostDaemon(secondWorld, database, "web-02")
      const exit = yield* Deferred.await(refused.exited).pipe(
        Effect.timeoutFail({ duration: "30 seconds", onTimeout: () => new Error("the second daemon was not refused within 30 s") })
      )
      expect(exit.code).toBe(1)
      const lines = (yield* textOf(refused.log)).split("\n").filter((line) => line !== "")
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(/^city: error: .*is the database of host web-01 \(pid \d+ .*use PostgreSQL/)
      // The verbs of the machine still read it beside its daemon.
      expect(states(yield* fleetStates(database))).toEqual([["web-01", "up"]])
      yield* first.kill("SIGKILL")
      yield* Deferred.await(first.exited)
      // The killed daemon's claim is taken over at once.
      const second = yield* hostDaemon(secondWorld, database, "web-02")
      yield* awaitLog(second, "city daemon started")
    }).pipe(Effect.provide(NodeContext.layer)), 120_000)
})

/** The states as `[host, state]` pairs in host order. */
const states = (found: ReadonlyMap<string, string>) => [...found].sort(([a], [b]) => (a < b ? -1 : 1))
