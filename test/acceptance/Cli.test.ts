/**
 * The `city` CLI as people expect it (issue 8, anchors gh, kubectl, npm): help that names the
 * whole command and describes every parameter with its default, no escape codes off a terminal,
 * unknown commands named at their level, English errors, one `--json` envelope per verb, a
 * progress line that counts failures, a sweep's failures at the end, the version of
 * package.json. Run in-process against temp roots; the last scenarios run the real binary for
 * what only a process shows (exit statuses, Ctrl-C).
 */
import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { eventually, isAlive } from "../fixtures.ts"
import * as StateRoot from "../../src/services/root/StateRoot.ts"
import { run } from "../../src/programs/cli.ts"
import * as Invocation from "../../src/programs/invocation.ts"
import { binary, city, cityProcess, collectingConsole, declaration, journalOf, json, provisioner, seedPeer, world, writeJson } from "./cityCli.ts"

const scenario = (name: string, body: () => Effect.Effect<void, unknown, NodeContext.NodeContext | Scope.Scope>) =>
  it.scopedLive(name, () => body().pipe(Effect.provide(NodeContext.layer)), 60_000)


const escape = /\u001b\[/

/** A named pipe: a script writes to it when it reached a point, the test reads (blocks) until then. */
const mkfifo = (path: string) =>
  Effect.promise(() =>
    new Promise<void>((resolve, reject) => {
      spawn("mkfifo", [path]).once("exit", (code) => code === 0 ? resolve() : reject(new Error(`mkfifo ${path}`)))
    })
  )

/** `city` in-process on a pretend terminal, its stderr collected as it is written. */
const cityWithStderr = (args: ReadonlyArray<string>, root: string, stderr: Array<string>) =>
  Effect.gen(function*() {
    const invocation = yield* Invocation.make({
      env: { CITY_ROOT: root },
      cwd: process.cwd(),
      home: root,
      stdoutIsTTY: true,
      stderrIsTTY: true,
      writeStderr: (text) =>
        Effect.sync(() => {
          stderr.push(text)
        })
    })
    return yield* run(args).pipe(
      Effect.provideService(Invocation.Invocation, invocation),
      Console.withConsole(collectingConsole([], stderr))
    )
  })

/** Every verb, with arguments that parse. */
const verbs: ReadonlyArray<ReadonlyArray<string>> = [
  ["capability", "register"],
  ["capability", "sync"],
  ["capability", "unregister"],
  ["capability", "list"],
  ["peer", "create"],
  ["peer", "init"],
  ["peer", "add-runtime"],
  ["peer", "default-runtime"],
  ["peer", "remove"],
  ["peer", "remove-runtime"],
  ["peer", "list"]
]

describe("help", () => {
  scenario("every verb's usage line names the whole command, and every parameter has a description", () =>
    Effect.gen(function*() {
      for (const path of verbs) {
        const help = yield* city([...path, "--help"])
        const name = `city ${path.join(" ")}`
        expect(help.code, name).toBe(0)
        expect(help.stdout, name).toContain(`USAGE\n  ${name}`)
        expect(help.stdout, name).not.toMatch(/^\$ /m)
        // No generic filler in place of a description.
        expect(help.stdout, name).not.toMatch(/A file\.|A directory\.|An integer\.|A true or false value\.|This setting is optional/)
        const rows = help.stdout.split("\n").filter((l) => /^ {2}(<|\[<| {4}--|-h)/.test(l))
        expect(rows.length, name).toBeGreaterThan(2)
        for (const row of rows) expect(row.trim(), `${name}: ${row}`).toMatch(/^\S.*\S {3,}\S/)
      }
      const register = yield* city(["capability", "register", "--help"])
      expect(register.stdout).toContain("city capability register <file> [flags]")
      const create = yield* city(["peer", "create", "-h"])
      expect(create.stdout).toContain("city peer create <personality> --cwd <dir> --runtime <name> [flags]")
    }))

  scenario("defaults are shown, and options are offered only where they apply (no --wizard anywhere)", () =>
    Effect.gen(function*() {
      const register = (yield* city(["capability", "register", "--help"])).stdout
      expect(register).toMatch(/--timeout-ms <ms>\s+.*\(default 120000\)/)
      expect(register).toMatch(/--concurrency <n>\s+.*\(default 4\)/)
      expect(register).toMatch(/--root <dir>\s+.*\(default \$CITY_ROOT, else ~\/\.city\)/)
      const list = (yield* city(["peer", "list", "--help"])).stdout
      expect(list).not.toContain("--timeout-ms")
      expect(list).not.toContain("--concurrency")
      for (const path of [[], ["capability"], ["peer"], ...verbs]) {
        const help = (yield* city([...path, "--help"])).stdout
        for (const builtIn of ["--wizard", "--log-level"]) expect(help, `${path.join(" ")} ${builtIn}`).not.toContain(builtIn)
        if (path.length > 0) expect(help, path.join(" ")).not.toContain("--version")
      }
      const top = (yield* city(["--help"])).stdout
      expect(top).toContain("--version")
      expect(top).toContain("--completions <shell>")
      // --wizard needs a terminal: it is refused, not started.
      const wizard = yield* city(["capability", "list", "--wizard"])
      expect(wizard.code).toBe(2)
      expect(wizard.stderr).toContain("unknown flag '--wizard' for 'city capability list'")
    }))

  scenario("no ANSI escape codes off a terminal or with NO_COLOR, help included; styled on a terminal", () =>
    Effect.gen(function*() {
      const w = yield* world
      const plain = yield* city(["capability", "register", "--help"])
      expect(plain.stdout).not.toMatch(escape)
      const noColor = yield* city(["capability", "register", "--help"], { tty: true, env: { NO_COLOR: "1" } })
      expect(noColor.stdout).not.toMatch(escape)
      const styled = yield* city(["capability", "register", "--help"], { tty: true })
      expect(styled.stdout).toMatch(escape)
      // A usage error and a progress line under NO_COLOR on a terminal: no escapes either.
      const bad = yield* city(["capability", "frob"], { tty: true, env: { NO_COLOR: "1" } })
      expect(bad.stderr).not.toMatch(escape)
      const script = yield* provisioner(w.bin, "prov", w.journal)
      yield* seedPeer(w.root, "alice", w.work, ["claude"])
      const file = yield* writeJson(w.bin, "stat.json", declaration({ name: "stat", command: script }))
      const run = yield* city(["capability", "register", file], { root: w.root, tty: true, env: { NO_COLOR: "1" } })
      expect(run.code).toBe(0)
      expect(run.stderr).toContain("1/1 endpoints")
      expect(run.stdout + run.stderr).not.toMatch(escape)
    }))
})

describe("docs that name verbs", () => {
  scenario("docs/cluster.md's first paragraph says what runs today: each `city …` it names is a verb, with the flags it names", () =>
    Effect.gen(function*() {
      const text = readFileSync(join(import.meta.dirname, "../../docs/cluster.md"), "utf8")
      const opening = text.split("\n\n")[1] ?? ""
      const named = [...opening.matchAll(/`city ([a-z-]+)((?: --[a-z-]+)*)[^`]*`/g)].map((m) => ({ verb: m[1]!, flags: (m[2] ?? "").trim().split(/\s+/).filter((f) => f !== "") }))
      expect(named.map((n) => n.verb)).toEqual(["daemon", "fleet", "status"])
      for (const { flags, verb } of named) {
        const help = yield* city([verb, "--help"])
        expect(help.code, verb).toBe(0)
        for (const flag of flags) expect(help.stdout, `${verb} ${flag}`).toContain(flag)
      }
      expect(opening).not.toContain("does not use it yet")
    }))
})

describe("usage errors", () => {
  scenario("every word a verb cannot take is named, a known flag after an unknown one is not; stdout stays clean", () =>
    Effect.gen(function*() {
      const w = yield* world
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
        [["capability", "sync", "-rf", "--root", w.root], "unknown flag '-rf' for 'city capability sync'"],
        [["reload", "-rf", "--root", w.root], "unknown flag '-rf' for 'city reload'"],
        [["capability", "sync", "--bogus", "c1", "--root", w.root], "unknown flag '--bogus' for 'city capability sync'"],
        [["capability", "sync", "-rf", "--json"], "unknown flag '-rf' for 'city capability sync'"],
        [
          ["capability", "sync", "c1", "c2", "-rf", "--bogus=3", "--timeout-ms", "5"],
          "unknown flags '-rf', '--bogus=3' and unexpected argument 'c2' for 'city capability sync'"
        ],
        [["peer", "list", "extra", "--root", w.root], "unexpected argument 'extra' for 'city peer list'"]
      ]
      for (const [args, message] of cases) {
        const r = yield* city(args, { root: w.root })
        expect(r.code, args.join(" ")).toBe(2)
        expect(r.stderr.split("\n")[0], args.join(" ")).toBe(`city: error: ${message}`)
        if (args.includes("--json")) {
          // The one document --json promises, bad usage included, naming the same word.
          expect(json(r)).toEqual({ ok: false, verb: "capability sync", error: { _tag: "UsageError", message } })
        } else {
          expect(r.stdout, args.join(" ")).toBe("")
        }
      }
      // Known flags are taken wherever they stand, `--json true` included.
      const fine = yield* city(["peer", "list", "--json", "true", "--root", w.root], { root: w.root })
      expect(fine.stderr).not.toContain("unknown")
      expect(fine.stderr).not.toContain("unexpected")
    }))

  scenario("a wrong command is named at its own level with a suggestion; exit 2", () =>
    Effect.gen(function*() {
      const frob = yield* city(["capability", "frob"])
      expect(frob.code).toBe(2)
      expect(frob.stderr).toContain("unknown command 'frob' for 'city capability'")
      expect(frob.stderr).toContain("Usage: city capability <command> [flags]")
      const typo = yield* city(["capability", "regster"])
      expect(typo.code).toBe(2)
      expect(typo.stderr).toContain("unknown command 'regster' for 'city capability'")
      expect(typo.stderr).toMatch(/Did you mean this\?\n\s+register/)
      const top = yield* city(["per", "list"])
      expect(top.stderr).toContain("unknown command 'per' for 'city'")
      expect(top.stderr).toMatch(/Did you mean this\?\n\s+peer/)
      const misplaced = yield* city(["register", "x.json"])
      expect(misplaced.stderr).toMatch(/Did you mean this\?\n\s+capability register/)
      const flag = yield* city(["peer", "list", "--concurrency", "3"])
      expect(flag.code).toBe(2)
      expect(flag.stderr).toContain("unknown flag '--concurrency' for 'city peer list'")
      const required = yield* city(["peer", "create", "alice"])
      expect(required.code).toBe(2)
      expect(required.stderr).toContain("city: error: missing required flag --cwd; missing required flag --runtime")
      expect(required.stderr).toContain("Usage: city peer create <personality> --cwd <dir> --runtime <name> [flags]")
      // A flag's value left out is named, not read as the next argument.
      const noValue = yield* city(["capability", "sync", "--timeout-ms"])
      expect(noValue.code).toBe(2)
      expect(noValue.stderr).toContain("flag needs a value: --timeout-ms")
    }))

  scenario("bad numbers read as English; a missing file is named once", () =>
    Effect.gen(function*() {
      const w = yield* world
      const timeout = yield* city(["capability", "sync", "stat", "--timeout-ms", "soon"], { root: w.root })
      expect(timeout.code).toBe(2)
      expect(timeout.stderr).toContain("--timeout-ms expects a whole number of milliseconds, got 'soon'")
      expect(timeout.stderr).not.toContain("a integer")
      const concurrency = yield* city(["capability", "sync", "stat", "--concurrency", "2.5"], { root: w.root })
      expect(concurrency.code).toBe(2)
      expect(concurrency.stderr).toContain("--concurrency expects a whole number of calls, got '2.5'")
      const missing = join(w.base, "nowhere.json")
      const run = yield* city(["capability", "register", missing], { root: w.root })
      expect(run.code).toBe(2)
      expect(run.stderr).toContain(`file not found: ${missing}`)
      expect(run.stderr.split(missing).length - 1).toBe(1)
      // Nothing ran, nothing was created.
      expect(yield* (yield* FileSystem.FileSystem).exists(w.root)).toBe(false)
    }))
})

describe("flags before the command", () => {
  scenario("--root and --json may come before the command, as kubectl's global flags do", () =>
    Effect.gen(function*() {
      const w = yield* world
      yield* seedPeer(w.root, "alice", w.work, ["claude"])
      for (const args of [["--root", w.root, "--json", "peer", "list"], [`--root=${w.root}`, "peer", "--json", "list"]]) {
        const run = yield* city(args)
        expect(run.code, args.join(" ")).toBe(0)
        expect(json(run), args.join(" ")).toMatchObject({ ok: true, verb: "peer list", peers: [{ peer: "alice" }] })
      }
      const missing = yield* city(["--root"])
      expect(missing.code).toBe(2)
      expect(missing.stderr).toContain("flag needs a value: --root")
    }))
})

describe("--json", () => {
  scenario("one envelope { ok, verb, ... } on every verb, list verbs and usage errors included", () =>
    Effect.gen(function*() {
      const w = yield* world
      const script = yield* provisioner(w.bin, "prov", w.journal)
      const file = yield* writeJson(w.bin, "stat.json", declaration({ name: "stat", command: script }))
      yield* (yield* FileSystem.FileSystem).makeDirectory(w.root)
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, number, Record<string, unknown>]> = [
        [["peer", "list"], 0, { ok: true, verb: "peer list", peers: [] }],
        [["capability", "list"], 0, { ok: true, verb: "capability list", capabilities: [] }],
        [["capability", "register", file], 0, { ok: true, verb: "capability register" }],
        [["capability", "frob"], 2, { ok: false, verb: "capability", error: { _tag: "UsageError" } }],
        [["capability", "sync"], 2, { ok: false, verb: "capability sync", error: { _tag: "UsageError" } }],
        [["capability", "sync", "x", "--timeout-ms", "x"], 2, { ok: false, verb: "capability sync" }],
        [["peer", "remove", "nobody"], 2, { ok: false, verb: "peer remove", error: { _tag: "UnknownPeer" } }],
        [["capability", "register", join(w.base, "none.json")], 2, {
          ok: false,
          verb: "capability register",
          error: { _tag: "UsageError", message: `file not found: ${join(w.base, "none.json")}` }
        }],
        [["--version"], 0, { ok: true, version: expect.any(String) }]
      ]
      for (const [args, code, expected] of cases) {
        const run = yield* city([...args, "--json"], { root: w.root })
        expect(run.code, args.join(" ")).toBe(code)
        expect(json(run), args.join(" ")).toMatchObject(expected)
      }
    }))
})

describe("sweeps on a terminal", () => {
  scenario("progress counts failures as they happen; the output ends with the failures summarized", () =>
    Effect.gen(function*() {
      const w = yield* world
      const flaky = yield* provisioner(w.bin, "flaky", w.journal, `[ "$2" = p1 ] && { echo 'p1 is broken' >&2; exit 2; }\nexit 0`)
      for (let i = 0; i < 6; i++) yield* seedPeer(w.root, `p${i}`, w.work, ["claude"])
      const file = yield* writeJson(w.bin, "stat.json", declaration({ name: "stat", command: flaky }))
      const run = yield* city(["capability", "register", file, "--concurrency", "1"], { root: w.root, tty: true })
      expect(run.code).toBe(1)
      // p1 is the second call (concurrency 1, peers in name order): counted from then on.
      expect(run.stderr).toContain("1/6 endpoints\r")
      expect(run.stderr).toContain("2/6 endpoints, 1 failed")
      expect(run.stderr).toContain("6/6 endpoints, 1 failed")
      const lines = run.stdout.trimEnd().split("\n")
      expect(lines.slice(-3)).toEqual([
        "failed (1 of 6):",
        "  stat peer p1 runtime claude: failed exit=2: p1 is broken",
        "summary: 6 endpoints: 1 failed, 5 ok"
      ])
      // Off a terminal there is no progress line.
      const quiet = yield* city(["capability", "sync", "stat"], { root: w.root })
      expect(quiet.stderr).not.toContain("endpoints")
    }))
})

describe("interrupted on a terminal", () => {
  scenario("an interrupted sweep ends its progress line with a newline, then says what was interrupted", () =>
    Effect.gen(function*() {
      const w = yield* world
      const started = join(w.base, "started")
      yield* mkfifo(started)
      // The first endpoint (alice) succeeds; the second (bob) says so through the FIFO and blocks.
      const script = yield* provisioner(
        w.bin,
        "prov",
        w.journal,
        `[ "$2" = bob ] && { echo go > '${started}'; exec sleep 600; }\nexit 0`
      )
      yield* seedPeer(w.root, "alice", w.work, ["claude"])
      yield* seedPeer(w.root, "bob", w.work, ["claude"])
      const file = yield* writeJson(w.bin, "stat.json", declaration({ name: "stat", command: script }))
      const stderr: Array<string> = []
      const fiber = yield* Effect.fork(cityWithStderr(["capability", "register", file, "--concurrency", "1"], w.root, stderr))
      yield* (yield* FileSystem.FileSystem).readFileString(started)
      yield* Fiber.interrupt(fiber)
      // The progress line ended, then what finished and what was interrupted, on a line of its own.
      expect(stderr.join("")).toBe("\r  1/2 endpoints\ncity: interrupted: capability register: 1 of 2 endpoints done, 1 interrupted\n")
    }))
})

describe("version and completions", () => {
  scenario("city --version prints the version of package.json", () =>
    Effect.gen(function*() {
      const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
      const run = yield* city(["--version"])
      expect(run.code).toBe(0)
      expect(run.stdout).toBe(`${pkg.version}\n`)
    }))

  scenario("city --completions bash|zsh|fish prints a script naming the verbs; another shell is refused", () =>
    Effect.gen(function*() {
      for (const shell of ["bash", "zsh", "fish"]) {
        const run = yield* city(["--completions", shell])
        expect(run.code, shell).toBe(0)
        expect(run.stdout, shell).toContain("register")
        expect(run.stdout, shell).toContain("remove-runtime")
      }
      const bad = yield* city(["--completions", "tcsh"])
      expect(bad.code).toBe(2)
      expect(bad.stderr).toContain("unknown shell 'tcsh'")
    }))
})

describe("the real process", () => {
  scenario("exit statuses: 0 for help and version, 2 for bad usage, 1 for a failed sweep", () =>
    Effect.gen(function*() {
      const w = yield* world
      const bad = yield* provisioner(w.bin, "bad", w.journal, "exit 3")
      yield* seedPeer(w.root, "alice", w.work, ["claude"])
      const file = yield* writeJson(w.bin, "stat.json", declaration({ name: "stat", command: bad }))
      const runs = yield* Effect.all([
        cityProcess(["--help"]),
        cityProcess(["--version"]),
        cityProcess(["capability", "frob", "--json"]),
        cityProcess(["capability", "register", file], { root: w.root })
      ], { concurrency: 2 })
      expect(runs.map((r) => r.code)).toEqual([0, 0, 2, 1])
      expect(runs[0]?.stdout).toContain("USAGE\n  city <command> [flags]")
      expect(runs[0]?.stdout).not.toMatch(escape)
      expect(json(runs[2] ?? { code: 0, stdout: "", stderr: "" })).toMatchObject({ ok: false, verb: "capability" })
    }))

  scenario("a fleet on SQLite through the binary: the bundle loads the native driver from node_modules", () =>
    Effect.gen(function*() {
      const w = yield* world
      // Bundled, better-sqlite3 cannot find its `.node` file (scripts/bundle.mjs keeps it external).
      const run = yield* cityProcess(["fleet", "--cluster", `sqlite:${join(w.base, "fleet.db")}`, "--json"])
      expect(run.stderr).toBe("")
      expect([run.code, JSON.parse(run.stdout)]).toEqual([0, { ok: true, verb: "fleet", hosts: [], invalid: [] }])
    }))

  scenario("the installed package runs from its bundle alone: package.json, bin/ and dist/city.cjs, no node_modules", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const w = yield* world
      const checkout = join(binary, "..", "..")
      const installed = join(w.base, "node_modules", "effect-city")
      yield* fs.makeDirectory(join(installed, "bin"), { recursive: true })
      yield* fs.makeDirectory(join(installed, "dist"))
      for (const part of ["package.json", "bin/city.mjs", "dist/city.cjs"]) {
        yield* fs.copyFile(join(checkout, part), join(installed, part))
      }
      yield* fs.makeDirectory(w.root)
      const run = (args: ReadonlyArray<string>) =>
        Effect.async<{ code: number | null; stdout: string }>((resume) => {
          const child = spawn(process.execPath, [join(installed, "bin", "city.mjs"), ...args], {
            cwd: w.base,
            env: { ...process.env, CITY_ROOT: w.root },
            stdio: ["ignore", "pipe", "inherit"]
          })
          let stdout = ""
          child.stdout.on("data", (chunk: Buffer) => {
            stdout += chunk.toString()
          })
          child.once("close", (code) => resume(Effect.succeed({ code, stdout })))
        })
      const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
      expect(yield* run(["--version"])).toEqual({ code: 0, stdout: `${pkg.version}\n` })
      const list = yield* run(["peer", "list", "--json"])
      expect(list.code).toBe(0)
      expect(JSON.parse(list.stdout)).toMatchObject({ ok: true, verb: "peer list", peers: [] })
    }))

  scenario("the code cache: written on the first run (owner-only), used after, rewritten when unusable, off on request", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const w = yield* world
      const cache = join(w.base, "cache")
      const caches = () => Effect.map(fs.readDirectory(cache).pipe(Effect.orElseSucceed(() => [])), (names) => names.filter((n) => n.endsWith(".v8cache")))
      const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
      const version = () => cityProcess(["--version"], { env: { CITY_CODE_CACHE: cache } })

      expect(yield* version()).toMatchObject({ code: 0, stdout: `${pkg.version}\n` })
      const [name] = yield* caches()
      expect(name).toMatch(/^city-[0-9a-f]{32}-none\.v8cache$/)
      const file = join(cache, name!)
      expect((yield* fs.stat(file)).mode & 0o777).toBe(0o600)
      expect((yield* fs.stat(cache)).mode & 0o777).toBe(0o700)
      const written = yield* fs.readFile(file)

      // Used as it is: not written again.
      yield* fs.utimes(file, 0, 0)
      expect(yield* version()).toMatchObject({ code: 0, stdout: `${pkg.version}\n` })
      expect(Option.map((yield* fs.stat(file)).mtime, (m) => m.getTime())).toEqual(Option.some(0))

      // A cache V8 cannot use (garbage, a truncated file) is compiled around and written again.
      for (const broken of [new Uint8Array(4096).fill(7), written.subarray(0, 100)]) {
        yield* fs.writeFile(file, broken)
        expect(yield* version()).toMatchObject({ code: 0, stdout: `${pkg.version}\n` })
        expect((yield* fs.readFile(file)).length).toBeGreaterThan(100_000)
      }

      // Each verb has its own: the functions a verb compiles are in the cache its first run wrote.
      // (the root does not exist: the verb exits 2 after its work, and the cache is written all the same)
      expect(yield* cityProcess(["peer", "list"], { root: w.root, env: { CITY_CODE_CACHE: cache } })).toMatchObject({ code: 2 })
      expect((yield* caches()).sort()).toEqual([name, name!.replace("-none.", "-peer.")].sort())

      const off = join(w.base, "off")
      expect(yield* cityProcess(["--version"], { env: { CITY_CODE_CACHE: "off", XDG_CACHE_HOME: off } })).toMatchObject({ code: 0 })
      expect(yield* fs.exists(off)).toBe(false)
    }))

  scenario("Ctrl-C during a sweep exits 130, terminates the running command and releases the lock", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const w = yield* world
      const started = join(w.base, "started")
      const pids = join(w.base, "pids")
      // The command says it started through a FIFO the test reads (no polling), then blocks.
      yield* mkfifo(started)
      const blocking = yield* provisioner(
        w.bin,
        "blocking",
        w.journal,
        `sleep 600 &\necho $! >> '${pids}'\necho $$ >> '${pids}'\necho go > '${started}'\nwait`
      )
      yield* seedPeer(w.root, "alice", w.work, ["claude"])
      const file = yield* writeJson(w.bin, "stat.json", declaration({ name: "stat", command: blocking }))
      const child = spawn(process.execPath, [binary, "capability", "register", file], {
        env: { ...process.env, CITY_ROOT: w.root },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let stderr = ""
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString()
      })
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
      yield* fs.readFileString(started)
      child.kill("SIGINT")
      const code = yield* Effect.promise(() => exited)
      expect(code).toBe(130)
      expect(stderr).not.toContain("Error")
      const leftover = (yield* fs.readFileString(pids)).trim().split("\n").map(Number)
      expect(leftover.length).toBe(2)
      expect(leftover.filter(isAlive)).toEqual([])
      // The lock is free: the next verb runs at once.
      const after = yield* city(["capability", "list", "--json"], { root: w.root })
      expect(after.code).toBe(0)
      expect((yield* journalOf(w.journal)).length).toBe(1)
    }))
})

describe("the state-root lock, as the operator sees it", () => {
  scenario("a verb interrupted while it waits for the lock, before any call, says so in one line", () =>
    Effect.gen(function*() {
      const w = yield* world
      const ok = yield* provisioner(w.bin, "ok", w.journal)
      yield* seedPeer(w.root, "alice", w.work, ["claude"])
      const file = yield* writeJson(w.bin, "stat.json", declaration({ name: "stat", command: ok }))
      expect((yield* city(["capability", "register", file], { root: w.root })).code).toBe(0)
      const state = yield* StateRoot.make({ root: w.root })
      yield* Scope.extend(state.lock, yield* Effect.scope)
      const stdout: Array<string> = []
      const stderr: Array<string> = []
      const invocation = yield* Invocation.make({
        env: { CITY_ROOT: w.root },
        cwd: process.cwd(),
        home: w.root,
        stdoutIsTTY: false,
        stderrIsTTY: true,
        writeStderr: (text) => Effect.sync(() => void stderr.push(text))
      })
      const sync = yield* Effect.fork(run(["capability", "sync", "stat"]).pipe(
        Effect.provideService(Invocation.Invocation, invocation),
        Console.withConsole(collectingConsole(stdout, stderr))
      ))
      yield* eventually(Effect.sync(() => stderr.join("").includes("waiting for the state-root lock")))
      yield* Fiber.interrupt(sync)
      expect(stderr.at(-1)).toBe("city: interrupted: capability sync\n")
      expect(stdout).toEqual([])
    }))

  scenario("on a terminal, a verb that waits for the lock says who holds it after a second, then goes on", () =>
    Effect.gen(function*() {
      const w = yield* world
      const ok = yield* provisioner(w.bin, "ok", w.journal)
      yield* seedPeer(w.root, "alice", w.work, ["claude"])
      const file = yield* writeJson(w.bin, "stat.json", declaration({ name: "stat", command: ok }))
      expect((yield* city(["capability", "register", file], { root: w.root })).code).toBe(0)
      const state = yield* StateRoot.make({ root: w.root })
      const held = yield* Scope.make()
      yield* Scope.extend(state.lock, held)
      const seen: Array<string> = []
      const sync = yield* Effect.fork(city(["capability", "sync", "stat"], {
        root: w.root,
        tty: true,
        onStderr: (text) => void seen.push(text)
      }))
      yield* eventually(Effect.sync(() => seen.join("").includes("waiting for the state-root lock")))
      expect(seen.join("")).toMatch(new RegExp(`city: waiting for the state-root lock held by pid ${process.pid} \\(since `))
      yield* Scope.close(held, Exit.void)
      expect((yield* Fiber.join(sync)).code).toBe(0)
    }))
})
