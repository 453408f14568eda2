/**
 * Strings that cannot forge output, and verbs that check their arguments and say why they exit
 * non-zero (docs/cli.md, "Exit codes" and "Printing"): control characters refused where a file is
 * decoded, stored text escaped where it is printed, names and runtimes checked before anything is
 * read, a missing root refused by every verb that reads it, every exit 1 ending with what failed.
 * In-process against temp roots; the exit statuses of the process itself with the real binary.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { join } from "node:path"
import { Declaration } from "../../src/schema/Declaration.ts"
import * as Manifest from "../../src/schema/Manifest.ts"
import { Peer } from "../../src/schema/Peer.ts"
import { printableIssue } from "../../src/schema/Printable.ts"
import { city, cityProcess, declaration, json, provisioner, seedOwedReload, seedPeer, world, writeJson } from "./cityCli.ts"

const scenario = (name: string, body: () => Effect.Effect<void, unknown, NodeContext.NodeContext | Scope.Scope>) =>
  it.scopedLive(name, () => body().pipe(Effect.provide(NodeContext.layer)), 60_000)

/** A newline and an ANSI colour: a forged line in red. */
const forged = "1.0\n\u001b[31mforged"

/** Any character the Printable rule refuses, raw. */
const raw = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/

describe("control characters are refused where a file is decoded", () => {
  it("the rule names the first refused character by its code point", () => {
    expect(printableIssue("a\u001b[31m")).toBe("contains U+001B (a control character)")
    expect(printableIssue("1.0\n")).toBe("contains U+000A (a control character)")
    expect(printableIssue("x\u009b31m")).toBe("contains U+009B (a control character)")
    expect(printableIssue("x\u007f")).toBe("contains U+007F (a control character)")
    expect(printableIssue("abc\u202Edef")).toBe("contains U+202E (a bidirectional control character)")
    expect(printableIssue("abc\u2066")).toBe("contains U+2066 (a bidirectional control character)")
    expect(printableIssue("a\u2028b")).toBe("contains U+2028 (a line separator)")
    expect(printableIssue("1.0.0-beta+é ✓")).toBeUndefined()
  })

  it("a declaration, a peer file and a manifest refuse one in their printed fields, naming the field", () => {
    const decl = { ...declaration({ name: "demo", command: "/bin/true" }), version: forged }
    expect(() => Schema.decodeUnknownSync(Declaration)(decl)).toThrow(/version[\s\S]*contains U\+000A \(a control character\)/)
    expect(() => Schema.decodeUnknownSync(Declaration)({ ...decl, version: "1", package: "@x/\u202Eevil" })).toThrow(
      /package[\s\S]*contains U\+202E/
    )
    const peer = { schema: 1, personality: "bob", cwd: "/tmp/\u001b[31mx", runtimes: ["claude"], default_runtime: "claude" }
    expect(() => Schema.decodeUnknownSync(Peer)(peer)).toThrow(/cwd[\s\S]*contains U\+001B/)
    const manifest = { name: "p", version: forged, apiVersion: "1", description: "", entry: "index.mjs" }
    expect(Manifest.decode(manifest)).toEqual({ issues: [{ field: "version", rule: "contains U+000A (a control character)" }] })
    expect(Manifest.decode({ ...manifest, version: "1", description: "red \u001b[31m" })).toEqual({
      issues: [{ field: "description", rule: "contains U+001B (a control character)" }]
    })
    // Every shape accepted before still is: an empty description, any other key kept.
    expect(Manifest.decode({ ...manifest, version: "1", requires: ["x"] })).toHaveProperty("manifest")
  })

  scenario("`capability register` refuses the declaration with exit 2, the file and the field in one escaped line", () =>
    Effect.gen(function*() {
      const w = yield* world
      const tool = yield* provisioner(w.bin, "tool", w.journal)
      yield* seedPeer(w.root, "alice", w.work, ["claude"])
      const file = yield* writeJson(w.work, "demo.json", { ...declaration({ name: "demo", command: tool }), version: forged })
      const r = yield* city(["capability", "register", file], { root: w.root })
      expect(r.code).toBe(2)
      expect(r.stderr).toBe(`city: error: invalid capability declaration ${file}: field "version": contains U+000A (a control character)\n`)
      expect(r.stdout).toBe("")
    }))

  scenario("a peer file and a manifest holding one are reported as invalid, naming the field", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const w = yield* world
      yield* seedPeer(w.root, "alice", w.work, ["claude"])
      yield* writeJson(join(w.root, "peers"), "bob.json", {
        schema: 1,
        personality: "bob",
        cwd: `/tmp/${forged}`,
        runtimes: ["claude"],
        default_runtime: "claude"
      })
      const peers = yield* city(["peer", "list"], { root: w.root })
      expect(peers.code).toBe(0)
      expect(peers.stderr).toContain(`invalid peer file ${join(w.root, "peers", "bob.json")}: field "cwd": contains U+000A (a control character)`)
      expect(peers.stdout + peers.stderr).not.toMatch(raw)

      yield* fs.makeDirectory(join(w.root, "plugins", "red"), { recursive: true })
      yield* writeJson(join(w.root, "plugins", "red"), "city-plugin.json", {
        name: "red",
        version: forged,
        apiVersion: "1",
        description: "",
        entry: "index.mjs"
      })
      const found = yield* city(["plugins", "discover", "--json"], { root: w.root })
      expect(found.code).toBe(0)
      expect(json(found)["plugins"]).toEqual([
        expect.objectContaining({ name: "red", status: "invalid", reason: expect.stringContaining("version: contains U+000A (a control character)") })
      ])
    }))
})

describe("stored text is escaped where it is printed", () => {
  /** A root with a registered capability whose endpoint record holds `text` in its time and detail. */
  const recorded = (text: string) =>
    Effect.gen(function*() {
      const w = yield* world
      const tool = yield* provisioner(w.bin, "tool", w.journal)
      yield* seedPeer(w.root, "alice", w.work, ["claude"])
      const file = yield* writeJson(w.work, "demo.json", declaration({ name: "demo", command: tool, runtimes: ["claude"] }))
      expect((yield* city(["capability", "register", file], { root: w.root })).code).toBe(0)
      yield* writeJson(join(w.root, "state", "endpoints"), "demo.json", {
        schema: 1,
        capability: "demo",
        endpoints: { alice: { claude: { state: "failed", occasion: "sweep-on", at: `2025-01-01${text}`, exit: 1, detail: `boom${text}` } } }
      })
      return w
    })

  scenario("a record holding an escape, a bidirectional override and a C1 control prints them escaped", () =>
    Effect.gen(function*() {
      const w = yield* recorded("\u001b[31m\u202E\u009b2J")
      const listed = yield* city(["capability", "list"], { root: w.root })
      expect(listed.code).toBe(0)
      expect(listed.stdout).not.toMatch(raw)
      expect(listed.stdout).toContain("2025-01-01\\u001b[31m\\u202e\\u009b2J")
    }))

  scenario("--json stays JSON: C0 escaped by JSON itself, C1 and bidirectional controls as \\u escapes, read back unchanged", () =>
    Effect.gen(function*() {
      const text = "\u001b[31m\u202E\u009b2J\u2028"
      const w = yield* recorded(text)
      const listed = yield* city(["capability", "list", "--json"], { root: w.root })
      expect(listed.code).toBe(0)
      expect(listed.stdout).not.toMatch(raw)
      expect(listed.stdout).toContain("\\u009b")
      const capabilities = json(listed)["capabilities"] as ReadonlyArray<{ endpoints: ReadonlyArray<{ last: { at: string } }> }>
      expect(capabilities[0]?.endpoints[0]?.last.at).toBe(`2025-01-01${text}`)
    }))

  scenario("an owed-work record's reason and error reach `status` escaped", () =>
    Effect.gen(function*() {
      const w = yield* world
      yield* seedPeer(w.root, "alice", w.work, ["claude"])
      yield* seedOwedReload(w.root, "alice", "claude", {
        requested: 1,
        applied: 0,
        reason: "x",
        last_error: "nope\u202E\u009b2J",
        updated_at: "2025-01-01T00:00:00Z\u2066"
      })
      const status = yield* city(["status"], { root: w.root })
      expect(status.stdout + status.stderr).not.toMatch(raw)
      expect(status.stdout).toContain("nope\\u202e\\u009b2J")
    }))
})

describe("every verb checks its arguments before it reads anything", () => {
  scenario("the real binary: `reload ../../x` is exit 2 naming the name rule; no file outside the root is read", () =>
    Effect.gen(function*() {
      const w = yield* world
      yield* seedPeer(w.root, "alice", w.work, ["claude"])
      // A valid peer file where `../../x` leads from `peers/`: it must not be read.
      yield* writeJson(w.base, "x.json", { schema: 1, personality: "x", cwd: w.work, runtimes: ["claude"], default_runtime: "claude" })
      const r = yield* cityProcess(["reload", "../../x"], { root: w.root })
      expect(r.code).toBe(2)
      expect(r.stderr).toBe(
        `city: error: invalid personality "../../x": must be 1-64 characters of a-z, 0-9, '.', '_' or '-', starting with a letter or digit\n`
      )
      expect(r.stdout).toBe("")
    }))

  scenario("the real binary: `reload <peer> --runtime nosuch` is exit 2 naming the unknown runtime and the known ones", () =>
    Effect.gen(function*() {
      const w = yield* world
      yield* seedPeer(w.root, "alice", w.work, ["claude"])
      const r = yield* cityProcess(["reload", "alice", "--runtime", "nosuch"], { root: w.root })
      expect(r.code).toBe(2)
      expect(r.stderr).toBe("city: error: unknown runtime nosuch: this host knows claude, codex, opencode, telegram, web (host.json)\n")
      // A known runtime the peer does not declare: refused too, not an empty success.
      const undeclared = yield* city(["reload", "alice", "--runtime", "codex"], { root: w.root })
      expect(undeclared.code).toBe(2)
      expect(undeclared.stderr).toBe("city: error: peer alice does not declare runtime codex\n")
      const bad = yield* city(["reload", "alice", "--runtime", "../x"], { root: w.root })
      expect(bad.code).toBe(2)
      expect(bad.stderr).toContain(`invalid runtime "../x": must be 1-64 characters`)
    }))

  scenario("`peer remove-runtime` checks the personality's name and the runtime as the joints do", () =>
    Effect.gen(function*() {
      const w = yield* world
      yield* seedPeer(w.root, "alice", w.work, ["claude", "codex"])
      yield* writeJson(w.root, "x.json", { schema: 1, personality: "x", cwd: w.work, runtimes: ["claude"], default_runtime: "claude" })
      const path = yield* city(["peer", "remove-runtime", "../x", "claude"], { root: w.root })
      expect(path.code).toBe(2)
      expect(path.stderr).toContain(`city: error: invalid personality "../x": must be 1-64 characters`)
      const unknown = yield* city(["peer", "remove-runtime", "alice", "nosuch"], { root: w.root })
      expect(unknown.code).toBe(2)
      expect(unknown.stderr).toBe("city: error: unknown runtime nosuch: this host knows claude, codex, opencode, telegram, web (host.json)\n")
    }))
})

describe("every non-zero exit says why", () => {
  scenario("the real binary: `status` on a root that does not exist is exit 2 naming it, and creates nothing", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const w = yield* world
      const missing = join(w.base, "nope")
      const r = yield* cityProcess(["status"], { root: missing })
      expect(r.code).toBe(2)
      expect(r.stderr).toMatch(new RegExp(`^city: error: no state root at ${missing}: `))
      expect(r.stdout).toBe("")
      expect(yield* fs.exists(missing)).toBe(false)
    }))

  scenario("every verb that reads the root refuses a missing one with exit 2, --json included", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const w = yield* world
      const missing = join(w.base, "nope")
      for (
        const args of [
          ["status"],
          ["plugins", "list"],
          ["plugins", "discover"],
          ["plugins", "call", "clock", "now"],
          ["peer", "list"],
          ["capability", "list"],
          ["reload", "alice"],
          ["capability", "sync", "demo"],
          ["peer", "remove-runtime", "alice", "claude"]
        ]
      ) {
        const r = yield* city(args, { root: missing })
        expect(r.code, args.join(" ")).toBe(2)
        expect(r.stderr, args.join(" ")).toContain(`city: error: no state root at ${missing}: `)
        const j = yield* city([...args, "--json"], { root: missing })
        expect(j.code, args.join(" ")).toBe(2)
        expect(json(j), args.join(" ")).toMatchObject({ ok: false, error: { _tag: "RootNotFound" } })
      }
      expect(yield* fs.exists(missing)).toBe(false)
    }))

  scenario("a sweep that could not read a peer file exits 1 and ends with that failure, counted in the summary", () =>
    Effect.gen(function*() {
      const w = yield* world
      const tool = yield* provisioner(w.bin, "tool", w.journal)
      yield* seedPeer(w.root, "alice", w.work, ["claude", "codex", "opencode"])
      const file = yield* writeJson(w.work, "demo.json", declaration({ name: "demo", command: tool }))
      expect((yield* city(["capability", "register", file], { root: w.root })).code).toBe(0)
      yield* writeJson(join(w.root, "peers"), "bob.json", { schema: 1, personality: "bob" })
      const r = yield* city(["capability", "sync", "demo"], { root: w.root })
      expect(r.code).toBe(1)
      const lines = r.stdout.trimEnd().split("\n")
      expect(lines.at(-1)).toBe("summary: 3 endpoints: 3 ok; 1 unreadable peer file(s), not attempted")
      // The peer file misses three fields: a line each, the last saying what it cost.
      const bob = `  invalid peer file ${join(w.root, "peers", "bob.json")}`
      expect(lines.slice(-4, -1)).toEqual([
        `${bob}: field "cwd": is missing`,
        `${bob}: field "runtimes": is missing`,
        `${bob}: field "default_runtime": is missing: its endpoints were not attempted`
      ])
      expect(lines.at(-5)).toBe("failed (0 of 3, 1 unreadable peer file(s)):")
      const j = yield* city(["capability", "sync", "demo", "--json"], { root: w.root })
      expect(json(j)["summary"]).toMatchObject({ total: 3, ok: 3, unreadable_peer_files: 1 })
    }))

  scenario("a failed reload says `reload failed` once, and the last line names what was not reloaded", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const w = yield* world
      const status = join(w.bin, "status")
      const reload = join(w.bin, "reload")
      yield* fs.writeFileString(status, "#!/bin/sh\necho idle\n")
      yield* fs.writeFileString(reload, "#!/bin/sh\necho 'runtime refused' >&2\nexit 3\n")
      yield* fs.chmod(status, 0o755)
      yield* fs.chmod(reload, 0o755)
      const cmd = (command: string) => ({ command, args: ["{personality}"] })
      yield* seedPeer(w.root, "alice", w.work, ["claude"])
      yield* writeJson(w.root, "host.json", {
        schema: 1,
        agent_runtimes: ["claude"],
        channel_runtimes: [],
        profiles: { claude: { commands: { status: cmd(status), reload: cmd(reload), retire: cmd(reload), kill: cmd(reload) } } }
      })
      const r = yield* city(["reload", "alice"], { root: w.root })
      expect(r.code).toBe(1)
      expect(r.stdout).toContain("endpoint claude-alice: reload failed: runtime refused")
      expect(r.stdout).not.toContain("failed: failed")
      expect(r.stdout.trimEnd().split("\n").at(-1)).toBe("not reloaded (1 of 1): claude-alice failed")
    }))

  scenario("the real binary: `peer create -rf` names the flag; a JSON failure always has a message", () =>
    Effect.gen(function*() {
      const w = yield* world
      const r = yield* cityProcess(["peer", "create", "-rf"], { root: w.root })
      expect(r.code).toBe(2)
      expect(r.stderr.split("\n")[0]).toBe("city: error: unknown flag '-rf' for 'city peer create'")
      const j = yield* city(["peer", "create", "-rf", "--json"], { root: w.root })
      expect(json(j)).toMatchObject({ ok: false, error: { _tag: "UsageError", message: "unknown flag '-rf' for 'city peer create'" } })
    }))

  scenario("an invalid value of an enum or number option names its flag", () =>
    Effect.gen(function*() {
      const w = yield* world
      const format = yield* city(["daemon", "--log-format", "xml"], { root: w.root })
      expect(format.code).toBe(2)
      expect(format.stderr.split("\n")[0]).toBe("city: error: --log-format expects one of logfmt, json, got 'xml'")
      const poll = yield* city(["daemon", "--poll-ms", "soon"], { root: w.root })
      expect(poll.code).toBe(2)
      expect(poll.stderr.split("\n")[0]).toBe("city: error: --poll-ms expects a whole number of milliseconds, got 'soon'")
    }))

  scenario("`city help [command]` is `city [command] --help`", () =>
    Effect.gen(function*() {
      for (const path of [[], ["peer"], ["peer", "create"], ["capability", "register"], ["status"]]) {
        const help = yield* city(["help", ...path])
        const flag = yield* city([...path, "--help"])
        expect(help.code, path.join(" ")).toBe(0)
        expect(help.stdout, path.join(" ")).toBe(flag.stdout)
        expect(help.stdout, path.join(" ")).toContain("USAGE")
      }
      expect((yield* city(["--help"])).stdout).toMatch(/^ {2}help\s+Show the help of a command/m)
      const unknown = yield* city(["help", "frob"])
      expect(unknown.code).toBe(2)
      expect(unknown.stderr).toContain("unknown command 'frob' for 'city'")
    }))
})
