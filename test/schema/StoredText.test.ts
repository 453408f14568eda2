/**
 * The one rule for outside text `city` stores (src/schema/StoredText.ts; docs/cli.md, "Files and
 * permissions"): control characters other than newline and tab escaped, at most 4096 characters,
 * the end kept. Checked on the function, then on what lands on disk: a stderr tail with an ANSI
 * escape and a megabyte of output, stored as an endpoint's last call, an owed reload's last error
 * and a log line, and one from a real command through the in-process `city`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import { join } from "node:path"
import { storedText, storedTextMax } from "../../src/schema/StoredText.ts"
import * as EndpointRecords from "../../src/services/capabilities/EndpointRecords.ts"
import * as LifecycleLog from "../../src/services/capabilities/LifecycleLog.ts"
import { withStateRoot } from "../fixtures.ts"
import * as Reloads from "../../src/services/owed/Reloads.ts"
import { city, declaration, provisioner, world, writeJson } from "../acceptance/cityCli.ts"

/** A stderr tail as a command could leave it: a colour, a secret, a bell, a carriage return, then 1 MB. */
const megabyte = `\u001b[31mpassword=hunter2\u0007\r\n${"x".repeat(1024 * 1024)}\tend\u001b[0m`

/** What a stored form of `megabyte` must be: no raw control but newline and tab, capped, the end kept. */
const expectStored = (stored: string | undefined) => {
  expect(stored).toBeDefined()
  const text = stored ?? ""
  expect(text.length).toBeLessThanOrEqual(storedTextMax)
  expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/)
  expect(text).toMatch(/^… \(\d+ chars cut\) x+\tend\\u001b\[0m$/)
}

describe("storedText", () => {
  it.effect("escapes control characters but newline and tab, as \\u001b-style escapes", () =>
    Effect.sync(() => {
      expect(storedText("\u001b[31mred\u001b[0m \u0007bell\r\n\ttab\u007f\u009b")).toBe(
        "\\u001b[31mred\\u001b[0m \\u0007bell\\u000d\n\ttab\\u007f\\u009b"
      )
      expect(storedText("plain text\nline two")).toBe("plain text\nline two")
      expect(storedText("")).toBe("")
    }))

  it.effect("caps at 4096 characters keeping the end, with the count of what was cut", () =>
    Effect.sync(() => {
      const exact = "y".repeat(storedTextMax)
      expect(storedText(exact)).toBe(exact)
      const long = `${"a".repeat(5000)}THE END`
      const stored = storedText(long)
      expect(stored.length).toBe(storedTextMax)
      const cut = Number(/^… \((\d+) chars cut\) /.exec(stored)?.[1])
      expect(stored.endsWith("THE END")).toBe(true)
      expect(cut + stored.length - `… (${cut} chars cut) `.length).toBe(long.length)
      expectStored(storedText(megabyte))
    }))

  it.effect("a cut never splits an escape or a surrogate pair", () =>
    Effect.sync(() => {
      for (const unit of ["\u001b", "😀"]) {
        for (let extra = 0; extra < 8; extra++) {
          const stored = storedText(unit.repeat(storedTextMax + extra))
          expect(stored.length).toBeLessThanOrEqual(storedTextMax)
          const body = stored.replace(/^… \(\d+ chars cut\) /, "")
          expect(body).toBe(unit === "\u001b" ? "\\u001b".repeat(body.length / 6) : "😀".repeat(body.length / 2))
        }
      }
    }))
})

describe("stored on disk", () => {
  it.scoped("an endpoint's last call, an owed reload's last error and a log line: escaped and capped", () =>
    withStateRoot((root) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const records = yield* EndpointRecords.make
        yield* records.record([{
          capability: "stamp",
          personality: "alice",
          runtime: "claude",
          occasion: "sweep-on",
          state: "failed",
          exit: 1,
          ms: 3,
          detail: megabyte
        }], "2026-01-01T00:00:00.000Z")
        const recorded = JSON.parse(yield* fs.readFileString(join(root, "state", "endpoints", "stamp.json")))
        expectStored(recorded.endpoints.alice.claude.detail)

        const reloads = yield* Reloads.make
        const key = { personality: "alice", runtime: "claude" }
        yield* reloads.request([key], "test")
        yield* reloads.release(key, megabyte)
        const owed = JSON.parse(yield* fs.readFileString(join(root, "state", "reloads", "claude-alice.json")))
        expectStored(owed.last_error)

        const log = yield* LifecycleLog.make()
        yield* log.append([["ev", "capability-provision"], ["detail", megabyte]])
        const line = (yield* fs.readFileString(join(root, "logs", "lifecycle.log"))).trimEnd()
        expect(line.split("\n")).toHaveLength(1)
        expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/)
        // The logfmt value, unquoted, is the stored form.
        const value = /detail="(.*)"$/.exec(line)?.[1] ?? ""
        expectStored(value.replace(/\\(.)/g, (_, c: string) => c === "t" ? "\t" : c === "n" ? "\n" : c))
      })
    ))

  it.scoped("a real command's stderr with an ANSI escape and 1 MB: the stored tail is escaped and capped", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const w = yield* world
      const noisy = yield* provisioner(
        w.bin,
        "noisy",
        w.journal,
        "printf '\\033[31mpassword=hunter2\\n' >&2; head -c 1048576 /dev/zero | tr '\\0' 'x' >&2; printf '\\033[0m\\tend\\033[1m' >&2; exit 1"
      )
      const file = yield* writeJson(w.bin, "stamp.json", declaration({ name: "stamp", command: noisy, runtimes: ["claude"] }))
      expect((yield* city(["peer", "create", "alice", "--cwd", w.work, "--runtime", "claude"], { root: w.root })).code).toBe(0)
      expect((yield* city(["capability", "register", file], { root: w.root })).code).toBe(1)
      const recorded = JSON.parse(yield* fs.readFileString(join(w.root, "state", "endpoints", "stamp.json")))
      const detail: string = recorded.endpoints.alice.claude.detail
      expect(detail.length).toBeLessThanOrEqual(storedTextMax)
      expect(detail).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/)
      expect(detail.endsWith("x\\u001b[0m\tend\\u001b[1m")).toBe(true)
      const log = yield* fs.readFileString(join(w.root, "logs", "lifecycle.log"))
      expect(log).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/)
      expect(log).toContain("\\\\u001b[1m")
    }).pipe(Effect.provide(NodeContext.layer)), 60_000)
})
