/**
 * A record that cannot be read stops nothing (docs/cli.md, "Exit codes" and "Stored records that
 * cannot be read"): a FIFO, a directory, bytes that are not UTF-8, a file over the state cap or a
 * truncated JSON under `state/reloads/` or `state/endpoints/` is an `INVALID` row of `city status`
 * and `city capability list` naming the file and the one-line reason (exit 0, as for every invalid
 * file a list reports), and the next call that owns the endpoint records replaces them.
 *
 * And one formatter for every stored document: a truncated owed-work record, endpoint records,
 * peer file, declaration, `host.json`, `plugins.json` and plugin manifest each say
 * `not valid JSON (<reason>)` on one line.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import { join } from "node:path"
import * as Deferred from "effect/Deferred"
import * as Option from "effect/Option"
import { execFileSync } from "node:child_process"
import { eventually } from "../fixtures.ts"
import { startDaemon } from "../support/daemonProcess.ts"
import { city, declaration, json, provisioner, seedOwedReload, seedPeer, unreadable, world, writeJson } from "./cityCli.ts"

/** Every `invalid` entry of a `--json` document. */
const invalidOf = (document: Record<string, unknown>) =>
  document.invalid as ReadonlyArray<{ readonly kind: string; readonly file: string; readonly rule: string; readonly message: string }>

const oneLine = (text: string) => {
  expect(text).not.toMatch(/[\n\r]/)
  expect(text.length).toBeLessThanOrEqual(400)
}

describe("records that cannot be read", () => {
  for (const [kind, make] of unreadable) {
    it.scoped(`${kind} under state/reloads/ and state/endpoints/: INVALID rows, exit 0, and the next call replaces the endpoint records`, () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const w = yield* world
        const tool = yield* provisioner(w.bin, "tool", w.journal)
        yield* fs.makeDirectory(join(w.root, "capabilities"), { recursive: true })
        yield* writeJson(join(w.root, "capabilities"), "c1.json", declaration({ name: "c1", runtimes: ["claude"], command: tool }))
        yield* seedPeer(w.root, "alice", w.work, ["claude"])
        yield* fs.makeDirectory(join(w.root, "state", "reloads"), { recursive: true })
        yield* fs.makeDirectory(join(w.root, "state", "endpoints"), { recursive: true })
        const owed = join(w.root, "state", "reloads", "claude-alice.json")
        const records = join(w.root, "state", "endpoints", "c1.json")
        yield* make(owed)
        yield* make(records)

        const status = yield* city(["status"], { root: w.root })
        expect(status.code, status.stderr).toBe(0)
        const row = status.stdout.split("\n").find((l) => l.startsWith("claude-alice"))
        expect(row).toMatch(/INVALID/)
        expect(row).toContain(owed)
        const statusJson = yield* city(["status", "--json"], { root: w.root })
        expect(statusJson.code).toBe(0)
        const owedInvalid = invalidOf(json(statusJson))
        expect(owedInvalid.map((i) => [i.kind, i.file])).toEqual([["InvalidOwedRecord", owed]])
        for (const i of owedInvalid) [i.rule, i.message].forEach(oneLine)

        const list = yield* city(["capability", "list"], { root: w.root })
        expect(list.code, list.stderr).toBe(0)
        expect(list.stdout).toMatch(new RegExp(`${records}\\s+-\\s+\\S`))
        expect(list.stdout.split("\n").find((l) => l.startsWith("claude-alice"))).toMatch(/INVALID/)
        const listJson = json(yield* city(["capability", "list", "--json"], { root: w.root }))
        expect(invalidOf(listJson).map((i) => i.file).sort()).toEqual([owed, records].sort())
        for (const i of invalidOf(listJson)) [i.rule, i.message].forEach(oneLine)

        const sync = yield* city(["capability", "sync", "c1"], { root: w.root })
        expect(sync.code, sync.stderr).toBe(0)
        expect((yield* fs.stat(records)).type).toBe("File")
        expect(JSON.parse(yield* fs.readFileString(records))).toMatchObject({ capability: "c1", endpoints: { alice: { claude: { state: "ok" } } } })
        const entries = yield* fs.readDirectory(join(w.root, "state", "endpoints"))
        if (kind === "a directory") expect(entries.filter((e) => /^c1\.json\.invalid-\d+$/.test(e))).toHaveLength(1)
        const after = json(yield* city(["capability", "list", "--json"], { root: w.root }))
        expect(invalidOf(after).map((i) => i.file)).toEqual([owed])
      }).pipe(Effect.provide(NodeContext.layer)), 60_000)
  }

  it.scoped("every stored document kind, truncated, says `not valid JSON (<reason>)` on one line", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const w = yield* world
      const torn = "{\"schema\":1,\"na"
      for (const dir of ["capabilities", "peers", "state/endpoints", "state/reloads", "plugins/torn"]) {
        yield* fs.makeDirectory(join(w.root, dir), { recursive: true })
      }
      // The endpoint records of a capability are read for its valid declaration only.
      const tool = yield* provisioner(w.bin, "tool", w.journal)
      yield* writeJson(join(w.root, "capabilities"), "c1.json", declaration({ name: "c1", runtimes: ["claude"], command: tool }))
      yield* fs.writeFileString(join(w.root, "capabilities", "c2.json"), torn)
      yield* fs.writeFileString(join(w.root, "peers", "alice.json"), torn)
      yield* fs.writeFileString(join(w.root, "state", "endpoints", "c1.json"), torn)
      yield* fs.writeFileString(join(w.root, "state", "reloads", "claude-alice.json"), torn)
      const listed = invalidOf(json(yield* city(["capability", "list", "--json"], { root: w.root })))
      expect(listed).toHaveLength(4)
      const rules: Array<string> = listed.map((i) => i.rule)

      yield* fs.writeFileString(join(w.root, "plugins", "torn", "city-plugin.json"), torn)
      const discovered = json(yield* city(["plugins", "discover", "--json"], { root: w.root }))
      const manifest = invalidOf(discovered)
      expect(manifest.map((i) => i.kind)).toEqual(["ManifestInvalid"])
      rules.push(manifest[0]!.rule)

      yield* fs.writeFileString(join(w.root, "plugins.json"), torn)
      const settings = json(yield* city(["plugins", "discover", "--json"], { root: w.root }))
      rules.push((settings.error as { readonly rule: string }).rule)
      yield* fs.remove(join(w.root, "plugins.json"))

      yield* fs.writeFileString(join(w.root, "host.json"), torn)
      const host = json(yield* city(["status", "--json"], { root: w.root }))
      rules.push((host.error as { readonly rule: string }).rule)

      expect(rules).toHaveLength(7)
      for (const rule of rules) {
        expect(rule).toMatch(/^not valid JSON \([^()]+\)$/)
        oneLine(rule)
      }
    }).pipe(Effect.provide(NodeContext.layer)), 60_000)

  it.scopedLive("the real `city daemon` goes on past a FIFO record: it replaces it, owing the reload again, and logs that once", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const w = yield* world
      yield* seedPeer(w.root, "alice", w.work, ["claude"])
      yield* seedPeer(w.root, "bob", w.work, ["claude"])
      yield* seedOwedReload(w.root, "bob", "claude", { requested: 1, applied: 0 })
      const reloads = join(w.root, "state", "reloads")
      const bad = join(reloads, "claude-alice.json")
      execFileSync("mkfifo", [bad])
      const daemon = yield* startDaemon(w.root, w.base, "daemon")
      // Both endpoints are asleep (nothing hosts them): the owed reloads settle, and the records go.
      yield* eventually(Effect.map(fs.readDirectory(reloads), (left) => left.length === 0), 60_000)
      expect(Option.isNone(yield* Deferred.poll(daemon.exited))).toBe(true)
      const log = yield* fs.readFileString(daemon.log)
      expect(log.split("\n").filter((l) => l.includes(`owed-work record ${bad} is invalid`))).toHaveLength(1)
      expect(log).toContain("replaced; the reload it may have stood for is owed again")
    }).pipe(Effect.provide(NodeContext.layer)), 120_000)
})
