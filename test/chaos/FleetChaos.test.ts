/**
 * The fleet under chaos (Jepsen's approach, on our scale): three hosts' `city
 * daemon --cluster` processes on a PostgreSQL server of the test's own, a seeded random schedule
 * of faults (test/chaos/schedule.ts: SIGKILL and restart of a daemon, SIGSTOP past the runner's
 * lock expiry then SIGCONT, `pg_ctl restart -m immediate`) while capability sweeps and edits of
 * launch-read files (owed reloads) run throughout. Every provisioning and reload command writes its
 * start and end to one shared history, beside the test's own acts and its `city fleet --json`
 * reads (test/chaos/history.ts). Once everything has settled, the checker (test/chaos/checker.ts)
 * says which promises were broken, with the lines of the history that show it.
 *
 * The seed and the whole schedule are printed first; `CITY_CHAOS_SEED=<seed>` replays a run's
 * schedule, `CITY_CHAOS_ROUNDS=<n>` runs n rounds of 50 s instead of one. A failing run prints the
 * checker's report and keeps the history and the daemons' outputs in a folder it names.
 *
 * Real processes and real signals; every wait is bounded. The only timed assertion is the spec's
 * own: a host dead for longer than 20 s is shown `down` by 20 s after its death.
 */
import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { cpSync, lstatSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { city } from "../acceptance/cityCli.ts"
import { isAlive } from "../fixtures.ts"
import * as Checker from "./checker.ts"
import * as Commands from "./commands.ts"
import * as Events from "./events.ts"
import * as Fleet from "./fleet.ts"
import { append, now, testLine } from "./history.ts"
import * as Operator from "./operator.ts"
import * as Schedule from "./schedule.ts"

const seed = process.env["CITY_CHAOS_SEED"] === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(process.env["CITY_CHAOS_SEED"])
const rounds = Math.max(1, Number(process.env["CITY_CHAOS_ROUNDS"] ?? 1))
const schedule = Schedule.make(seed, rounds, {
  hosts: Fleet.hostNames,
  endpoints: Fleet.hostNames.flatMap((host) => Fleet.peersOf[host]!.map((p) => `${host}/claude/${p}`)),
  capabilities: Fleet.capabilities
})
const replay = `CITY_CHAOS_SEED=${seed}${rounds === 1 ? "" : ` CITY_CHAOS_ROUNDS=${rounds}`}`

/** How long the fleet may take to settle once the chaos ends. */
const settleMs = 45_000

const sleepUntil = (at: number) => Effect.suspend(() => Effect.sleep(Math.max(0, at - now())))

/** Waits for `condition`, at most `ms`; whether it held. */
const within = <E, R>(ms: number, condition: Effect.Effect<boolean, E, R>) =>
  Effect.gen(function*() {
    const deadline = now() + ms
    while (now() < deadline) {
      if (yield* condition) return true
      yield* Effect.sleep("1 second")
    }
    return false
  })

describe("the fleet under chaos", () => {
  it.scopedLive(`every promise holds under a seeded schedule of faults (${replay})`, () =>
    Effect.gen(function*() {
      console.log(Schedule.describe(schedule))
      const fs = yield* FileSystem.FileSystem
      const fleet = yield* Fleet.make
      const { log, url } = fleet
      const reports: Record<string, string> = {}
      const note = (what: string) => append(log, testLine("note", { what }))

      // Set up: every host announced, the peers created by the verb on their hosts, the first
      // capability registered, and each endpoint's launch-read file fingerprinted.
      const announced = yield* within(90_000, Effect.map(Operator.readFleet(log, url), (read) => read.hosts?.length === Fleet.hostNames.length))
      if (!announced) note("setup: not every host was announced within 90 s")
      for (const host of fleet.hosts) {
        for (const p of Fleet.peersOf[host.name]!) {
          const created = yield* city(["peer", "create", p, "--cwd", join(host.work, p), "--runtime", "claude"], { root: host.root })
          if (created.code !== 0) note(`setup: peer create ${p} on ${host.name} exited ${created.code}: ${created.stderr.trim().split("\n").at(-1)}`)
        }
      }
      const first = yield* Operator.sweep({ log, root: fleet.operator, url, id: "0", verb: "register", capability: Fleet.capabilities[0], file: fleet.files[Fleet.capabilities[0]]! })
      reports[first.id] = first.stdout
      const baselines = fleet.endpoints.map((e) => {
        const [host, runtime, personality] = e.split("/")
        return join(fleet.base, "hosts", host!, "root", "state", "fingerprints", `${runtime}-${personality}.json`)
      })
      if (!(yield* within(30_000, Effect.map(Effect.forEach(baselines, (f) => fs.exists(f)), (all) => all.every(Boolean))))) {
        note("setup: not every endpoint's launch-read files were fingerprinted within 30 s")
      }

      // The chaos.
      const start = now()
      append(log, testLine("chaos-begin", { seed, rounds }))
      const polls = yield* Effect.fork(Effect.forever(Effect.zipRight(Operator.readFleet(log, url), Effect.sleep("1 second"))))
      const hostNamed = (name: string) => fleet.hosts.find((h) => h.name === name)!.daemon
      const faults = Effect.forEach(schedule.faults, (fault) =>
        Effect.gen(function*() {
          yield* sleepUntil(start + fault.at)
          if (fault.kind === "pg-restart") {
            append(log, testLine("pg-restart"))
            const restarted = yield* Effect.either(Effect.tryPromise(() => fleet.server.restart()))
            append(log, restarted._tag === "Right" ? testLine("pg-ready") : testLine("note", { what: `pg_ctl restart failed: ${String(restarted.left.cause)}` }))
            return
          }
          const daemon = hostNamed(fault.host)
          if (fault.kind === "kill") yield* Effect.promise(daemon.kill)
          else daemon.stop()
          yield* sleepUntil(start + fault.at + fault.downFor)
          if (fault.kind === "kill") yield* Effect.promise(daemon.start)
          else daemon.cont()
        }), { concurrency: "unbounded", discard: true })
      const edits = Effect.forEach(schedule.edits, (edit) =>
        Effect.gen(function*() {
          yield* sleepUntil(start + edit.at)
          const file = Fleet.launchFileOf(fleet.base, edit.endpoint)
          // Written aside, then renamed over (an editor's save): a new inode, never a torn file.
          append(log, testLine("edit", { endpoint: edit.endpoint, v: edit.version }))
          writeFileSync(`${file}.chaos-tmp`, Commands.launchFile(edit.version))
          renameSync(`${file}.chaos-tmp`, file)
        }), { discard: true })
      // Each capability's verbs one after another, the capabilities' at once.
      const sweeps = Effect.forEach(Fleet.capabilities, (capability) =>
        Effect.gen(function*() {
          for (const [i, step] of schedule.sweeps.entries()) {
            if (step.capability !== capability) continue
            yield* Effect.sleep(step.gap)
            if (now() >= start + schedule.chaosMs) return
            const run = yield* Operator.sweep({ log, root: fleet.operator, url, id: String(i + 1), verb: step.verb, capability, file: fleet.files[capability]! })
            reports[run.id] = run.stdout
          }
        }), { concurrency: "unbounded", discard: true })
      yield* Effect.all([faults, edits, sweeps], { concurrency: "unbounded", discard: true })
      append(log, testLine("chaos-end", { after_ms: Math.round(now() - start) }))

      // Settled: every daemon running, nothing owed (three reads in a row), no command running.
      const inFlight = () =>
        Events.read(readFileSync(log, "utf8")).commands.filter((c) => c.end === undefined && isAlive(Number(c.pid))).length
      let quiet = 0
      const settled = yield* within(settleMs, Effect.gen(function*() {
        const read = yield* Operator.readFleet(log, url)
        const calm = fleet.hosts.every((h) => h.daemon.pid() !== undefined) && inFlight() === 0 &&
          read.hosts !== undefined && read.hosts.length === Fleet.hostNames.length &&
          read.hosts.every((h) => h.owed_reloads === 0 && h.owed_removals === 0)
        quiet = calm ? quiet + 1 : 0
        return quiet >= 3
      }))
      if (!settled) note(`not settled within ${settleMs / 1000} s of the chaos' end (owed work, a command running, or a daemon down)`)
      yield* Fiber.interrupt(polls)
      const final = yield* Operator.readFleet(log, url)
      const records: Record<string, Record<string, unknown>> = {}
      for (const host of fleet.hosts) {
        records[host.name] = {}
        for (const capability of Fleet.capabilities) {
          const file = join(host.root, "state", "endpoints", `${capability}.json`)
          if (yield* fs.exists(file)) records[host.name]![capability] = JSON.parse(yield* fs.readFileString(file))
        }
      }
      append(log, testLine("settled", { after_ms: Math.round(now() - start), settled }))
      yield* Effect.promise(() => Promise.all(fleet.hosts.map((h) => h.daemon.close())))

      const input: Checker.ChaosInput = {
        log: readFileSync(log, "utf8"),
        hosts: Fleet.hostNames,
        endpoints: fleet.endpoints,
        reports,
        outputs: Object.assign({}, ...fleet.hosts.map((h) => h.daemon.outputs())),
        final: { fleet: final.stdout, records }
      }
      const verdict = Checker.check(input)
      const summary = Checker.describe(input, verdict, replay)
      const lines = input.log.split("\n").length - 1
      const sweepsRun = Object.keys(reports).length
      console.log(`chaos run: ${((now() - start) / 1000).toFixed(1)} s from the chaos' start to settled, ${lines} history lines, ${sweepsRun} sweeps\n${summary}`)
      if (verdict.violations.length > 0) {
        const kept = mkdtempSync(join(tmpdir(), `city-chaos-${seed}-`))
        // The history, the daemons' outputs and the state roots; not the peers' folders nor the scripts.
        // Sockets (a daemon's control channel) cannot be copied: only folders and regular files are kept.
        cpSync(fleet.base, kept, {
          recursive: true,
          filter: (src) => {
            if (/(^|\/)(work|bin)(\/|$)/.test(relative(fleet.base, src))) return false
            const info = lstatSync(src, { throwIfNoEntry: false })
            return info !== undefined && (info.isDirectory() || info.isFile())
          }
        })
        writeFileSync(join(kept, "checker-input.json"), JSON.stringify(input))
        console.log(`chaos run kept in ${kept} (history.log, hosts/*/*-daemon-*.log, checker-input.json: npx tsx test/chaos/recheck.ts ${kept})`)
      }
      expect(verdict.violations.map((v) => `${v.property}: ${v.message}`), `${summary}\n(${replay})`).toEqual([])
    }).pipe(Effect.provide(NodeContext.layer)), schedule.chaosMs + 240_000)
})
