/**
 * Acceptance for issue 4 (docs/capability-plugin-lifecycle.md up to "Applying
 * surfaces to a live endpoint"): the `city` command tree run in-process against
 * temp roots, with real provisioner scripts that journal their argv and
 * environment; the scenarios about the process itself (the lock across
 * processes, the environment children inherit, exit codes) run the real binary.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import { join } from "node:path"
import { city, cityProcess, declaration, journalOf, json, provisioner, seedPeer, world, writeJson } from "./cityCli.ts"
import { isAlive } from "../fixtures.ts"


/**
 * One scenario. Scenarios run provisioning commands (real processes), so they
 * get more room than the default when the machine is busy with other test files.
 */
const acceptance = (
  name: string,
  body: () => Effect.Effect<void, unknown, NodeContext.NodeContext | import("effect/Scope").Scope>
) => it.scopedLive(name, () => body().pipe(Effect.provide(NodeContext.layer)), 120_000)

describe("state root", () => {
  acceptance("JSON state is plain, atomically written files; --root and CITY_ROOT both select the root", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const w = yield* world
      const viaFlag = yield* city(["peer", "create", "alice", "--cwd", w.work, "--runtime", "claude", "--root", w.root])
      expect(viaFlag.code).toBe(0)
      const viaEnv = yield* city(["peer", "list", "--json"], { root: w.root })
      expect(json(viaEnv)["peers"]).toEqual([
        { peer: "alice", cwd: w.work, runtimes: ["claude"], default_runtime: "claude" }
      ])
      const onDisk = JSON.parse(yield* fs.readFileString(join(w.root, "peers", "alice.json")))
      expect(onDisk.personality).toBe("alice")
      expect((yield* fs.readDirectory(join(w.root, "peers"))).filter((f) => f.endsWith(".tmp"))).toEqual([])
    }))

  acceptance("10 concurrent `city capability register` processes for different declarations all land intact", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const w = yield* world
      const script = yield* provisioner(w.bin, "prov", w.journal)
      yield* seedPeer(w.root, "alice", w.work, ["claude"])
      const names = Array.from({ length: 10 }, (_, i) => `cap-${i}`)
      const files = yield* Effect.forEach(names, (name) =>
        writeJson(w.bin, `${name}.json`, declaration({ name, command: script })))
      // Real processes: the root lock is taken across processes.
      const runs = yield* Effect.forEach(files, (file) =>
        cityProcess(["capability", "register", file], { root: w.root }), { concurrency: "unbounded" })
      expect(runs.map((r) => r.code)).toEqual(names.map(() => 0))
      const stored = (yield* fs.readDirectory(join(w.root, "capabilities"))).sort()
      expect(stored).toEqual(names.map((n) => `${n}.json`).sort())
      for (const name of names) {
        const text = yield* fs.readFileString(join(w.root, "capabilities", `${name}.json`))
        expect(JSON.parse(text)).toEqual(declaration({ name, command: script }))
      }
      const list = json(yield* city(["capability", "list", "--json"], { root: w.root }))
      expect((list["capabilities"] as Array<unknown>).length).toBe(10)
      const calls = yield* journalOf(w.journal)
      expect(calls.length).toBe(10)
      const log = (yield* fs.readFileString(join(w.root, "logs", "lifecycle.log"))).trim().split("\n")
      expect(log.length).toBe(10)
    }))
})

describe("declarations", () => {
  const base = (command: string) => declaration({ name: "stat", command })
  type Decl = Record<string, unknown>
  const cases: ReadonlyArray<readonly [string, string, (d: Decl) => unknown, string]> = [
    ["schema is 1", "schema", (d) => ({ ...d, schema: 2 }), "must be 1"],
    ["capability is a valid name", "capability", (d) => ({ ...d, capability: "Bad Name" }), "must be 1-64 characters"],
    ["capability equals the file stem", "capability", (d) => ({ ...d, capability: "other" }), "file stem"],
    ["runtimes is non-empty", "runtimes", (d) => ({ ...d, runtimes: [] }), "non-empty"],
    ["runtimes holds strings", "runtimes[0]", (d) => ({ ...d, runtimes: [7] }), "Expected string"],
    ["provision.command is absolute", "provision.command", (d) => ({
      ...d,
      provision: { ...(d["provision"] as Decl), command: "bin/prov" }
    }), "absolute"],
    ["unprovision.command is absolute", "unprovision.command", (d) => ({
      ...d,
      unprovision: { ...(d["unprovision"] as Decl), command: "prov" }
    }), "absolute"],
    ["provision.args is a list of strings", "provision.args[1]", (d) => ({
      ...d,
      provision: { ...(d["provision"] as Decl), args: ["{personality}", 3] }
    }), "Expected string"],
    ["provision.args carries {personality}", "provision.args", (d) => ({
      ...d,
      provision: { ...(d["provision"] as Decl), args: ["{runtime}"] }
    }), "{personality}"],
    ["unprovision.args carries {personality}", "unprovision.args", (d) => ({
      ...d,
      unprovision: { ...(d["unprovision"] as Decl), args: [] }
    }), "{personality}"],
    ["unprovision is present", "unprovision", (d) => ({ ...d, unprovision: undefined }), "is missing"],
    ["no unknown placeholder", "provision.args", (d) => ({
      ...d,
      provision: { ...(d["provision"] as Decl), args: ["{personality}", "{persona}"] }
    }), "unknown placeholder {persona}"],
    ["no unknown field", "unprovison", (d) => ({ ...d, unprovison: {} }), "not a known field"]
  ]

  acceptance("each validation rule is refused with exit 2, its own message naming the file and field, nothing stored", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const w = yield* world
      const script = yield* provisioner(w.bin, "prov", w.journal)
      yield* Effect.forEach(cases, ([rule, field, mutate, words], i) =>
        Effect.gen(function*() {
          const dir = join(w.base, `case-${i}`)
          yield* fs.makeDirectory(dir)
          const file = yield* writeJson(dir, "stat.json", mutate(base(script) as Decl))
          const root = join(dir, "root")
          const run = yield* city(["capability", "register", file], { root })
          expect(run.code, rule).toBe(2)
          expect(run.stderr, rule).toContain(file)
          expect(run.stderr, rule).toContain(`field "${field}"`)
          expect(run.stderr, rule).toContain(words)
          const stored = (yield* fs.exists(join(root, "capabilities")))
            ? yield* fs.readDirectory(join(root, "capabilities"))
            : []
          expect(stored, rule).toEqual([])
        }), { concurrency: 3 })
      // Not JSON at all.
      const broken = join(w.bin, "broken.json")
      yield* fs.writeFileString(broken, "{ nope")
      const run = yield* city(["capability", "register", broken, "--json"], { root: w.root })
      expect(run.code).toBe(2)
      expect(json(run)).toMatchObject({ ok: false, error: { _tag: "InvalidDeclaration", file: broken } })
      expect(yield* journalOf(w.journal)).toEqual([])
    }))

  acceptance("an invalid file placed by hand is reported by list (and by a birth that reads the folder)", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const w = yield* world
      const script = yield* provisioner(w.bin, "prov", w.journal)
      const good = yield* writeJson(w.bin, "good.json", declaration({ name: "good", command: script }))
      expect((yield* city(["capability", "register", good], { root: w.root })).code).toBe(0)
      yield* writeJson(join(w.root, "capabilities"), "hand.json", { ...declaration({ name: "hand", command: "rel" }) })
      const listed = yield* city(["capability", "list"], { root: w.root })
      expect(listed.code).toBe(0)
      expect(listed.stderr).toContain(`invalid capability declaration ${join(w.root, "capabilities", "hand.json")}`)
      expect(listed.stderr).toContain("provision.command")
      expect(listed.stdout).toContain("INVALID")
      const asJson = json(yield* city(["capability", "list", "--json"], { root: w.root }))
      expect(asJson["invalid"]).toMatchObject([{ file: join(w.root, "capabilities", "hand.json"), field: "provision.command" }])
      const birth = yield* city(["peer", "create", "alice", "--cwd", w.work, "--runtime", "claude"], { root: w.root })
      expect(birth.code).toBe(0)
      expect(birth.stderr).toContain("hand.json")
      // The valid one still provisioned the new endpoint.
      expect((yield* journalOf(w.journal)).map((c) => c.args[0])).toEqual(["provision-peer"])
      yield* fs.remove(join(w.root, "capabilities", "hand.json"))
    }))

  acceptance("list shows each declaration, its version, its endpoints and their last state", () =>
    Effect.gen(function*() {
      const w = yield* world
      const script = yield* provisioner(w.bin, "prov", w.journal)
      yield* seedPeer(w.root, "alice", w.work, ["claude", "codex"])
      const file = yield* writeJson(w.bin, "stat.json", declaration({ name: "stat", command: script, version: "2.3.4" }))
      yield* city(["capability", "register", file], { root: w.root })
      const table = yield* city(["capability", "list"], { root: w.root })
      expect(table.code).toBe(0)
      expect(table.stdout).toMatch(/stat\s+2\.3\.4\s+alice\s+claude\s+ok\s+sweep-on/)
      expect(table.stdout).toMatch(/stat\s+2\.3\.4\s+alice\s+codex\s+ok\s+sweep-on/)
      const listed = json(yield* city(["capability", "list", "--json"], { root: w.root }))
      expect(listed["capabilities"]).toMatchObject([{
        capability: "stat",
        version: "2.3.4",
        endpoints: [
          { peer: "alice", runtime: "claude", last: { state: "ok", occasion: "sweep-on" } },
          { peer: "alice", runtime: "codex", last: { state: "ok", occasion: "sweep-on" } }
        ]
      }])
    }))
})

describe("peers and endpoints", () => {
  acceptance("endpoints: claude+telegram peers against a claude+codex declaration are the claude ones only", () =>
    Effect.gen(function*() {
      const w = yield* world
      const script = yield* provisioner(w.bin, "prov", w.journal)
      for (const p of ["alice", "bob"]) yield* seedPeer(w.root, p, w.work, ["claude", "telegram"])
      const file = yield* writeJson(w.bin, "stat.json", declaration({ name: "stat", command: script, runtimes: ["claude", "codex"] }))
      const run = yield* city(["capability", "register", file, "--json"], { root: w.root })
      expect(run.code).toBe(0)
      const outcomes = json(run)["outcomes"] as Array<{ peer: string; runtime: string }>
      expect(outcomes.map((o) => `${o.peer}/${o.runtime}`)).toEqual(["alice/claude", "bob/claude"])
      const calls = yield* journalOf(w.journal)
      // The calls run concurrently: the journal's order is the scheduler's, so compare as a set.
      expect(calls.map((c) => c.args.slice(1, 3)).sort()).toEqual([["alice", "claude"], ["bob", "claude"]])
    }))

  acceptance("init, add-runtime, default-runtime, remove-runtime and list manage a peer's runtimes", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const w = yield* world
      const script = yield* provisioner(w.bin, "prov", w.journal)
      const file = yield* writeJson(w.bin, "stat.json", declaration({ name: "stat", command: script }))
      expect((yield* city(["capability", "register", file], { root: w.root })).code).toBe(0)
      const here = join(w.base, "carol")
      yield* fs.makeDirectory(here)
      const init = yield* city(["peer", "init", "--runtime", "claude", "--json"], { root: w.root, cwd: here })
      expect(init.code).toBe(0)
      expect(json(init)).toMatchObject({ peer: "carol", cwd: here, default_runtime: "claude" })
      const added = yield* city(["peer", "add-runtime", "carol", "codex"], { root: w.root })
      expect(added.code).toBe(0)
      const converged = yield* city(["peer", "default-runtime", "carol", "opencode", "--json"], { root: w.root })
      expect(json(converged)).toMatchObject({ wired: true, default_runtime: "opencode" })
      const noop = yield* city(["peer", "default-runtime", "carol", "claude", "--json"], { root: w.root })
      expect(json(noop)).toMatchObject({ wired: false, outcomes: [] })
      const removed = yield* city(["peer", "remove-runtime", "carol", "codex"], { root: w.root })
      expect(removed.code).toBe(0)
      const calls = yield* journalOf(w.journal)
      expect(calls.map((c) => `${c.args[0]} ${c.args[2]} ${c.args[4]}`)).toEqual([
        "provision-peer claude birth",
        "provision-peer codex birth",
        "provision-peer opencode birth",
        "unprovision-peer codex remove"
      ])
      const listed = json(yield* city(["peer", "list", "--json"], { root: w.root }))
      expect(listed["peers"]).toMatchObject([{ peer: "carol", runtimes: ["claude", "opencode"], default_runtime: "claude" }])
      const text = yield* city(["peer", "list"], { root: w.root })
      expect(text.stdout).toMatch(/carol\s+claude\s+claude,opencode/)
      // Refusals: unknown runtime, the default runtime, a runtime not declared.
      expect((yield* city(["peer", "add-runtime", "carol", "cluade"], { root: w.root })).code).toBe(2)
      expect((yield* city(["peer", "remove-runtime", "carol", "claude"], { root: w.root })).code).toBe(2)
      expect((yield* city(["peer", "remove-runtime", "carol", "codex"], { root: w.root })).code).toBe(2)
    }))
})

describe("running the commands", () => {
  acceptance("substitution is per argument: --cwd={cwd} with a space stays one argument; metacharacters pass literally", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const w = yield* world
      const cwd = join(w.base, "my dir $(id)")
      yield* fs.makeDirectory(cwd)
      const script = yield* provisioner(w.bin, "prov", w.journal)
      yield* seedPeer(w.root, "alice", cwd, ["claude"])
      const file = yield* writeJson(w.bin, "stat.json", declaration({
        name: "stat",
        command: script,
        provisionArgs: ["--cwd={cwd}", "--who={personality}/{runtime}", "$(id); rm -rf /", "`id` | cat > x &", "{occasion}"]
      }))
      const run = yield* city(["capability", "register", file], { root: w.root })
      expect(run.code).toBe(0)
      const calls = yield* journalOf(w.journal)
      expect(calls.map((c) => c.args)).toEqual([
        [`--cwd=${cwd}`, "--who=alice/claude", "$(id); rm -rf /", "`id` | cat > x &", "sweep-on"]
      ])
    }))

  acceptance("{privateDir} on claude fails before spawn; on opencode it is substituted and exported as CITY_PRIVATE_DIR", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const w = yield* world
      const script = yield* provisioner(w.bin, "prov", w.journal)
      yield* seedPeer(w.root, "alice", w.work, ["claude"])
      const file = yield* writeJson(w.bin, "stat.json", declaration({
        name: "stat",
        command: script,
        provisionArgs: ["provision-peer", "{personality}", "--dir={privateDir}"]
      }))
      const run = yield* city(["capability", "register", file, "--json"], { root: w.root })
      expect(run.code).toBe(1)
      expect(json(run)["outcomes"]).toMatchObject([{ peer: "alice", runtime: "claude", state: "failed" }])
      expect((json(run)["outcomes"] as Array<{ detail: string }>)[0]?.detail).toContain("{privateDir}")
      expect(yield* journalOf(w.journal)).toEqual([])
      // opencode: substituted, exported, and the directory exists for the plugin.
      const add = yield* city(["peer", "add-runtime", "alice", "opencode", "--json"], { root: w.root })
      expect(add.code).toBe(0)
      const dir = join(w.root, "state", "opencode", "alice")
      expect(yield* journalOf(w.journal)).toEqual([{ args: ["provision-peer", "alice", `--dir=${dir}`], env: dir }])
      expect(yield* fs.exists(dir)).toBe(true)
    }))

  acceptance("CITY_PRIVATE_DIR is exported for every call on a runtime with a private dir, and removed elsewhere", () =>
    Effect.gen(function*() {
      const w = yield* world
      const script = yield* provisioner(w.bin, "prov", w.journal)
      const file = yield* writeJson(w.bin, "stat.json", declaration({ name: "stat", command: script }))
      yield* city(["capability", "register", file], { root: w.root })
      // A real process, so that a stale CITY_PRIVATE_DIR really is in the environment children inherit.
      yield* cityProcess(["peer", "create", "alice", "--cwd", w.work, "--runtime", "claude", "--runtime", "opencode"], {
        root: w.root,
        env: { CITY_PRIVATE_DIR: "/stale/from/parent" }
      })
      yield* city(["peer", "remove", "alice"], { root: w.root })
      const calls = yield* journalOf(w.journal)
      const dir = join(w.root, "state", "opencode", "alice")
      // The calls of one joint run concurrently: compared as a set.
      const seen = (verb: string) =>
        calls.filter((c) => c.args[0] === verb).map((c) => `${c.args[2]} ${c.env}`).sort()
      expect(calls.length).toBe(4)
      expect(seen("provision-peer")).toEqual([`claude <unset>`, `opencode ${dir}`])
      expect(seen("unprovision-peer")).toEqual([`claude <unset>`, `opencode ${dir}`])
    }))

  acceptance("exit 3 with stderr is `failed exit=3` with the tail of stderr; a huge stderr is bounded", () =>
    Effect.gen(function*() {
      const w = yield* world
      const noisy = yield* provisioner(
        w.bin,
        "noisy",
        w.journal,
        "head -c 3000000 /dev/zero | tr '\\0' 'x' >&2; echo >&2; echo 'the real reason' >&2; exit 3"
      )
      yield* seedPeer(w.root, "alice", w.work, ["claude"])
      const file = yield* writeJson(w.bin, "stat.json", declaration({ name: "stat", command: noisy }))
      const run = yield* city(["capability", "register", file, "--json"], { root: w.root })
      expect(run.code).toBe(1)
      const outcome = (json(run)["outcomes"] as Array<{ state: string; exit: number; detail: string }>)[0]
      expect(outcome?.state).toBe("failed")
      expect(outcome?.exit).toBe(3)
      expect(outcome?.detail.endsWith("the real reason")).toBe(true)
      expect(outcome?.detail.length).toBeLessThanOrEqual(4096)
      const text = yield* city(["capability", "sync", "stat"], { root: w.root })
      expect(text.stdout).toMatch(/alice\s+claude\s+sweep-on\s+failed\s+-\s+3/)
    }))

  acceptance("a command that ignores SIGTERM and outlives a short timeout is `timeout`, and no process is left", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const w = yield* world
      const pids = join(w.base, "pids")
      const stubborn = yield* provisioner(
        w.bin,
        "stubborn",
        w.journal,
        `trap '' TERM\necho $$ >> '${pids}'\nsleep 60 &\necho $! >> '${pids}'\nwait\nwait`
      )
      yield* seedPeer(w.root, "alice", w.work, ["claude"])
      const file = yield* writeJson(w.bin, "stat.json", declaration({ name: "stat", command: stubborn }))
      const run = yield* city(["capability", "register", file, "--timeout-ms", "1000", "--json"], { root: w.root })
      expect(run.code).toBe(1)
      expect(json(run)["outcomes"]).toMatchObject([{ peer: "alice", runtime: "claude", state: "timeout" }])
      const started = (yield* fs.readFileString(pids)).trim().split("\n").map(Number)
      expect(started.length).toBe(2)
      expect(started.filter(isAlive)).toEqual([])
    }))

  acceptance("a missing or non-executable command is `not-executable`", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const w = yield* world
      const plain = join(w.bin, "plain")
      yield* fs.writeFileString(plain, "#!/bin/sh\nexit 0\n")
      yield* seedPeer(w.root, "alice", w.work, ["claude"])
      for (const [name, command] of [["missing", join(w.bin, "does-not-exist")], ["plain", plain]] as const) {
        const file = yield* writeJson(w.bin, `${name}.json`, declaration({ name, command }))
        const run = yield* city(["capability", "register", file, "--json"], { root: w.root })
        expect(run.code, name).toBe(1)
        expect(json(run)["outcomes"], name).toMatchObject([{ peer: "alice", runtime: "claude", state: "not-executable" }])
      }
    }))

  acceptance("stdin is closed: a command that reads stdin sees EOF at once", () =>
    Effect.gen(function*() {
      const w = yield* world
      const reader = yield* provisioner(w.bin, "reader", w.journal, `cat > /dev/null; echo read-eof >> '${w.journal}.eof'`)
      yield* seedPeer(w.root, "alice", w.work, ["claude"])
      const file = yield* writeJson(w.bin, "stat.json", declaration({ name: "stat", command: reader }))
      const run = yield* city(["capability", "register", file, "--timeout-ms", "20000", "--json"], { root: w.root })
      expect(json(run)["outcomes"]).toMatchObject([{ state: "ok" }])
    }))

  acceptance("every call appends one logfmt line with exactly the spec's fields; the log is 0600", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const w = yield* world
      const ok = yield* provisioner(w.bin, "ok", w.journal)
      const bad = yield* provisioner(w.bin, "bad", w.journal, "echo 'no \"luck\" a=b' >&2; exit 3")
      yield* seedPeer(w.root, "alice", w.work, ["claude"])
      const good = yield* writeJson(w.bin, "good.json", declaration({ name: "good", command: ok }))
      const failing = yield* writeJson(w.bin, "failing.json", declaration({ name: "failing", command: bad }))
      yield* city(["capability", "register", good], { root: w.root })
      yield* city(["capability", "register", failing], { root: w.root })
      const logFile = join(w.root, "logs", "lifecycle.log")
      const lines = (yield* fs.readFileString(logFile)).trim().split("\n")
      expect(lines.length).toBe(2)
      expect(lines[0]).toMatch(
        /^ts=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z ev=capability-provision capability=good identity=claude-alice occasion=sweep-on state=ok exit=0 ms=\d+$/
      )
      expect(lines[1]).toMatch(
        /^ts=\S+ ev=capability-provision capability=failing identity=claude-alice occasion=sweep-on state=failed exit=3 ms=\d+ detail="no \\"luck\\" a=b"$/
      )
      expect((yield* fs.stat(logFile)).mode & 0o777).toBe(0o600)
    }))
})

describe("joints and failure policy", () => {
  acceptance("birth with a failing provisioner still creates the peer (loud warning, exit 0)", () =>
    Effect.gen(function*() {
      const w = yield* world
      const bad = yield* provisioner(w.bin, "bad", w.journal, "echo 'cannot write hooks' >&2; exit 4")
      const file = yield* writeJson(w.bin, "stat.json", declaration({ name: "stat", command: bad }))
      expect((yield* city(["capability", "register", file], { root: w.root })).code).toBe(0)
      const born = yield* city(["peer", "create", "alice", "--cwd", w.work, "--runtime", "claude"], { root: w.root })
      expect(born.code).toBe(0)
      expect(born.stderr).toContain("warning: capability stat birth for peer alice runtime claude: failed exit=4: cannot write hooks")
      const listed = json(yield* city(["peer", "list", "--json"], { root: w.root }))
      expect(listed["peers"]).toMatchObject([{ peer: "alice" }])
      expect((yield* journalOf(w.journal)).map((c) => c.args[4])).toEqual(["birth"])
    }))

  acceptance("remove with a failing unprovisioner still removes the peer, and unprovision ran before the purge", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const w = yield* world
      const peerFile = join(w.root, "peers", "alice.json")
      const privateDir = join(w.root, "state", "opencode", "alice")
      const seen = join(w.base, "seen")
      const prov = yield* provisioner(w.bin, "prov", w.journal)
      const unprov = yield* provisioner(
        w.bin,
        "unprov",
        w.journal,
        `[ -f '${peerFile}' ] && echo "peer-file $3" >> '${seen}'\n[ -d '${privateDir}' ] && echo "private-dir $3" >> '${seen}'\necho 'refusing' >&2\nexit 1`
      )
      const file = yield* writeJson(w.bin, "stat.json", declaration({ name: "stat", command: prov, unprovisionCommand: unprov }))
      yield* city(["capability", "register", file], { root: w.root })
      yield* city(["peer", "create", "alice", "--cwd", w.work, "--runtime", "claude", "--runtime", "opencode"], { root: w.root })
      expect(yield* fs.exists(privateDir)).toBe(true)
      const removed = yield* city(["peer", "remove", "alice"], { root: w.root })
      expect(removed.code).toBe(0)
      expect(removed.stderr).toContain("warning: capability stat remove for peer alice runtime claude: failed exit=1")
      expect((yield* fs.readFileString(seen)).trim().split("\n").sort()).toEqual([
        "peer-file claude",
        "peer-file opencode",
        "private-dir claude",
        "private-dir opencode"
      ])
      expect(yield* fs.exists(peerFile)).toBe(false)
      expect(yield* fs.exists(privateDir)).toBe(false)
      expect(json(yield* city(["peer", "list", "--json"], { root: w.root }))["peers"]).toEqual([])
      expect((yield* journalOf(w.journal)).filter((c) => c.args[0] === "unprovision-peer").map((c) => c.args[4]))
        .toEqual(["remove", "remove"])
    }))

  acceptance("a sweep with one failing endpoint of three attempts all three and exits 1", () =>
    Effect.gen(function*() {
      const w = yield* world
      const flaky = yield* provisioner(w.bin, "flaky", w.journal, `[ "$2" = bob ] && { echo 'bob is broken' >&2; exit 2; }\nexit 0`)
      for (const p of ["alice", "bob", "carol"]) {
        yield* seedPeer(w.root, p, w.work, ["claude"])
      }
      const file = yield* writeJson(w.bin, "stat.json", declaration({ name: "stat", command: flaky }))
      const run = yield* city(["capability", "register", file, "--concurrency", "2"], { root: w.root })
      expect(run.code).toBe(1)
      expect(run.stdout).toMatch(/alice\s+claude\s+sweep-on\s+ok/)
      expect(run.stdout).toMatch(/bob\s+claude\s+sweep-on\s+failed\s+-\s+2\s+\d+\s+bob is broken/)
      expect(run.stdout).toMatch(/carol\s+claude\s+sweep-on\s+ok/)
      expect(run.stdout).toContain("summary: 3 endpoints: 1 failed, 2 ok")
      expect((yield* journalOf(w.journal)).map((c) => c.args[1]).sort()).toEqual(["alice", "bob", "carol"])
    }))

  acceptance("re-registering a new version replaces the declaration and re-sweeps; sync repairs; unregister runs off-all then deletes", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const w = yield* world
      const declFile = join(w.root, "capabilities", "stat.json")
      const prov = yield* provisioner(w.bin, "prov", w.journal, `[ "$5" = off-all ] && [ -f '${declFile}' ] && echo still-declared >> '${w.journal}.off'\nexit 0`)
      yield* seedPeer(w.root, "alice", w.work, ["claude"])
      yield* seedPeer(w.root, "bob", w.work, ["codex"])
      const v1 = yield* writeJson(w.bin, "stat.json", declaration({ name: "stat", command: prov, version: "1.0.0" }))
      expect((yield* city(["capability", "register", v1, "--concurrency", "1"], { root: w.root })).code).toBe(0)
      const v2 = yield* writeJson(join(w.base, "work"), "stat.json", declaration({ name: "stat", command: prov, version: "2.0.0" }))
      expect((yield* city(["capability", "register", v2, "--concurrency", "1"], { root: w.root })).code).toBe(0)
      expect(JSON.parse(yield* fs.readFileString(declFile)).version).toBe("2.0.0")
      expect((yield* city(["capability", "sync", "stat", "--concurrency", "1"], { root: w.root })).code).toBe(0)
      const off = yield* city(["capability", "unregister", "stat", "--json", "--concurrency", "1"], { root: w.root })
      expect(off.code).toBe(0)
      expect(yield* fs.exists(declFile)).toBe(false)
      expect((yield* fs.readFileString(`${w.journal}.off`)).trim().split("\n")).toEqual(["still-declared", "still-declared"])
      const calls = yield* journalOf(w.journal)
      expect(calls.map((c) => `${c.args[0]} ${c.args[2]}-${c.args[1]} ${c.args[4]}`)).toEqual([
        "provision-peer claude-alice sweep-on",
        "provision-peer codex-bob sweep-on",
        "provision-peer claude-alice sweep-on",
        "provision-peer codex-bob sweep-on",
        "provision-peer claude-alice sweep-on",
        "provision-peer codex-bob sweep-on",
        "unprovision-peer claude-alice off-all",
        "unprovision-peer codex-bob off-all"
      ])
    }))

  acceptance("--json on every verb prints one JSON document on stdout", () =>
    Effect.gen(function*() {
      const w = yield* world
      const script = yield* provisioner(w.bin, "prov", w.journal)
      const file = yield* writeJson(w.bin, "stat.json", declaration({ name: "stat", command: script }))
      const verbs: ReadonlyArray<readonly [ReadonlyArray<string>, Record<string, unknown>]> = [
        [["capability", "register", file], { ok: true, verb: "capability register" }],
        [["peer", "create", "alice", "--cwd", w.work, "--runtime", "claude", "--runtime", "codex"], { ok: true, verb: "peer create" }],
        [["capability", "sync", "stat"], { ok: true, verb: "capability sync", summary: { total: 2, ok: 2, failed: 0 } }],
        [["peer", "remove-runtime", "alice", "codex"], { ok: true, verb: "peer remove-runtime" }],
        [["peer", "list"], { ok: true, verb: "peer list", peers: [{ peer: "alice" }] }],
        [["capability", "list"], { ok: true, verb: "capability list", capabilities: [{ capability: "stat" }] }],
        [["peer", "remove", "alice"], { ok: true, verb: "peer remove" }],
        [["capability", "unregister", "stat"], { ok: true, verb: "capability unregister" }]
      ]
      for (const [args, expected] of verbs) {
        const run = yield* city([...args, "--json"], { root: w.root })
        expect(run.code, args.join(" ")).toBe(0)
        expect(json(run), args.join(" ")).toMatchObject(expected)
      }
    }))

  acceptance("exit 2 for unknown capability, unknown peer and bad usage (real processes: the exit status)", () =>
    Effect.gen(function*() {
      const w = yield* world
      // An existing root: the names are unknown in it (a missing root is its own refusal).
      yield* (yield* FileSystem.FileSystem).makeDirectory(w.root)
      const runs = yield* Effect.forEach([
        ["capability", "sync", "nothing"],
        ["capability", "unregister", "nothing"],
        ["peer", "remove", "nobody"],
        ["peer", "add-runtime", "nobody", "claude"],
        ["peer", "create", "alice", "--cwd", w.work],
        ["peer", "create", "alice", "--cwd", join(w.base, "absent"), "--runtime", "claude"],
        ["capability", "frobnicate"]
      ], (args) => Effect.map(cityProcess(args, { root: w.root }), (r) => [args.join(" "), r.code] as const), {
        concurrency: 3
      })
      expect(runs).toEqual(runs.map(([args]) => [args, 2]))
    }))
})

describe("defects found by use (issue 8)", () => {
  acceptance("a provisioner that exits 0 leaving `sleep 60 &` on its stderr is ok, and the sweep exits 0 at once", () =>
    Effect.gen(function*() {
      const w = yield* world
      const leaver = yield* provisioner(w.bin, "leaver", w.journal, "sleep 60 &\nexit 0")
      yield* seedPeer(w.root, "alice", w.work, ["claude"])
      const file = yield* writeJson(w.bin, "stat.json", declaration({ name: "stat", command: leaver }))
      // With a 60 s timeout the old runner waited for the end of stderr: timeout, exit 1.
      const run = yield* city(["capability", "register", file, "--json", "--timeout-ms", "60000"], { root: w.root })
      expect(run.code).toBe(0)
      expect(json(run)["outcomes"]).toMatchObject([{ peer: "alice", runtime: "claude", state: "ok" }])
    }))

  acceptance("--timeout-ms 0 or below and --concurrency below 1 are refused with exit 2; unregister keeps the declaration", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const w = yield* world
      const script = yield* provisioner(w.bin, "prov", w.journal)
      yield* seedPeer(w.root, "alice", w.work, ["claude"])
      yield* fs.makeDirectory(join(w.root, "capabilities"))
      yield* writeJson(join(w.root, "capabilities"), "stat.json", declaration({ name: "stat", command: script }))
      const runs = yield* Effect.forEach(
        [["--timeout-ms", "0"], ["--timeout-ms", "-1"], ["--concurrency", "0"]],
        (flag) => city(["capability", "unregister", "stat", ...flag], { root: w.root }),
        { concurrency: 3 }
      )
      expect(runs.map((r) => r.code)).toEqual([2, 2, 2])
      expect(runs[0]?.stderr).toContain("invalid timeout 0 ms: must be at least 1 ms")
      expect(runs[1]?.stderr).toContain("invalid timeout -1 ms")
      expect(runs[2]?.stderr).toContain("invalid concurrency 0")
      expect(yield* fs.exists(join(w.root, "capabilities", "stat.json"))).toBe(true)
      expect(yield* journalOf(w.journal)).toEqual([])
    }))

  acceptance("an inaccessible root: clean stdout (valid JSON under --json), one line on stderr, exit 1", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const w = yield* world
      const file = join(w.base, "f")
      yield* fs.writeFileString(file, "")
      const [asJson, asText] = yield* Effect.all([
        city(["peer", "list", "--json", "--root", join(file, "sub")]),
        city(["capability", "list", "--root", join(file, "sub")])
      ], { concurrency: 2 })
      expect(asJson.code).toBe(1)
      expect(json(asJson)).toMatchObject({ ok: false, error: { _tag: "StateError" } })
      expect(asJson.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^city: error: .*ENOTDIR/)])
      expect(asText.code).toBe(1)
      expect(asText.stdout).toBe("")
      expect(asText.stderr.trim().split("\n").length).toBe(1)
    }))

  acceptance("read-only verbs on a missing root report it (exit 2) and create nothing", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const w = yield* world
      const typo = join(w.base, "typo")
      const runs = yield* Effect.all([
        city(["peer", "list", "--root", typo]),
        city(["capability", "list", "--json"], { root: typo })
      ], { concurrency: 2 })
      expect(runs.map((r) => r.code)).toEqual([2, 2])
      expect(runs[0]?.stderr).toContain(`no state root at ${typo}`)
      expect(runs[0]?.stdout).not.toContain("no peers")
      expect(json(runs[1] ?? { code: 0, stdout: "{}", stderr: "" })).toMatchObject({ ok: false, error: { _tag: "RootNotFound" } })
      expect(yield* fs.exists(typo)).toBe(false)
    }))

  acceptance("control characters and ANSI sequences from a plugin's stderr are escaped in tables and warnings", () =>
    Effect.gen(function*() {
      const w = yield* world
      const ansi = yield* provisioner(w.bin, "ansi", w.journal, "printf '\\033[31mred\\033[0m \\007bell' >&2; exit 1")
      const file = yield* writeJson(w.bin, "stat.json", declaration({ name: "stat", command: ansi }))
      yield* seedPeer(w.root, "bob", w.work, ["claude"])
      const swept = yield* city(["capability", "register", file], { root: w.root })
      expect(swept.code).toBe(1)
      expect(swept.stdout).toContain("\\u001b[31mred\\u001b[0m \\u0007bell")
      expect(swept.stdout).not.toContain("\u001b")
      const born = yield* city(["peer", "create", "alice", "--cwd", w.work, "--runtime", "claude"], { root: w.root })
      expect(born.code).toBe(0)
      expect(born.stderr).toContain("\\u001b[31mred")
      expect(born.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/)
    }))

  acceptance("a corrupt peer file or declaration: refused with a hint (exit 2); --force removes it and says what stays", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const w = yield* world
      const script = yield* provisioner(w.bin, "prov", w.journal)
      const file = yield* writeJson(w.bin, "stat.json", declaration({ name: "stat", command: script }))
      yield* seedPeer(w.root, "alice", w.work, ["claude"])
      yield* seedPeer(w.root, "bob", w.work, ["codex"])
      expect((yield* city(["capability", "register", file], { root: w.root })).code).toBe(0)
      yield* fs.writeFileString(join(w.root, "peers", "alice.json"), "{ torn")
      yield* fs.writeFileString(join(w.root, "capabilities", "stat.json"), "{ torn")
      const [peerRefused, capRefused] = yield* Effect.all([
        city(["peer", "remove", "alice"], { root: w.root }),
        city(["capability", "unregister", "stat"], { root: w.root })
      ], { concurrency: 2 })
      expect(peerRefused.code).toBe(2)
      expect(peerRefused.stderr).toContain("city peer remove alice --force")
      expect(capRefused.code).toBe(2)
      expect(capRefused.stderr).toContain("city capability unregister stat --force")
      const peerForced = yield* city(["peer", "remove", "alice", "--force"], { root: w.root })
      expect(peerForced.code).toBe(0)
      expect(peerForced.stderr).toContain("capability stat remove for peer alice runtime claude: failed")
      expect(peerForced.stderr).toContain("not unprovisioned: the peer file is invalid")
      expect(yield* fs.exists(join(w.root, "peers", "alice.json"))).toBe(false)
      const capForced = yield* city(["capability", "unregister", "stat", "--force", "--json"], { root: w.root })
      expect(capForced.code).toBe(1)
      expect(json(capForced)).toMatchObject({
        ok: false,
        verdict: "failed",
        outcomes: [{ peer: "bob", runtime: "codex", occasion: "off-all", state: "failed" }]
      })
      expect(yield* fs.exists(join(w.root, "capabilities", "stat.json"))).toBe(false)
      // Only the sweep of register ran commands.
      expect((yield* journalOf(w.journal)).map((c) => c.args[0])).toEqual(["provision-peer", "provision-peer"])
    }))
})
