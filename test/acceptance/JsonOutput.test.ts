/**
 * One `--json` envelope, one vocabulary (docs/cli.md, "`--json` fields"): every leaf verb of the
 * command tree runs with `--json` on a prepared root (two declarations, three peers, an endpoint
 * whose provisioning fails, an owed reload, an invalid owed-work record, a plugin folder with an
 * invalid manifest), and its stdout decodes with its verb's Schema (src/programs/jsonOutput.ts),
 * an extra or misnamed field refused; so does the failure envelope of each verb family. The
 * tree is walked here, so a verb added without a Schema fails. `city daemon --json` runs as the
 * real binary until it has started, is stopped with SIGTERM, and each line of its stdout is
 * one JSON log line.
 */
import { expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { spawn } from "node:child_process"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { city as tree } from "../../src/programs/cli.ts"
import * as Json from "../../src/programs/jsonOutput.ts"
import type { Node } from "../../src/programs/verbs.ts"
import { binary, city, cityProcess, declaration, provisioner, seedOwedReload, seedPeer, sh, world, writeJson } from "./cityCli.ts"

const strict = { onExcessProperty: "error" } as const

/** The decoded document, or the test fails naming the verb and the Schema's complaint. */
const decode = <A, I>(schema: Schema.Schema<A, I>, text: string, what: string): A => {
  const decoded = Schema.decodeUnknownEither(Schema.parseJson(schema), strict)(text)
  if (Either.isLeft(decoded)) expect.fail(`${what}: ${decoded.left.message}\n${text}`)
  return decoded.right
}

/** Every leaf command of the tree, as its path without `city`. */
const leaves = (node: Node, path: ReadonlyArray<string> = []): ReadonlyArray<ReadonlyArray<string>> =>
  node._tag === "Verb" ? [path] : node.children.flatMap((child) => leaves(child, [...path, child.name]))

/** The shipped bundled plugin root (the clock plugin: docs/plugin-loader.md). */
const bundledExamples = fileURLToPath(new URL("../../examples/plugins/bundled", import.meta.url))

const isDocumentVerb = (verb: string): verb is Json.DocumentVerb => Object.hasOwn(Json.documents, verb)


/** The prepared root; returns the arguments of each verb's successful run. */
const prepare = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const w = yield* world
  // Endpoints through the Commands host: idle, so a reload is applied.
  const status = yield* sh(join(w.bin, "status"), ["echo idle"])
  const reload = yield* sh(join(w.bin, "reload"), ["exit 0"])
  const cmd = (command: string) => ({ command, args: ["{personality}", "{runtime}"] })
  const profile = { commands: { status: cmd(status), reload: cmd(reload) } }
  yield* fs.makeDirectory(w.root, { recursive: true })
  yield* writeJson(w.root, "host.json", {
    schema: 1,
    agent_runtimes: ["claude", "codex"],
    channel_runtimes: ["telegram"],
    profiles: { claude: profile, codex: profile }
  })
  // Bob's provisioning fails: a failing endpoint in every sweep.
  const script = yield* provisioner(w.bin, "prov", w.journal, `[ "$2" = bob ] && { echo 'bob refused' >&2; exit 3; }; exit 0`)
  yield* seedPeer(w.root, "alice", w.work, ["claude", "codex", "telegram"])
  yield* seedPeer(w.root, "bob", w.work, ["claude"])
  const demo = yield* writeJson(w.base, "demo.json", declaration({ name: "demo", command: script, runtimes: ["claude", "codex"] }))
  const gone = yield* writeJson(w.base, "gone.json", declaration({ name: "gone", command: script, runtimes: ["claude"] }))
  for (const file of [demo, gone]) yield* city(["capability", "register", file, "--json"], { root: w.root })
  // An owed reload and an owed-work record that is not one.
  yield* seedOwedReload(w.root, "bob", "claude", { requested: 2, applied: 1 })
  yield* fs.writeFileString(join(w.root, "state", "reloads", "claude-zed.json"), "{ not json")
  // A plugin folder whose manifest breaks the rules.
  yield* fs.makeDirectory(join(w.root, "plugins", "broken"), { recursive: true })
  yield* writeJson(join(w.root, "plugins", "broken"), "city-plugin.json", { name: "broken" })
  const args: Record<string, ReadonlyArray<string>> = {
    "capability register": [demo],
    "capability sync": ["demo"],
    "capability unregister": ["gone"],
    "capability list": [],
    "peer create": ["carol", "--cwd", w.work, "--runtime", "claude"],
    "peer init": ["dave", "--runtime", "claude"],
    "peer add-runtime": ["carol", "codex"],
    "peer default-runtime": ["carol", "codex"],
    "peer remove": ["dave"],
    "peer remove-runtime": ["carol", "claude"],
    "peer list": [],
    "status": [],
    "fleet": ["--cluster", `sqlite:${join(w.base, "fleet.db")}`],
    "reload": ["alice"],
    "plugins list": [],
    "plugins discover": [],
    "plugins reload": [],
    // The bundled example's clock (the bundled root is never gated): a call in a throwaway City.
    "plugins call": ["clock", "now", "--bundled", bundledExamples],
    "plugins clear-quarantine": ["spin"]
  }
  return { w, args }
})

it.scopedLive("every verb's --json document decodes with its verb's Schema, excess fields refused", () =>
  Effect.gen(function*() {
    const { args, w } = yield* prepare
    const verbs = leaves(tree).map((path) => path.join(" ")).filter((verb) => verb !== "daemon")
    expect(verbs.length).toBeGreaterThan(10)
    const printed: Record<string, unknown> = {}
    for (const verb of verbs) {
      expect(isDocumentVerb(verb), `${verb} has a Schema in jsonOutput.ts`).toBe(true)
      if (!isDocumentVerb(verb)) continue
      const verbArgs = args[verb]
      expect(verbArgs, `${verb} has arguments in this test`).toBeDefined()
      const run = yield* city([...verb.split(" "), ...(verbArgs ?? []), "--json"], { root: w.root, cwd: w.work })
      const document = decode(Json.documents[verb] as Schema.Schema<unknown, unknown>, run.stdout, verb)
      expect((document as { verb: string }).verb).toBe(verb)
      printed[verb] = document
    }
    // The prepared root made the verbs print their real fields.
    const of = (verb: string) => printed[verb] as Record<string, unknown>
    expect(of("capability sync")["verdict"]).toBe("failed")
    expect(of("capability sync")["outcomes"]).toContainEqual(expect.objectContaining({ peer: "bob", state: "failed", exit: 3 }))
    expect(of("capability register")).toMatchObject({ capability: "demo", version: "1.0.0", runtimes: ["claude", "codex"] })
    expect(of("peer remove")).toMatchObject({ peer: "dave" })
    expect(of("peer list")["peers"]).toContainEqual({ peer: "alice", cwd: w.work, runtimes: ["claude", "codex", "telegram"], default_runtime: "claude" })
    expect(of("reload")["endpoints"]).toContainEqual(expect.objectContaining({ endpoint: "claude-alice", peer: "alice", runtime: "claude" }))
    expect(of("status")["owed"]).toContainEqual(expect.objectContaining({ endpoint: "claude-bob", peer: "bob", runtime: "claude" }))
    for (const verb of ["status", "reload", "capability list"]) {
      expect(of(verb)["invalid"], verb).toMatchObject([{ kind: "InvalidOwedRecord", file: join(w.root, "state", "reloads", "claude-zed.json") }])
    }
    expect(of("plugins call")).toMatchObject({ source: "throwaway", result: "12:00 for cli" })
    for (const verb of ["plugins discover", "plugins list"]) {
      expect(of(verb)["invalid"], verb).toContainEqual(expect.objectContaining({ kind: "ManifestInvalid" }))
    }
  }).pipe(Effect.provide(NodeContext.layer)), 120_000)

it.scopedLive("every verb's failure is the error envelope: bad usage on each verb, and a typed error per family", () =>
  Effect.gen(function*() {
    const { w } = yield* prepare
    for (const path of leaves(tree)) {
      const run = yield* city([...path, "--json", "--root"], { root: w.root })
      expect(run.code, path.join(" ")).toBe(2)
      // The daemon's stdout is JSON lines: its failure is one line.
      if (path[0] === "daemon") expect(run.stdout.trim().split("\n")).toHaveLength(1)
      const failure = decode(Json.Failure, run.stdout, `${path.join(" ")} --root`)
      expect(failure).toMatchObject({ ok: false, verb: path.join(" "), error: { _tag: "UsageError", message: "flag needs a value: --root" } })
    }
    const missing = join(w.base, "nowhere")
    const typed: ReadonlyArray<readonly [ReadonlyArray<string>, string, Record<string, unknown>]> = [
      [["capability", "sync", "nope"], "UnknownCapability", { capability: "nope" }],
      [["peer", "remove-runtime", "zoe", "claude"], "UnknownPeer", { peer: "zoe" }],
      [["reload", "bob", "--runtime", "codex"], "RuntimeNotWired", { peer: "bob", runtime: "codex" }],
      [["status", "--root", missing], "RootNotFound", { root: missing }],
      [["plugins", "discover", "--root", missing], "RootNotFound", { root: missing }],
      [["capability", "regster"], "UsageError", { suggestions: ["register"] }],
      [["plugins", "call", "clock", "later", "--bundled", bundledExamples], "ActionNotFound", { plugin: "clock", action: "later" }]
    ]
    for (const [argv, tag, fields] of typed) {
      const run = yield* city([...argv, "--json"], { root: w.root })
      const failure = decode(Json.Failure, run.stdout, argv.join(" "))
      expect(failure.error, argv.join(" ")).toMatchObject({ _tag: tag, ...fields })
    }
    // The daemon's own failure, from the real binary: the envelope as its one stdout line.
    const refused = yield* cityProcess(["daemon", "--json", "--retry-base-ms", "0"], { root: w.root })
    expect(refused.code).toBe(2)
    expect(refused.stdout.trim().split("\n")).toHaveLength(1)
    expect(decode(Json.Failure, refused.stdout, "daemon --retry-base-ms 0").error).toMatchObject({ _tag: "UsageError" })
  }).pipe(Effect.provide(NodeContext.layer)), 120_000)

it.scopedLive("city daemon --json writes its log as JSON lines on stdout, each one object with the log's fields", () =>
  Effect.gen(function*() {
    const { w } = yield* prepare
    const started = yield* Deferred.make<void>()
    const exited = yield* Deferred.make<number | null>()
    let stdout = ""
    const child = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const env: Record<string, string | undefined> = { ...process.env, CITY_ROOT: w.root }
        delete env["CITY_PRIVATE_DIR"]
        const c = spawn(process.execPath, [binary, "daemon", "--json", "--poll-ms", "100"], { env, stdio: ["ignore", "pipe", "pipe"] })
        c.stdout.setEncoding("utf8").on("data", (chunk: string) => {
          stdout += chunk
          if (stdout.includes("city daemon started")) Deferred.unsafeDone(started, Effect.void)
        })
        c.stderr.resume()
        c.once("exit", (code) => Deferred.unsafeDone(exited, Effect.succeed(code)))
        return c
      }),
      (c) => Effect.sync(() => void (c.exitCode === null && c.signalCode === null ? c.kill("SIGKILL") : undefined))
    )
    yield* Deferred.await(started).pipe(Effect.timeoutFail({ duration: "30 seconds", onTimeout: () => new Error(stdout) }))
    child.kill("SIGTERM")
    expect(yield* Deferred.await(exited)).toBe(0)
    const lines = stdout.split("\n").filter((line) => line !== "")
    expect(lines.length).toBeGreaterThan(1)
    const decoded = lines.map((line) => decode(Json.DaemonLogLine, line, "daemon log line"))
    expect(decoded.map((l) => l.message)).toContainEqual(expect.stringContaining("city daemon started"))
    expect(decoded.map((l) => l.message)).toContainEqual(expect.stringContaining("city daemon stopped"))
  }).pipe(Effect.provide(NodeContext.layer)), 120_000)
