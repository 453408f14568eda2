/**
 * The process journals (ProcessRecords.ts) with real processes: each `city` process appends to
 * its own journal, concurrent spawns included; a journal is emptied when idle past
 * `compactAfter` lines and removed when its scope closes with nothing running; recovery ends the
 * leftovers of an owner that is gone, passes over a torn last line, and removes a journal that
 * names no owner; `vacate` waits for this process's own command on an endpoint.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { spawn } from "node:child_process"
import { join } from "node:path"
import * as ProcessRecords from "../../../src/services/capabilities/ProcessRecords.ts"
import { compactAfter } from "../../../src/services/capabilities/internal/processJournal.ts"
import { layout } from "../../../src/services/root/CityRoot.ts"
import * as StateRoot from "../../../src/services/root/StateRoot.ts"
import { isAlive, recordedEndpoints } from "../../fixtures.ts"

/** A real `sleep` leading its own process group, killed (group and all) when the test's scope closes. */
const sleeper = Effect.acquireRelease(
  Effect.sync(() => {
    const child = spawn("sleep", ["30"], { detached: true, stdio: "ignore" })
    if (child.pid === undefined) throw new Error("sleep did not start")
    return child.pid
  }),
  (pid) =>
    Effect.sync(() => {
      try {
        process.kill(-pid, "SIGKILL")
      } catch {
        // already gone
      }
    })
)

/** The records of one state root, built in a scope of their own (closed by the caller). */
const recordsIn = (root: string) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(
      ProcessRecords.layer({ killGrace: "200 millis" }).pipe(Layer.provide(StateRoot.layer({ root }))),
      scope
    )
    return { records: Context.get(context, ProcessRecords.ProcessRecords), scope }
  })

const journalFiles = (root: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    fs.readDirectory(join(root, layout.processes)).pipe(
      Effect.map((names) => names.filter((n) => n.endsWith(".jsonl"))),
      Effect.orElseSucceed(() => [] as Array<string>)
    ))

/** A state root with records, its journals' folder made, and this boot's id. */
const journalWorld = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const root = yield* fs.makeTempDirectoryScoped()
  const dir = join(root, layout.processes)
  const { records } = yield* recordsIn(root)
  const boot = (yield* fs.readFileString("/proc/sys/kernel/random/boot_id")).trim()
  yield* fs.makeDirectory(dir, { recursive: true })
  return { boot, dir, fs, records, root }
})

/** The start ticks of `pid` (field 22 of its stat). */
const ticksOf = (pid: number) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    Effect.map(fs.readFileString(`/proc/${pid}/stat`), (t) => Number(t.slice(t.lastIndexOf(")") + 2).split(" ")[19])))

/** A journal line: `pid` spawned for `endpoint`, started by `startedBy`. */
const spawnedLine = (pid: number, startedBy: string, endpoint: string) =>
  JSON.stringify({ op: "spawned", pid, startedBy, endpoint, command: "sleep", since: "2026-12-02T00:00:00.000Z" })

const live = (
  name: string,
  body: Effect.Effect<void, unknown, FileSystem.FileSystem | Path.Path | Scope.Scope>,
  timeout = 30_000
) =>
  it.scopedLive(name, () => body.pipe(Effect.provide(NodeContext.layer)), timeout)

describe("process journals", () => {
  live("concurrent spawns of one process all land in its one journal; ended ones drop out", Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const root = yield* fs.makeTempDirectoryScoped()
    const { records, scope } = yield* recordsIn(root)
    const pids = yield* Effect.all(Array.from({ length: 8 }, () => sleeper))
    const recorded = yield* Effect.forEach(pids, (pid, i) => records.spawned(`cap claude-p${i}`, pid, "sleep"), {
      concurrency: "unbounded"
    })
    expect(yield* journalFiles(root)).toHaveLength(1)
    expect(yield* recordedEndpoints(root)).toEqual(pids.map((_, i) => `cap claude-p${i}`).sort())
    yield* Effect.forEach(recorded.slice(0, 5), records.ended, { concurrency: "unbounded" })
    // The `ended` lines go with the next `spawned` line.
    expect(yield* recordedEndpoints(root)).toHaveLength(8)
    yield* records.spawned("cap claude-q", pids[0]!, "sleep")
    expect(yield* recordedEndpoints(root)).toEqual(["cap claude-p5", "cap claude-p6", "cap claude-p7", "cap claude-q"])
    // Closed with commands running: the journal stays, for the next recovery.
    yield* Scope.close(scope, Exit.void)
    expect(yield* journalFiles(root)).toHaveLength(1)
  }))

  live("a journal is emptied back to its header when idle past compactAfter lines, and removed at close", Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const root = yield* fs.makeTempDirectoryScoped()
    const { records, scope } = yield* recordsIn(root)
    const pid = yield* sleeper
    const lines = Effect.flatMap(journalFiles(root), (names) =>
      Effect.map(fs.readFileString(join(root, layout.processes, names[0] ?? "none")), (t) =>
        t.split("\n").filter((l) => l !== "").length))
    // The header, then two lines a call (its `spawned` line and the last call's `ended` line, but
    // for the first): 500 calls leave 1,000 lines, the last `ended` one waiting.
    for (let i = 0; i < compactAfter / 2; i++) yield* records.ended(yield* records.spawned("cap claude-a", pid, "sleep"))
    expect(yield* lines).toBe(compactAfter)
    // The next call would take it over the bound with nothing running: back to its header first.
    const again = yield* records.spawned("cap claude-b", pid, "sleep")
    expect(yield* lines).toBe(2)
    expect(yield* recordedEndpoints(root)).toEqual(["cap claude-b"])
    yield* records.ended(again)
    yield* Scope.close(scope, Exit.void)
    expect(yield* journalFiles(root)).toEqual([])
  }))

  live("recovery ends what an owner that is gone left running, passes over a torn line, removes a journal naming no owner", Effect.gen(function*() {
    const { boot, dir, fs, records, root } = yield* journalWorld
    const orphan = yield* sleeper
    // An owner that is gone (no process of that pid started at tick 1 of this boot): its journal
    // names the orphan, then a torn line.
    yield* fs.writeFileString(join(dir, "4194303-dead.jsonl"), [
      JSON.stringify({ schema: 1, owner: { pid: 4_194_303, start: `${boot}:1` } }),
      spawnedLine(orphan, `${boot}:${(yield* ticksOf(orphan)) + 100}`, "cap claude-z"),
      `{"op":"ended","pi`
    ].join("\n"))
    yield* fs.writeFileString(join(dir, "9-garbage.jsonl"), "not a header\n")
    const found = yield* records.recover
    expect(found.map((l) => [l.record.endpoint, l.fate])).toEqual([["cap claude-z", "ended"]])
    expect(isAlive(orphan)).toBe(false)
    expect(yield* journalFiles(root)).toEqual([])
  }))

  live("a pid that started after its record is another process: never signalled", Effect.gen(function*() {
    const { boot, dir, fs, records, root } = yield* journalWorld
    const other = yield* sleeper
    // The record says its command started by tick 1 of this boot: `other` started later.
    yield* fs.writeFileString(join(dir, "4194303-dead.jsonl"), [
      JSON.stringify({ schema: 1, owner: { pid: 4_194_303, start: `${boot}:1` } }),
      spawnedLine(other, `${boot}:1`, "cap claude-z"),
      ""
    ].join("\n"))
    expect(yield* records.recover).toEqual([])
    expect(isAlive(other)).toBe(true)
    expect(yield* journalFiles(root)).toEqual([])
  }))

  live("vacate waits for a live owner's command that still runs, not for one that has ended", Effect.gen(function*() {
    const { boot, dir, fs, records, root } = yield* journalWorld
    const owner = yield* sleeper
    const command = yield* sleeper
    const finished = spawn("true")
    yield* Effect.async<void>((resume) => void finished.once("exit", () => resume(Effect.void)))
    const always = `${boot}:${Number.MAX_SAFE_INTEGER}`
    // A live owner's journal: a command still running on claude-a, one that has ended (its `ended`
    // line not written yet) on claude-b.
    yield* fs.writeFileString(join(dir, `${owner}-live.jsonl`), [
      JSON.stringify({ schema: 1, owner: { pid: owner, start: `${boot}:${yield* ticksOf(owner)}` } }),
      spawnedLine(command, always, "cap claude-a"),
      spawnedLine(finished.pid!, always, "cap claude-b"),
      ""
    ].join("\n"))
    const busy = yield* Effect.either(records.vacate("cap claude-a", "300 millis"))
    expect(busy._tag === "Left" && busy.left.name).toBe("EndpointBusy")
    yield* records.vacate("cap claude-b", "300 millis")
    expect(yield* journalFiles(root)).toHaveLength(1) // a live owner's journal is its own
  }))

  live("vacate waits for this process's own command on the endpoint, then goes on", Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const root = yield* fs.makeTempDirectoryScoped()
    const { records } = yield* recordsIn(root)
    const pid = yield* sleeper
    const recorded = yield* records.spawned("cap claude-a", pid, "sleep")
    const busy = yield* Effect.either(records.vacate("cap claude-a", "300 millis"))
    expect(busy._tag === "Left" && busy.left.name).toBe("EndpointBusy")
    yield* records.vacate("cap claude-b", "300 millis") // another endpoint is free
    yield* records.ended(recorded)
    yield* records.vacate("cap claude-a", "300 millis")
  }))
})
