/**
 * The daemon lock and its pid file (docs/cli.md, "Commands and signals": a second daemon on the
 * same root refuses to start with a clear message), on the module itself over a real temp state
 * root: a daemon holds `daemon.lock` and `daemon.pid` for its Scope and releases both; a start is
 * refused only while the pid file names a process that may be the holder; a pid file naming a dead
 * process, or a live one whose start is not the recorded one (a reused pid), is taken over; a file
 * that is not a daemon record is ignored and replaced. The daemon's own tests through `city daemon`
 * are in test/acceptance/Daemon.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import { spawnSync } from "node:child_process"
import { join } from "node:path"
import * as ProcessIdentity from "../../../src/services/capabilities/ProcessIdentity.ts"
import * as DaemonLock from "../../../src/services/live/DaemonLock.ts"
import { withStateRoot } from "../../fixtures.ts"

const writeRecord = (root: string, record: unknown) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    fs.writeFileString(join(root, DaemonLock.pidFile), typeof record === "string" ? record : JSON.stringify(record)))

const readRecord = (root: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    Effect.map(fs.readFileString(join(root, DaemonLock.pidFile)), (text) => JSON.parse(text) as { pid: number }))

const exists = (root: string, file: string) => Effect.flatMap(FileSystem.FileSystem, (fs) => fs.exists(join(root, file)))

/** The pid of a process that has ended. */
const deadPid = (): number => spawnSync(process.execPath, ["-e", "0"]).pid!

describe("DaemonLock", () => {
  it.scoped("acquire holds the lock and a pid file naming this process for its Scope; closing the Scope releases both", () =>
    withStateRoot((root) =>
      Effect.gen(function*() {
        const life = yield* Scope.make()
        yield* Scope.extend(DaemonLock.acquire, life)
        expect((yield* readRecord(root)).pid).toBe(process.pid)
        expect(yield* exists(root, DaemonLock.lockFolder)).toBe(true)
        expect(Option.map(yield* DaemonLock.running, (r) => r.pid)).toEqual(Option.some(process.pid))
        yield* Scope.close(life, Exit.void)
        expect(yield* exists(root, DaemonLock.pidFile)).toBe(false)
        expect(yield* exists(root, DaemonLock.lockFolder)).toBe(false)
        expect(yield* DaemonLock.running).toEqual(Option.none())
      })
    ))

  it.scoped("a start is refused with DaemonAlreadyRunning, naming the pid and the file, while the pid file names a running daemon", () =>
    withStateRoot((root) =>
      Effect.gen(function*() {
        const other = yield* ProcessIdentity.identify(process.ppid)
        yield* writeRecord(root, { pid: other.pid, started_at: "2026-01-01T00:00:00.000Z", start: other.start })
        const refused = yield* Effect.flip(DaemonLock.acquire)
        expect(refused).toMatchObject({ _tag: "DaemonError", reason: "DaemonAlreadyRunning", root, pid: process.ppid, file: join(root, DaemonLock.pidFile) })
        expect((yield* readRecord(root)).pid).toBe(process.ppid)
      })
    ))

  it.scoped("a pid file naming a dead process (a daemon killed with SIGKILL) is taken over at once, its lock too", () =>
    withStateRoot((root) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        yield* fs.makeDirectory(join(root, DaemonLock.lockFolder), { recursive: true })
        yield* writeRecord(root, { pid: deadPid(), started_at: "2026-01-01T00:00:00.000Z", start: null })
        expect(yield* DaemonLock.running).toEqual(Option.none())
        yield* DaemonLock.acquire
        expect((yield* readRecord(root)).pid).toBe(process.pid)
      })
    ))

  it.scoped("a pid file naming a live process whose start is not the recorded one (a reused pid) is stale", () =>
    withStateRoot((root) =>
      Effect.gen(function*() {
        const other = yield* ProcessIdentity.identify(process.ppid)
        if (other.start === null) return expect.fail("this platform gives no process start: the reused-pid rule cannot be shown here")
        yield* writeRecord(root, { pid: other.pid, started_at: "2026-01-01T00:00:00.000Z", start: `${other.start}-not` })
        expect(yield* DaemonLock.running).toEqual(Option.none())
        yield* DaemonLock.acquire
        expect((yield* readRecord(root)).pid).toBe(process.pid)
      })
    ))

  it.scoped("a pid file that is not a daemon record is ignored and replaced", () =>
    withStateRoot((root) =>
      Effect.gen(function*() {
        yield* writeRecord(root, "not a record")
        expect(yield* DaemonLock.running).toEqual(Option.none())
        yield* DaemonLock.acquire
        expect((yield* readRecord(root)).pid).toBe(process.pid)
      })
    ))
})
