/**
 * Nothing a `city` process starts outlives it unnoticed, and no endpoint runs two commands at once
 * (docs/cli.md, "Commands and signals"), with real processes and real signals: SIGTERM to the
 * process group of a CLI started as a supervisor starts it (`setsid`), `kill -9` of the CLI in the
 * middle of a sweep and the repair that follows, and the process records the repair reads.
 *
 * The provisioner ignores SIGTERM (so only a SIGKILL ends it), writes its pid to
 * `<base>/<personality>.pid` when it starts, and journals `start`; before that, it journals
 * `overlap` if the pid it finds in that file is still alive: a second copy beside a first. Its
 * first run on each personality never ends by itself; later ones journal `done`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { isAlive, recordedEndpoints, eventually } from "../fixtures.ts"
import { startCity as start } from "../support/daemonProcess.ts"
import { cityProcess, declaration, seedPeer, world, writeJson } from "./cityCli.ts"

const real = (
  name: string,
  body: () => Effect.Effect<void, unknown, FileSystem.FileSystem | import("@effect/platform/Path").Path | Scope.Scope>
) => it.scopedLive(name, () => body().pipe(Effect.provide(NodeContext.layer)), 120_000)

/** The stubborn provisioner described above; its first run on each personality holds (never ends by itself). */
const stubborn = (bin: string, base: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const file = join(bin, "stubborn")
    yield* fs.writeFileString(file, [
      "#!/bin/sh",
      "trap '' TERM",
      `mine='${base}'/"$2".pid`,
      `if [ -e "$mine" ] && kill -0 "$(cat "$mine")" 2>/dev/null; then echo "$2 overlap" >> '${base}/journal'; fi`,
      `echo $$ > "$mine"`,
      `echo "$2 $1 start" >> '${base}/journal'`,
      `if [ ! -e '${base}'/"$2".ran ]; then : > '${base}'/"$2".ran; while :; do sleep 0.05; done; fi`,
      `echo "$2 $1 done" >> '${base}/journal'`,
      ""
    ].join("\n"))
    yield* fs.chmod(file, 0o755)
    return file
  })

/** A world with peers alice and bob on claude, and the `stat` capability on the stubborn provisioner. */
const twoPeers = Effect.gen(function*() {
  const w = yield* world
  const command = yield* stubborn(w.bin, w.base)
  yield* seedPeer(w.root, "alice", w.work, ["claude"])
  yield* seedPeer(w.root, "bob", w.work, ["claude"])
  const file = yield* writeJson(w.bin, "stat.json", declaration({ name: "stat", command, runtimes: ["claude"] }))
  return { file, w }
})

const pidOf = (base: string, personality: string) => Number(readFileSync(join(base, `${personality}.pid`), "utf8").trim())

/** Whether the provisioner has written its pid for `personality` (the whole line: `echo` creates the file first). */
const pidWritten = (base: string, personality: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    Effect.orElseSucceed(Effect.map(fs.readFileString(join(base, `${personality}.pid`)), (t) => /^\d+\n$/.test(t)), () => false))

const journal = (base: string) =>
  Effect.map(
    Effect.flatMap(FileSystem.FileSystem, (fs) => Effect.orElseSucceed(fs.readFileString(join(base, "journal")), () => "")),
    (text) => text.split("\n").filter((l) => l !== "")
  )

/** `city ...args` as a supervisor starts it: the leader of a new process group (`setsid`). */
const startCity = (root: string, logDir: string, args: ReadonlyArray<string>) =>
  start(root, logDir, "city", args, { detached: true })

describe("commands and signals", () => {
  real("SIGTERM to the CLI's process group: the command that ignores SIGTERM is ended before city exits 143", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const w = yield* world
      const command = yield* stubborn(w.bin, w.base)
      yield* seedPeer(w.root, "alice", w.work, ["claude"])
      const file = yield* writeJson(w.bin, "stat.json", declaration({ name: "stat", command, runtimes: ["claude"] }))
      const cli = yield* startCity(w.root, w.base, ["capability", "register", file, "--timeout-ms", "60000"])
      yield* eventually(pidWritten(w.base, "alice"), 60_000)
      const command_ = pidOf(w.base, "alice")
      expect(isAlive(command_)).toBe(true)
      // How timeout(1) and supervisors stop a job: SIGTERM to its whole process group.
      process.kill(-cli.pid, "SIGTERM")
      const exit = yield* Deferred.await(cli.exited)
      // Checked the moment city has exited, not eventually: it ended its command first.
      expect(isAlive(command_)).toBe(false)
      expect(exit.code).toBe(143)
      expect(yield* fs.readDirectory(join(w.root, "state", "processes")).pipe(Effect.orElseSucceed(() => []))).toEqual([])
    }))

  real("kill -9 of the CLI mid-sweep: the repair ends the leftovers first and never runs a second copy beside one", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { file, w } = yield* twoPeers
      const cli = yield* startCity(w.root, w.base, ["capability", "register", file, "--timeout-ms", "60000"])
      yield* eventually(Effect.zipWith(pidWritten(w.base, "alice"), pidWritten(w.base, "bob"), (a, b) => a && b), 60_000)
      const orphans = [pidOf(w.base, "alice"), pidOf(w.base, "bob")]
      // The records are appended right after each spawn (ProcessRecords.ts); the kill comes after them.
      yield* eventually(Effect.map(recordedEndpoints(w.root), (running) => { return running.length === 2 }), 60_000)
      process.kill(cli.pid, "SIGKILL")
      yield* Deferred.await(cli.exited)
      // The crash left both commands running, and their records say so.
      expect(orphans.map(isAlive)).toEqual([true, true])
      expect(yield* recordedEndpoints(w.root)).toEqual(["stat claude-alice", "stat claude-bob"])
      expect((yield* fs.readDirectory(join(w.root, "state", "processes"))).length).toBe(1) // the killed city's journal

      // The repair: the leftovers are ended (they ignore SIGTERM: SIGKILL after the grace), then
      // each endpoint's command runs once more, never beside the old one.
      const repair = yield* cityProcess(["capability", "sync", "stat", "--json"], { root: w.root })
      expect(repair.code, repair.stderr).toBe(0)
      expect(orphans.map(isAlive)).toEqual([false, false])
      const lines = yield* journal(w.base)
      expect(lines.filter((l) => l.endsWith("overlap"))).toEqual([])
      expect(lines.filter((l) => l.startsWith("alice")).sort()).toEqual(
        ["alice provision-peer start", "alice provision-peer start", "alice provision-peer done"].sort()
      )
      expect(repair.stderr).toMatch(/ended a command left running by pid \d+, which is gone/)
      expect(yield* fs.readDirectory(join(w.root, "state", "processes"))).toEqual([])
    }))

  real("kill -9 of a sweep between two calls: the first call is in the records and in the log, and they agree", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { file, w } = yield* twoPeers
      // alice's first run is let through (a marker says it ran before); bob's holds until killed.
      yield* fs.writeFileString(join(w.base, "alice.ran"), "")
      const cli = yield* startCity(w.root, w.base, [
        "capability",
        "register",
        file,
        "--concurrency",
        "1",
        "--timeout-ms",
        "60000"
      ])
      yield* eventually(pidWritten(w.base, "bob"), 60_000)
      // alice's call is recorded shortly after it ends (EndpointCalls.ts: within 200 ms), while
      // bob's runs; the kill comes then, as a crash between two calls would. Were the records
      // written only at the end of the sweep, this wait would never end.
      const records = join(w.root, "state", "endpoints", "stat.json")
      const logFile = join(w.root, "logs", "lifecycle.log")
      const has = (file: string, text: string) => Effect.orElseSucceed(Effect.map(fs.readFileString(file), (t) => t.includes(text)), () => false)
      // The record is written first, its log line right after (EndpointCalls.ts).
      yield* eventually(has(records, '"alice"'), 60_000)
      yield* eventually(has(logFile, "identity=claude-alice"), 60_000)
      process.kill(cli.pid, "SIGKILL")
      yield* Deferred.await(cli.exited)
      process.kill(pidOf(w.base, "bob"), "SIGKILL")
      const recorded = JSON.parse(yield* fs.readFileString(records))
      expect(Object.keys(recorded.endpoints)).toEqual(["alice"])
      expect(recorded.endpoints.alice.claude).toMatchObject({ state: "ok", occasion: "sweep-on" })
      const log = (yield* fs.readFileString(logFile)).split("\n").filter((l) => l !== "")
      expect(log.length).toBe(1)
      expect(log[0]).toMatch(/capability=stat identity=claude-alice occasion=sweep-on state=ok/)
    }))
})
