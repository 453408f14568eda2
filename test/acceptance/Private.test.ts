/**
 * Private by default (docs/cli.md, "Files and permissions"): after a whole scenario with the real
 * `city` binary under a permissive umask (000) and under one that takes the owner's write bit
 * (0277), every file under the state root is 0600 and every folder 0700. The scenario touches every
 * writer: the root's birth (`peer create`), declarations, peers, endpoint records holding a failed
 * command's stderr, the private directory of opencode, an owed reload whose command prints
 * `password=hunter2` (stored redacted), the lifecycle log, the root lock, the daemon's pid file, hosted records,
 * fingerprints, plugin state, and a Turn whose tool prints an ANSI escape.
 *
 * Real processes (the CLI and the daemon, each a node start), so generous timeouts; they
 * synchronize on the files the processes write, never on elapsed time.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { lstat, readdir } from "node:fs/promises"
import { join, relative } from "node:path"
import { startDaemon } from "../support/daemonProcess.ts"
import { cityProcess, declaration, json, sh, world, writeJson } from "./cityCli.ts"
import { eventually } from "../fixtures.ts"


/**
 * Every entry under `dir` (`dir` itself first), with its own mode (`lstat`: a link is not followed).
 * An entry removed while the walk runs (a running command's record, cleared when it ends) is left out.
 */
const walk = async (dir: string): Promise<ReadonlyArray<{ readonly path: string; readonly kind: string; readonly mode: number }>> => {
  const info = await lstat(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined
    throw error
  })
  if (info === undefined) return []
  const kind = info.isDirectory() ? "folder" : info.isFile() ? "file" : info.isSocket() ? "socket" : "other"
  const self = { path: dir, kind, mode: info.mode & 0o777 }
  if (!info.isDirectory()) return [self]
  const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return [] as Array<string>
    throw error
  })
  const below = await Promise.all(names.sort().map((name) => walk(join(dir, name))))
  return [self, ...below.flat()]
}

/** Every entry under the root but the operator's `host.json`. */
const ours = (root: string) =>
  Effect.map(Effect.promise(() => walk(root)), (entries) => entries.filter((e) => relative(root, e.path) !== "host.json"))

/**
 * The entries under the root that are not a 0600 file, a 0600 socket (the daemon's control
 * channel) or a 0700 folder, as `<kind> <path> <mode>`.
 */
/**
 * A temp file caught between its creation and its `chmod` (an atomic write in flight: it is renamed
 * into place once its mode is set) may still have fewer bits than 0600 under a umask such as 0277;
 * it must never have more, nor any for the group or others.
 */
const isTemp = (path: string) => path.endsWith(".tmp")

const modes = (root: string) =>
  Effect.map(ours(root), (entries) =>
    entries
      .filter((e) =>
        e.kind === "file"
          ? isTemp(e.path) ? (e.mode & ~0o600) !== 0 : e.mode !== 0o600
          : e.kind === "socket"
          ? e.mode !== 0o600
          : e.kind === "folder"
          ? e.mode !== 0o700
          : true
      )
      .map((e) => `${e.kind} ${relative(root, e.path) || "."} 0${e.mode.toString(8)}`))

/** The whole scenario under `umask`; then the walk of the root. */
const scenario = (umask: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const w = yield* world
    const run = (args: ReadonlyArray<string>) => cityProcess(args, { root: w.root, umask })

    // The provisioner wires the tool for claude and codex; for opencode it fails with a secret
    // and a colour on stderr (a stored stderr tail). The tool prints an ANSI escape.
    const tool = yield* sh(join(w.bin, "tool-stamp"), ["printf '\\033[31mstamp:%s' \"$CITY_TOOL_INPUT\""])
    const prov = yield* sh(join(w.bin, "prov"), [
      "verb=$1; runtime=$3; cwd=$4",
      "case \"$runtime\" in",
      "  claude)",
      `    printf '{"mcpServers":{"stamp":{"command":"${tool}","args":[]}}}\\n' > "$cwd/.mcp.json" ;;`,
      "  codex)",
      "    mkdir -p \"$cwd/.codex\"",
      `    printf '[mcp_servers.stamp]\\ncommand = "${tool}"\\nargs = []\\n' > "$cwd/.codex/config.toml" ;;`,
      "  opencode)",
      // Held open while `<base>/hold` exists: the joint holds the root lock meanwhile.
      `    if [ -e '${w.base}/hold' ]; then touch '${w.base}/held'; while [ ! -e '${w.base}/release' ]; do sleep 0.05; done; fi`,
      "    printf '\\033[31mpassword=hunter2\\n' >&2; exit 3 ;;",
      "esac"
    ])
    const status = yield* sh(join(w.bin, "status"), ["echo idle"])
    const reload = yield* sh(join(w.bin, "reload"), ["echo 'reload refused: password=hunter2' >&2", "exit 1"])
    const decl = yield* writeJson(w.bin, "stamp.json", declaration({ name: "stamp", command: prov }))

    // Birth creates the root.
    const born = yield* run(["peer", "create", "alice", "--cwd", w.work, "--runtime", "claude", "--runtime", "codex", "--runtime", "opencode"])
    expect(born.code, born.stderr).toBe(0)
    // host.json is the operator's file (written here as an operator would), not ours.
    const cmd = (command: string, verb: string) => ({ command, args: [verb, "{personality}", "{runtime}"] })
    yield* writeJson(w.root, "host.json", {
      schema: 1,
      agent_runtimes: ["claude", "codex", "opencode"],
      channel_runtimes: [],
      profiles: {
        claude: { commands: { status: cmd(status, "status"), reload: cmd(reload, "reload"), retire: cmd(status, "retire"), kill: cmd(status, "kill") } },
        codex: { host: "city" },
        opencode: { private_dir: "state/opencode/{personality}" }
      }
    })

    const registered = yield* run(["capability", "register", decl, "--json"])
    expect(registered.code, registered.stderr).toBe(1) // opencode failed
    expect(json(registered)["outcomes"]).toMatchObject([
      { runtime: "claude", state: "ok", application: "failed" },
      { runtime: "codex", state: "ok" },
      { runtime: "opencode", state: "failed" }
    ])
    // A sync held open in its opencode call: the root lock's folder exists meanwhile.
    yield* fs.writeFileString(join(w.base, "hold"), "")
    const sync = yield* Effect.fork(run(["capability", "sync", "stamp"]))
    yield* eventually(fs.exists(join(w.base, "held")), 60_000)
    expect(yield* modes(w.root)).toEqual([])
    expect(yield* fs.exists(join(w.root, ".lock"))).toBe(true)
    yield* fs.writeFileString(join(w.base, "release"), "")
    expect((yield* Fiber.join(sync)).code).toBe(1)
    const owed = join(w.root, "state", "reloads", "claude-alice.json")
    expect(yield* fs.readFileString(owed)).toContain("password=[redacted]")

    const daemon = yield* startDaemon(w.root, w.base, "daemon", [], { umask })
    yield* eventually(fs.exists(join(w.root, "state", "hosted", "codex-alice.json")), 60_000)
    // A Turn, requested as an operator does: the folder and the request are the operator's (0755,
    // 0644), the daemon takes the request and writes the result into that folder.
    const turns = join(w.root, "state", "turns", "codex-alice")
    yield* fs.makeDirectory(turns, { recursive: true, mode: 0o755 })
    yield* fs.chmod(join(w.root, "state", "turns"), 0o755)
    yield* fs.chmod(turns, 0o755)
    yield* writeJson(turns, "t1.tmp", { schema: 1, calls: [{ tool: "stamp", input: "hi" }] })
    yield* fs.chmod(join(turns, "t1.tmp"), 0o644)
    yield* fs.rename(join(turns, "t1.tmp"), join(turns, "t1.json"))
    const result = join(turns, "t1.result.json")
    yield* eventually(fs.exists(result), 60_000)
    expect(yield* modes(w.root)).toEqual([]) // daemon.pid, hosted records, the Turn's files
    expect(yield* fs.exists(join(w.root, "daemon.pid"))).toBe(true)
    expect((yield* run(["plugins", "reload"])).code).toBe(0)
    expect((yield* run(["status"])).code).toBe(0)
    yield* eventually(Effect.map(fs.readFileString(daemon.log), (l) => l.includes("password=[redacted]")), 60_000)
    yield* daemon.kill("SIGTERM")
    expect((yield* Deferred.await(daemon.exited)).code).toBe(0)

    expect(yield* modes(w.root)).toEqual([])
    const entries = yield* ours(w.root)
    // The scenario did reach every writer.
    const names = entries.map((e) => relative(w.root, e.path))
    for (
      const expected of [
        "",
        "capabilities/stamp.json",
        "peers/alice.json",
        "state/endpoints/stamp.json",
        "state/reloads/claude-alice.json",
        "state/opencode/alice",
        "state/fingerprints/codex-alice.json",
        "state/turns/codex-alice/t1.taken",
        "state/turns/codex-alice/t1.result.json",
        "state/plugins/restart.json",
        "logs/lifecycle.log"
      ]
    ) expect(names).toContain(expected)
    expect(JSON.parse(yield* fs.readFileString(result))).toMatchObject({
      ok: true,
      results: [{ tool: "stamp", ok: true, output: "\\u001b[31mstamp:hi" }]
    })
    // No stored text carries a raw terminal escape, nor the secret (redacted where it was produced).
    for (const e of entries.filter((x) => x.kind === "file")) {
      expect(yield* fs.readFileString(e.path), relative(w.root, e.path)).not.toContain("\u001b")
      expect(yield* fs.readFileString(e.path), relative(w.root, e.path)).not.toContain("hunter2")
    }
  })

describe("private by default", () => {
  for (const umask of ["000", "0277"]) {
    it.scopedLive(
      `under umask ${umask}, every file city writes under the state root is 0600 and every folder 0700`,
      () => scenario(umask).pipe(Effect.provide(NodeContext.layer)),
      240_000
    )
  }
})

describe("folders on the way", () => {
  it.scopedLive("the root's missing parents are made 0700; an existing root is left as it is, a looser folder under it tightened", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const w = yield* world
      const deep = join(w.base, "a", "b", "root")
      const born = yield* cityProcess(["peer", "create", "alice", "--cwd", w.work, "--runtime", "claude"], { root: deep, umask: "000" })
      expect(born.code, born.stderr).toBe(0)
      const mode = (path: string) => Effect.map(Effect.promise(() => lstat(path)), (info) => info.mode & 0o777)
      for (const folder of ["a", "a/b", "a/b/root", "a/b/root/peers"]) expect([folder, yield* mode(join(w.base, folder))]).toEqual([folder, 0o700])

      // An operator's root (0755) with folders of an older version (0755, a 0644 document).
      yield* fs.makeDirectory(join(w.root, "peers"), { recursive: true })
      yield* fs.chmod(w.root, 0o755)
      yield* fs.chmod(join(w.root, "peers"), 0o755)
      const again = yield* cityProcess(["peer", "create", "bob", "--cwd", w.work, "--runtime", "claude"], { root: w.root, umask: "000" })
      expect(again.code, again.stderr).toBe(0)
      expect(yield* mode(w.root)).toBe(0o755)
      expect(yield* modes(w.root)).toEqual(["folder . 0755"])
    }).pipe(Effect.provide(NodeContext.layer)), 60_000)
})
