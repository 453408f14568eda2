import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import { join } from "node:path"
import * as LifecycleLog from "../../../src/services/capabilities/LifecycleLog.ts"
import { withStateRoot } from "../../fixtures.ts"
import * as StateRoot from "../../../src/services/root/StateRoot.ts"

describe("logfmt", () => {
  it.effect("values with spaces, quotes, = or control characters are quoted and escaped; others are bare", () =>
    Effect.sync(() => {
      expect(LifecycleLog.quote("claude-alice")).toBe("claude-alice")
      expect(LifecycleLog.quote("two words")).toBe("\"two words\"")
      expect(LifecycleLog.quote("a=b")).toBe("\"a=b\"")
      expect(LifecycleLog.quote("say \"hi\"")).toBe("\"say \\\"hi\\\"\"")
      expect(LifecycleLog.quote("back\\slash")).toBe("\"back\\\\slash\"")
      expect(LifecycleLog.quote("line\nbreak\ttab")).toBe("\"line\\nbreak\\ttab\"")
      expect(LifecycleLog.quote("")).toBe("\"\"")
    }))

  it.effect("a line keeps the field order and leaves out unknown values", () =>
    Effect.sync(() => {
      expect(LifecycleLog.formatLine([["ts", "T"], ["ev", "capability-provision"], ["exit", undefined], ["ms", 12], [
        "detail",
        "x y"
      ]])).toBe("ts=T ev=capability-provision ms=12 detail=\"x y\"")
    }))
})

describe("the lifecycle log file", () => {
  it.scoped("is created 0600 and rotates by size, keeping a bounded number of old files", () =>
    withStateRoot((root) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const log = yield* LifecycleLog.make({ maxBytes: 200, keep: 2 })
        for (let i = 0; i < 40; i++) yield* log.append([["ev", "capability-provision"], ["n", i], ["pad", "x".repeat(30)]])
        const logs = (yield* fs.readDirectory(join(root, "logs"))).sort()
        expect(logs).toEqual(["lifecycle.log", "lifecycle.log.1", "lifecycle.log.2"])
        for (const f of logs) {
          expect((yield* fs.stat(join(root, "logs", f))).size).toBeLessThanOrEqual(200)
        }
        expect((yield* fs.stat(join(root, "logs", "lifecycle.log"))).mode & 0o777).toBe(0o600)
        const last = (yield* fs.readFileString(join(root, "logs", "lifecycle.log"))).trim().split("\n").pop()
        expect(last).toContain("n=39")
      })
    ))

  it.scoped("queued lines are written by flush (or when a batch is full), in order, into the same files as append writes", () =>
    withStateRoot((root) =>
      Effect.scoped(Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const read = (f: string) => fs.readFileString(join(root, "logs", f))
        const line = (i: number) => [["ev", "capability-provision"], ["n", i], ["pad", "x".repeat(30)]] as const
        const queued = yield* LifecycleLog.make({ maxBytes: 200, keep: 2, batchLines: 15 })
        for (let i = 0; i < 10; i++) yield* queued.enqueue(line(i))
        expect(yield* fs.exists(join(root, "logs", "lifecycle.log"))).toBe(false)
        for (let i = 10; i < 40; i++) yield* queued.enqueue(line(i))
        // 40 lines in batches of 15: two batches are written, ten lines wait for the flush.
        expect((yield* read("lifecycle.log")).trim().split("\n").pop()).toContain("n=29")
        yield* queued.flush
        const logs = (yield* fs.readDirectory(join(root, "logs"))).sort()
        const batched = yield* Effect.forEach(logs, read)
        // The same 40 lines appended one by one in another root give the same files.
        const other = yield* fs.makeTempDirectoryScoped()
        const appended = yield* Effect.gen(function*() {
          const log = yield* LifecycleLog.make({ maxBytes: 200, keep: 2 })
          for (let i = 0; i < 40; i++) yield* log.append(line(i))
          return yield* Effect.forEach(logs, (f) => fs.readFileString(join(other, "logs", f)))
        }).pipe(Effect.provide(StateRoot.layer({ root: other })))
        expect(logs).toEqual(["lifecycle.log", "lifecycle.log.1", "lifecycle.log.2"])
        expect(batched).toEqual(appended)
        expect((yield* fs.stat(join(root, "logs", "lifecycle.log"))).mode & 0o777).toBe(0o600)
      }))
    ))

  it.scoped("a write failure never fails the operation; it is one warning through the Effect logger", () =>
    withStateRoot((root) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        // `logs` is a file: the log cannot be created under it.
        yield* fs.writeFileString(join(root, "logs"), "not a directory")
        const log = yield* LifecycleLog.make()
        const warnings: Array<string> = []
        const capture = Logger.replace(
          Logger.defaultLogger,
          Logger.make(({ logLevel, message }) => {
            warnings.push(`${logLevel.label} ${String(Array.isArray(message) ? message.join(" ") : message)}`)
          })
        )
        const written = yield* Effect.exit(
          Effect.zipRight(log.append([["ev", "capability-provision"]]), log.append([["ev", "again"]])).pipe(
            Effect.provide(capture)
          )
        )
        expect(written._tag).toBe("Success")
        expect(warnings.length).toBe(1)
        expect(warnings[0]).toMatch(/^WARN cannot write .*lifecycle\.log/)
      })
    ))
})
