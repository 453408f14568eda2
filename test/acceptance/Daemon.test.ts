/**
 * Crash tests for issue 10 with a real `city daemon` process (docs/capability-plugin-lifecycle.md,
 * "A busy endpoint finishes its current turn without interruption, then reloads automatically.
 * The request is durable across daemon restarts"). The endpoint is wired through the Commands
 * host: `status` prints the content of a file the test writes, `reload` journals `start` and
 * `done` (and can be held open, to kill the daemon during the reload itself).
 *
 * These spawn real processes (the daemon and the CLI, about a second each under tsx), so they get
 * generous timeouts; they synchronize on files the processes write, never on elapsed time.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { spawn } from "node:child_process"
import { createHash } from "node:crypto"
import { join } from "node:path"
import { isAlive, recordedEndpoints, eventually } from "../fixtures.ts"
import { city, json, seedPeer, sh, writeJson } from "./cityCli.ts"
import { capability, world, type World } from "../support/world.ts"
import { startDaemon } from "../support/daemonProcess.ts"

const crash = (
  name: string,
  body: () => Effect.Effect<void, unknown, FileSystem.FileSystem | import("@effect/platform/Path").Path | import("@effect/platform/Terminal").Terminal | Scope.Scope>
) =>
  it.scopedLive(name, () => body().pipe(Effect.provide(NodeContext.layer)), 240_000)


/**
 * A tool that never ends on its own: it writes its pid to `<base>/started`, then waits for
 * `<base>/never`.
 */
const stuckTool = (w: World) =>
  sh(join(w.bin, "stuck"), [`echo $$ > '${w.base}/started'`, `while [ ! -e '${w.base}/never' ]; do sleep 0.05; done`])

/**
 * Lets the stuck tool end and waits until it has: the test's folder is removed when the test
 * ends, and a tool still polling for `never` then would poll forever.
 */
const releaseStuck = (w: World) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const pid = Number((yield* fs.readFileString(join(w.base, "started"))).trim())
    yield* fs.writeFileString(join(w.base, "never"), "")
    yield* eventually(Effect.sync(() => !isAlive(pid)), 60_000)
  })

/** A Commands-host world: claude endpoints report `<base>/status`, reload journals to `<base>/reloads`. */
const commandsWorld = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const w = yield* world
  const status = yield* sh(join(w.bin, "status"), [`cat '${w.base}/status'`])
  const reload = yield* sh(join(w.bin, "reload"), [
    // A second copy beside a first one still running (the pid it wrote) journals `overlap`.
    `if [ -e '${w.base}/reload.pid' ] && kill -0 "$(cat '${w.base}/reload.pid')" 2>/dev/null; then echo "$1 overlap" >> '${w.base}/reloads'; fi`,
    `echo "$1 start" >> '${w.base}/reloads'`,
    `if [ -e '${w.base}/hold' ]; then echo $$ > '${w.base}/reload.pid'; while [ ! -e '${w.base}/release' ]; do sleep 0.05; done; fi`,
    `echo "$1 done" >> '${w.base}/reloads'`
  ])
  const cmd = (command: string, verb: string) => ({ command, args: [verb, "{personality}", "{runtime}"] })
  yield* writeJson(w.root, "host.json", {
    schema: 1,
    agent_runtimes: ["claude", "codex", "opencode"],
    channel_runtimes: [],
    profiles: Object.fromEntries(["claude", "codex"].map((r) => [r, {
      commands: { status: cmd(status, "status"), reload: cmd(reload, "reload"), retire: cmd(reload, "retire"), kill: cmd(reload, "kill") }
    }]))
  })
  // Atomically (temp + rename): the status command must never read a half-written file.
  const setStatus = (s: string) =>
    Effect.zipRight(
      fs.writeFileString(join(w.base, "status.tmp"), `${s}\n`),
      fs.rename(join(w.base, "status.tmp"), join(w.base, "status"))
    )
  const journal = Effect.map(
    Effect.orElseSucceed(fs.readFileString(join(w.base, "reloads")), () => ""),
    (t) => t.split("\n").filter((l) => l !== "")
  )
  const owedFile = join(w.root, "state", "reloads", "claude-alice.json")
  return { w, fs, setStatus, journal, owedFile }
})

const seedPeerRuntimes = (w: World, runtimes: ReadonlyArray<string>) => seedPeer(w.root, "alice", w.work, runtimes)

const registerBusy = (w: World, setStatus: (s: string) => Effect.Effect<void, unknown>) =>
  Effect.gen(function*() {
    const decl = yield* capability(w, "stamp", ["claude"])
    yield* setStatus("busy")
    const run = yield* city(["capability", "register", decl, "--json"], { root: w.root })
    expect(run.code).toBe(0)
    expect(json(run)["outcomes"]).toMatchObject([{ peer: "alice", runtime: "claude", state: "ok", application: "pending" }])
    expect(json(run)["daemon"]).toEqual({ running: false, pid: null })
  })

describe("city daemon", () => {
  crash("a busy endpoint's owed reload survives a SIGKILL of the daemon and is applied exactly once after restart", () =>
    Effect.gen(function*() {
      const { fs, journal, owedFile, setStatus, w } = yield* commandsWorld
      yield* registerBusy(w, setStatus)
      const first = yield* startDaemon(w.root, w.base, "first")
      yield* eventually(fs.exists(join(w.root, "daemon.pid")), 60_000)
      yield* eventually(Effect.map(fs.readFileString(first.log), (l) => l.includes("city daemon started")), 60_000)
      yield* first.kill("SIGKILL")
      yield* Deferred.await(first.exited)
      expect(yield* journal).toEqual([]) // busy all along: nothing applied, still owed
      expect(yield* fs.exists(owedFile)).toBe(true)

      yield* setStatus("idle")
      const second = yield* startDaemon(w.root, w.base, "second")
      yield* eventually(Effect.map(fs.exists(owedFile), (e) => !e), 60_000)
      expect(yield* journal).toEqual(["reload start", "reload done"])
      yield* second.kill("SIGTERM")
      expect((yield* Deferred.await(second.exited)).code).toBe(0)
      expect(yield* journal).toEqual(["reload start", "reload done"])
    }))

  crash("a SIGKILL during the reload itself: the restart ends the orphaned reload, then applies it once, never beside it", () =>
    Effect.gen(function*() {
      const { fs, journal, owedFile, setStatus, w } = yield* commandsWorld
      yield* registerBusy(w, setStatus)
      yield* fs.writeFileString(join(w.base, "hold"), "")
      const first = yield* startDaemon(w.root, w.base, "first")
      yield* setStatus("idle")
      yield* eventually(fs.exists(join(w.base, "reload.pid")), 60_000) // the reload is running
      // and recorded (right after its spawn: ProcessRecords.ts)
      yield* eventually(Effect.map(recordedEndpoints(w.root), (running) => running.includes("host claude-alice")), 60_000)
      yield* first.kill("SIGKILL")
      yield* Deferred.await(first.exited)
      // The crash left the reload command running (it waits for `release`, which never comes).
      const orphan = Number((yield* fs.readFileString(join(w.base, "reload.pid"))).trim())
      expect(isAlive(orphan)).toBe(true)
      expect(yield* journal).toEqual(["reload start"])
      const record = JSON.parse(yield* fs.readFileString(owedFile))
      expect(record.requested).toBeGreaterThan(record.applied)

      yield* fs.remove(join(w.base, "hold"))
      const second = yield* startDaemon(w.root, w.base, "second")
      yield* eventually(Effect.map(fs.exists(owedFile), (e) => !e), 60_000)
      // The second daemon ended the orphan before anything else, then reloaded once.
      expect(isAlive(orphan)).toBe(false)
      expect(yield* journal).toEqual(["reload start", "reload start", "reload done"])
      expect(yield* fs.readFileString(second.log)).toMatch(/ended a command left running by pid \d+, which is gone/)
      yield* second.kill("SIGTERM")
      expect((yield* Deferred.await(second.exited)).code).toBe(0)
    }))

  crash("a second daemon on the same root refuses to start with a clear message", () =>
    Effect.gen(function*() {
      const { fs, w } = yield* commandsWorld
      const first = yield* startDaemon(w.root, w.base, "first")
      yield* eventually(fs.exists(join(w.root, "daemon.pid")), 60_000)
      const second = yield* city(["daemon"], { root: w.root })
      expect(second.code).toBe(1)
      expect(second.stderr).toContain(`a city daemon (pid ${first.pid}) is already running on ${w.root}`)
      const status = yield* city(["status", "--json"], { root: w.root })
      expect(json(status)["daemon"]).toEqual({ running: true, pid: first.pid, frozen: null })
      yield* first.kill("SIGTERM")
      expect((yield* Deferred.await(first.exited)).code).toBe(0)
      expect(yield* fs.exists(join(w.root, "daemon.pid"))).toBe(false)
    }))

  crash("a daemon.pid naming a live unrelated process (a reused pid) is stale: status says no daemon, and a daemon starts", () =>
    Effect.gen(function*() {
      const { fs, w } = yield* commandsWorld
      // An unrelated process that holds the pid the file names; its start is not the one recorded.
      const stranger = spawn("sleep", ["60"], { stdio: "ignore" })
      yield* Effect.addFinalizer(() => Effect.sync(() => void stranger.kill("SIGKILL")))
      const pid = stranger.pid ?? 0
      expect(isAlive(pid)).toBe(true)
      yield* fs.writeFileString(
        join(w.root, "daemon.pid"),
        JSON.stringify({ pid, started_at: "2026-01-01T00:00:00.000Z", start: "another-boot:12345" })
      )
      const status = yield* city(["status", "--json"], { root: w.root })
      expect(json(status)["daemon"]).toEqual({ running: false, pid: null, frozen: null })
      const daemon = yield* startDaemon(w.root, w.base, "daemon")
      yield* eventually(Effect.map(fs.readFileString(daemon.log), (l) => l.includes("city daemon started")), 60_000)
      const record = JSON.parse(yield* fs.readFileString(join(w.root, "daemon.pid")))
      expect(record.pid).toBe(daemon.pid)
      expect(json(yield* city(["status", "--json"], { root: w.root }))["daemon"]).toEqual({ running: true, pid: daemon.pid, frozen: null })
      yield* daemon.kill("SIGTERM")
      expect((yield* Deferred.await(daemon.exited)).code).toBe(0)
    }))

  crash("a daemon.pid without a start naming a live unrelated process does not keep a daemon from starting: the daemon lock decides", () =>
    Effect.gen(function*() {
      const { fs, w } = yield* commandsWorld
      const stranger = spawn("sleep", ["60"], { stdio: "ignore" })
      yield* Effect.addFinalizer(() => Effect.sync(() => void stranger.kill("SIGKILL")))
      const pid = stranger.pid ?? 0
      expect(isAlive(pid)).toBe(true)
      // As an older version (or a platform without a start) wrote it: the pid alone.
      yield* fs.writeFileString(join(w.root, "daemon.pid"), JSON.stringify({ pid, started_at: "2026-01-01T00:00:00.000Z" }))
      expect(json(yield* city(["status", "--json"], { root: w.root }))["daemon"]).toEqual({ running: false, pid: null, frozen: null })
      const daemon = yield* startDaemon(w.root, w.base, "daemon")
      yield* eventually(Effect.map(fs.readFileString(daemon.log), (l) => l.includes("city daemon started")), 60_000)
      expect(JSON.parse(yield* fs.readFileString(join(w.root, "daemon.pid"))).pid).toBe(daemon.pid)

      // The same start-less file naming the daemon that holds the lock still refuses a second one.
      yield* fs.writeFileString(join(w.root, "daemon.pid"), JSON.stringify({ pid: daemon.pid, started_at: "2026-01-01T00:00:00.000Z" }))
      const second = yield* city(["daemon"], { root: w.root })
      expect(second.code).toBe(1)
      expect(second.stderr).toContain(`a city daemon (pid ${daemon.pid}) is already running on ${w.root}`)
      yield* daemon.kill("SIGTERM")
      expect((yield* Deferred.await(daemon.exited)).code).toBe(0)
      expect(yield* fs.exists(join(w.root, "daemon.pid"))).toBe(false)
      expect(yield* fs.exists(join(w.root, "daemon.lock"))).toBe(false)
    }))

  crash("a daemon.pid that is not a daemon record is ignored with one warning line, and replaced", () =>
    Effect.gen(function*() {
      const { fs, w } = yield* commandsWorld
      yield* fs.writeFileString(join(w.root, "daemon.pid"), "garbage, not JSON")
      const daemon = yield* startDaemon(w.root, w.base, "daemon")
      yield* eventually(Effect.map(fs.readFileString(daemon.log), (l) => l.includes("city daemon started")), 60_000)
      const warnings = (yield* fs.readFileString(daemon.log)).split("\n").filter((l) => l.includes("daemon.pid"))
      expect(warnings).toHaveLength(1)
      expect(warnings[0]).toMatch(/level=WARN/)
      expect(warnings[0]).toContain(`${join(w.root, "daemon.pid")} is not a daemon record (`)
      expect(warnings[0]).toContain("ignored and replaced")
      expect(JSON.parse(yield* fs.readFileString(join(w.root, "daemon.pid"))).pid).toBe(daemon.pid)
      yield* daemon.kill("SIGTERM")
      expect((yield* Deferred.await(daemon.exited)).code).toBe(0)
    }))

  crash("a foreign endpoint: the sweep exits 1 and reports it, never applied", () =>
    Effect.gen(function*() {
      const { setStatus, w } = yield* commandsWorld
      const decl = yield* capability(w, "stamp", ["claude"])
      yield* setStatus("foreign")
      const run = yield* city(["capability", "register", decl], { root: w.root })
      expect(run.code).toBe(1)
      expect(run.stdout).toMatch(/alice\s+claude\s+sweep-on\s+ok\s+foreign/)
      expect(run.stdout).not.toContain("applied")
    }))
})

/** A world whose claude endpoints the daemon hosts as City Sessions. */
const cityWorld = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const w = yield* world
  yield* writeJson(w.root, "host.json", {
    schema: 1,
    agent_runtimes: ["claude", "codex", "opencode"],
    channel_runtimes: [],
    profiles: { claude: { host: "city" } }
  })
  const hostedFile = join(w.root, "state", "hosted", "claude-alice.json")
  const turnsDir = join(w.root, "state", "turns", "claude-alice")
  /** Requests a Turn and waits for its result. */
  const requestTurn = (id: string, calls: ReadonlyArray<{ readonly tool: string; readonly input?: string }>) =>
    Effect.gen(function*() {
      yield* fs.makeDirectory(turnsDir, { recursive: true })
      yield* writeJson(turnsDir, `${id}.tmp`, { schema: 1, calls })
      yield* fs.rename(join(turnsDir, `${id}.tmp`), join(turnsDir, `${id}.json`))
    })
  const resultOf = (id: string) =>
    Effect.gen(function*() {
      const file = join(turnsDir, `${id}.result.json`)
      yield* eventually(fs.exists(file), 60_000)
      return JSON.parse(yield* fs.readFileString(file)) as Record<string, unknown>
    })
  return { w, fs, hostedFile, requestTurn, resultOf }
})

describe("remove-runtime and explicit reloads through the CLI", () => {
  crash("busy → pending (exit 0), durable and listed with the daemon's absence; the daemon removes it after the Turn", () =>
    Effect.gen(function*() {
      const { fs, journal, setStatus, w } = yield* commandsWorld
      yield* capability(w, "stamp", ["claude", "codex"])
      yield* setStatus("busy")
      const run = yield* city(["peer", "remove-runtime", "alice", "codex", "--json"], { root: w.root })
      expect(run.code).toBe(0)
      expect(json(run)).toMatchObject({ removal: "pending", daemon: { running: false } })
      const list = yield* city(["capability", "list"], { root: w.root })
      expect(list.stdout).toMatch(/codex-alice\s+-\s+removal/)
      expect(list.stdout).toContain("daemon: not running")
      expect(yield* journal).toEqual([])

      const d = yield* startDaemon(w.root, w.base, "daemon")
      yield* setStatus("idle")
      const owedFile = join(w.root, "state", "reloads", "codex-alice.json")
      yield* eventually(Effect.map(fs.exists(owedFile), (e) => !e), 60_000)
      expect(yield* journal).toEqual(["retire start", "retire done"])
      const peers = json(yield* city(["peer", "list", "--json"], { root: w.root }))
      expect(peers["peers"]).toMatchObject([{ peer: "alice", runtimes: ["claude"] }])
      yield* d.kill("SIGTERM")
      expect((yield* Deferred.await(d.exited)).code).toBe(0)
    }))

  crash("idle → removed in the call; --force on a busy endpoint kills it now and removes it", () =>
    Effect.gen(function*() {
      const { journal, setStatus, w } = yield* commandsWorld
      yield* seedPeerRuntimes(w, ["claude", "codex", "opencode"])
      yield* setStatus("idle")
      const idle = yield* city(["peer", "remove-runtime", "alice", "codex", "--json"], { root: w.root })
      expect(idle.code).toBe(0)
      expect(json(idle)).toMatchObject({ removal: "removed", peer: "alice", runtimes: ["claude", "opencode"] })
      expect(yield* journal).toEqual(["retire start", "retire done"])
      yield* setStatus("busy")
      // opencode has no commands: the core cannot reach it, so it is asleep and removed at once.
      const asleep = yield* city(["peer", "remove-runtime", "alice", "opencode", "--json"], { root: w.root })
      expect(json(asleep)).toMatchObject({ removal: "removed", peer: "alice", runtimes: ["claude"] })
      yield* seedPeerRuntimes(w, ["claude", "codex"])
      const forced = yield* city(["peer", "remove-runtime", "alice", "codex", "--force", "--json"], { root: w.root })
      expect(forced.code).toBe(0)
      expect(json(forced)).toMatchObject({ removal: "removed", peer: "alice", runtimes: ["claude"] })
      expect(yield* journal).toEqual(["retire start", "retire done", "kill start", "kill done"])
    }))

  crash("city reload requests a reload explicitly and prints runtime=applied|pending", () =>
    Effect.gen(function*() {
      const { journal, setStatus, w } = yield* commandsWorld
      yield* seedPeerRuntimes(w, ["claude"])
      yield* setStatus("idle")
      const idle = yield* city(["reload", "alice"], { root: w.root })
      expect(idle.code).toBe(0)
      expect(idle.stdout).toContain("claude-alice runtime=applied")
      expect(yield* journal).toEqual(["reload start", "reload done"])
      yield* setStatus("busy")
      const busy = yield* city(["reload", "alice"], { root: w.root })
      expect(busy.code).toBe(0)
      expect(busy.stdout).toContain("claude-alice runtime=pending")
      expect(busy.stdout).toContain("no city daemon is running on this root")
    }))
})

describe("city daemon hosting City Sessions", () => {
  crash("register and unregister while the daemon hosts the endpoint idle: applied, the tool callable, then gone", () =>
    Effect.gen(function*() {
      const { fs, hostedFile, requestTurn, resultOf, w } = yield* cityWorld
      const decl = yield* capability(w, "stamp", ["claude"])
      const d = yield* startDaemon(w.root, w.base, "daemon")
      yield* eventually(fs.exists(hostedFile), 60_000)
      const registered = yield* city(["capability", "register", decl, "--json"], { root: w.root })
      expect(registered.code).toBe(0)
      expect(json(registered)["outcomes"]).toMatchObject([{ peer: "alice", runtime: "claude", state: "ok", application: "applied" }])
      yield* requestTurn("t1", [{ tool: "stamp", input: "hi" }])
      // Applied: at least one reload (a watcher pass between the verb's surface writes and its
      // converge may owe one extra, never one less; as for the hand edit below).
      const t1 = yield* resultOf("t1")
      expect(t1).toMatchObject({ ok: true, tools: ["stamp"], results: [{ tool: "stamp", ok: true, output: "stamp:hi" }] })
      expect(t1["session"]).toBeGreaterThanOrEqual(2)

      const unregistered = yield* city(["capability", "unregister", "stamp", "--json"], { root: w.root })
      expect(json(unregistered)["outcomes"]).toMatchObject([{ peer: "alice", runtime: "claude", state: "ok", application: "applied" }])
      yield* requestTurn("t2", [{ tool: "stamp", input: "again" }])
      const gone = yield* resultOf("t2")
      expect(gone).toMatchObject({ ok: false, tools: [], results: [{ tool: "stamp", ok: false }] })

      // A writer outside the core (an operator's hand edit): the daemon's watcher owes one reload.
      const edited = JSON.stringify({ mcpServers: { hand: { command: join(w.bin, "tool-stamp") } } })
      yield* fs.writeFileString(join(w.work, ".mcp.json"), edited)
      const hash = createHash("sha256").update(edited).digest("hex")
      const fingerprint = join(w.root, "state", "fingerprints", "claude-alice.json")
      yield* eventually(Effect.map(fs.readFileString(fingerprint), (t) => t.includes(hash)), 60_000)
      // The reload it owes is applied at a boundary, by the daemon's applier: a Turn requested
      // before that may take the boundary first and run on the old surfaces. Wait for the record
      // to be settled (removed), then the next Turn runs on the edited file.
      const owed = join(w.root, "state", "reloads", "claude-alice.json")
      yield* eventually(Effect.map(fs.exists(owed), (exists) => !exists), 60_000)
      yield* requestTurn("t3", [{ tool: "hand", input: "by hand" }])
      // At least one reload more than before the edit (a watcher pass that falls between a verb's
      // surface writes and its converge may owe one extra, never one less).
      const t3 = yield* resultOf("t3")
      expect(t3).toMatchObject({ ok: true, tools: ["hand"], results: [{ output: "stamp:by hand" }] })
      expect(t3["session"]).toBeGreaterThanOrEqual(4)
      // The daemon's log reaches its file through a pipe, after the Turn's result file: wait for it.
      const applied = Effect.map(fs.readFileString(d.log), (log) => log.match(/message="reload applied"/g)?.length ?? 0)
      yield* eventually(Effect.map(applied, (n) => n >= 3), 60_000) // register, unregister, the hand edit
      const log = yield* fs.readFileString(d.log)
      expect(log).toMatch(/message="surfaces changed: reload owed".*endpoint=claude-alice/)
      yield* d.kill("SIGTERM")
      expect((yield* Deferred.await(d.exited)).code).toBe(0)
    }))

  crash("SIGTERM during a running Turn: the Turn finishes, the daemon exits 0 within the deadline", () =>
    Effect.gen(function*() {
      const { fs, hostedFile, requestTurn, resultOf, w } = yield* cityWorld
      yield* capability(w, "unused", ["claude"]) // the peer
      const slow = yield* sh(join(w.bin, "slow"), [
        `touch '${w.base}/started'`,
        `while [ ! -e '${w.base}/release' ]; do sleep 0.05; done`,
        "printf slow-done"
      ])
      yield* fs.writeFileString(join(w.work, ".mcp.json"), JSON.stringify({ mcpServers: { slow: { command: slow } } }))
      const d = yield* startDaemon(w.root, w.base, "daemon", ["--log-format", "json"])
      yield* eventually(fs.exists(hostedFile), 60_000)
      yield* requestTurn("t1", [{ tool: "slow" }])
      yield* eventually(fs.exists(join(w.base, "started")), 60_000)
      const signalled = Date.now()
      yield* d.kill("SIGTERM")
      // The daemon is draining: it waits for the Turn rather than cutting it short.
      yield* eventually(Effect.map(fs.readFileString(d.log), (l) => l.includes("waiting for 1 running Turn(s)")), 60_000)
      expect(yield* fs.exists(join(w.root, "daemon.pid"))).toBe(true)
      // A second SIGTERM while it drains does not cut the stop short (docs/cli.md, "Commands and
      // signals"): no library's exit hook may turn it into a kill by the signal.
      yield* d.kill("SIGTERM")
      yield* Effect.sleep("300 millis")
      expect(yield* fs.exists(join(w.root, "daemon.pid"))).toBe(true)
      yield* fs.writeFileString(join(w.base, "release"), "")
      const exit = yield* Deferred.await(d.exited)
      expect(exit.code).toBe(0)
      expect(Date.now() - signalled).toBeLessThan(30_000)
      expect(yield* resultOf("t1")).toMatchObject({ ok: true, results: [{ tool: "slow", ok: true, output: "slow-done" }] })
      expect(yield* fs.exists(join(w.root, "daemon.pid"))).toBe(false)
      // --log-format json: one JSON object per line, the endpoint as an annotation.
      const entries = (yield* fs.readFileString(d.log)).split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l))
      expect(entries.find((e) => e.message === "endpoint hosted as a City Session")).toMatchObject({
        logLevel: "INFO",
        annotations: { endpoint: "claude-alice" }
      })
    }))

  crash("a Turn that outlives the deadline: the daemon exits 130 naming what it abandoned, kills it and removes its pid file", () =>
    Effect.gen(function*() {
      const { fs, hostedFile, requestTurn, w } = yield* cityWorld
      yield* capability(w, "unused", ["claude"])
      const stuck = yield* stuckTool(w)
      yield* fs.writeFileString(join(w.work, ".mcp.json"), JSON.stringify({ mcpServers: { stuck: { command: stuck } } }))
      const d = yield* startDaemon(w.root, w.base, "daemon", ["--deadline-ms", "1500"])
      yield* eventually(fs.exists(hostedFile), 60_000)
      yield* requestTurn("t1", [{ tool: "stuck" }])
      yield* eventually(fs.exists(join(w.base, "started")), 60_000)
      yield* d.kill("SIGTERM")
      const exit = yield* Deferred.await(d.exited)
      expect(exit.code).toBe(130)
      expect(yield* fs.readFileString(d.log)).toContain("cleanup did not finish within 1500 ms; exiting; abandoned: turn claude-alice/t1.json")
      // What it abandoned does not outlive it: the tool got SIGKILL at the exit (a zombie until reaped).
      const tool = Number((yield* fs.readFileString(join(w.base, "started"))).trim())
      yield* eventually(Effect.sync(() => !isAlive(tool)), 10_000)
      expect(yield* fs.exists(join(w.root, "daemon.pid"))).toBe(false)
    }))

  crash("remove-runtime --force on a daemon-hosted busy endpoint: the daemon kills the Turn and removes it", () =>
    Effect.gen(function*() {
      const { fs, w } = yield* cityWorld
      yield* writeJson(w.root, "host.json", {
        schema: 1,
        agent_runtimes: ["claude", "codex", "opencode"],
        channel_runtimes: [],
        profiles: { claude: { host: "city" }, codex: { host: "city" } }
      })
      yield* capability(w, "unused", ["claude", "codex"])
      const stuck = yield* stuckTool(w)
      yield* fs.makeDirectory(join(w.work, ".codex"), { recursive: true })
      yield* fs.writeFileString(join(w.work, ".codex", "config.toml"), `[mcp_servers.stuck]\ncommand = "${stuck}"\n`)
      const d = yield* startDaemon(w.root, w.base, "daemon")
      yield* eventually(fs.exists(join(w.root, "state", "hosted", "codex-alice.json")), 60_000)
      const turns = join(w.root, "state", "turns", "codex-alice")
      yield* fs.makeDirectory(turns, { recursive: true })
      yield* writeJson(turns, "t1.tmp", { schema: 1, calls: [{ tool: "stuck" }] })
      yield* fs.rename(join(turns, "t1.tmp"), join(turns, "t1.json")) // atomically: never read half-written
      yield* eventually(fs.exists(join(w.base, "started")), 60_000)
      const run = yield* city(["peer", "remove-runtime", "alice", "codex", "--force", "--json"], { root: w.root })
      expect(run.code).toBe(0)
      expect(json(run)).toMatchObject({ removal: "removed", peer: "alice", runtimes: ["claude"] })
      yield* eventually(fs.exists(join(turns, "t1.result.json")), 60_000)
      expect(JSON.parse(yield* fs.readFileString(join(turns, "t1.result.json")))).toEqual({
        ok: false,
        error: "interrupted: the endpoint was killed"
      })
      yield* releaseStuck(w)
      yield* d.kill("SIGTERM")
      expect((yield* Deferred.await(d.exited)).code).toBe(0)
    }))
})
