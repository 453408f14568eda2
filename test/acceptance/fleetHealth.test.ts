/**
 * A fleet's hosts seen as they are, through real `city daemon --cluster` processes and the real
 * `city` binary (docs/cluster.md, "Faults"): hosts started at once on an empty PostgreSQL database
 * all come up (the tables are created one run at a time), and none logs a failed prune (the first
 * prune runs once the tables exist).
 */
import { describe, expect, inject, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import { type Daemon, startDaemon } from "../live/daemonProcess.ts"
import { awaitLog, textOf, within } from "../live/pluginDaemon.ts"
import { world, type World } from "../live/world.ts"
import { freePort } from "../support/freePort.ts"
import { freshDatabase } from "../support/pgDatabase.ts"
import { cityProcess, writeJson } from "./cityCli.ts"

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

describe("a fleet's hosts as they are, real processes", () => {
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
})
