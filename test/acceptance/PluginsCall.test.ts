/**
 * `city plugins call <plugin> <action> [--input <json>]` (docs/cli.md, "Calling a plugin's action"
 * and "The daemon's control channel"), run as the real binary on real plugin folders: in a
 * throwaway City when no daemon runs, in the running daemon's City through its control channel
 * when one does. The `bank` plugin appends a line to a file at every initialize and keeps a
 * balance in its instance, so the tests see which instance answered and how many were made.
 */
import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as fs from "node:fs"
import * as os from "node:os"
import { join } from "node:path"
import * as Json from "../../src/programs/jsonOutput.ts"
import { maxSocketPath } from "../../src/services/control/ControlAddress.ts"
import { awaitLog, startPluginDaemon } from "../support/pluginDaemon.ts"
import { manifest, writePlugin } from "../loaderFixtures.ts"
import { cityProcess, type Run, tempDir } from "./cityCli.ts"

const live = (name: string, body: () => Effect.Effect<void, unknown, any>, timeout = 120_000) =>
  it.scopedLive(name, () => body().pipe(Effect.provide(NodeContext.layer)), timeout)

/** `bank`, on the host's thread: its initialize appends a line to `inits`; its balance starts at 10. */
const bankEntry = (inits: string) =>
  [
    `import { appendFileSync } from "node:fs"`,
    `import * as Effect from "effect/Effect"`,
    `import * as Schema from "effect/Schema"`,
    `import { Contributions, Plugin, PluginContext } from "effect-city/plugin"`,
    `class Overdrawn extends Schema.TaggedError()("Overdrawn", { balance: Schema.Number, asked: Schema.Number }) {`,
    `  get message() { return "balance " + this.balance + " is less than " + this.asked }`,
    `}`,
    `export default Plugin.make({ name: "bank", initialize: Effect.sync(() => {`,
    `  appendFileSync(${JSON.stringify(inits)}, process.pid + "\\n")`,
    `  let balance = 10`,
    `  return { actions: {`,
    `    withdraw: Contributions.action({`,
    `      input: Schema.Struct({ amount: Schema.Number }),`,
    `      handler: ({ amount }) => amount > balance`,
    `        ? Effect.fail(new Overdrawn({ balance, asked: amount }))`,
    `        : Effect.sync(() => { balance -= amount; return { balance } })`,
    `    }),`,
    `    greet: Contributions.action({`,
    `      input: Schema.Void,`,
    `      handler: () => Effect.map(PluginContext.PluginContext, (ctx) => "hello " + ctx.agent.id + "\\nin " + ctx.workspace.path)`,
    `    }),`,
    `    crash: Contributions.action({ input: Schema.Void, handler: () => Effect.die(new Error("the vault door fell off")) })`,
    `  } }`,
    `}) })`,
    ``
  ].join("\n")

/** `vault`, in a worker thread of its own: its input is decoded there. */
const vaultEntry = [
  `import * as Effect from "effect/Effect"`,
  `import * as Schema from "effect/Schema"`,
  `import { Contributions, Plugin } from "effect-city/plugin"`,
  `class Locked extends Schema.TaggedError()("Locked", { code: Schema.Number }) {}`,
  `export default Plugin.make({ name: "vault", initialize: Effect.succeed({ actions: {`,
  `  open: Contributions.action({`,
  `    input: Schema.Struct({ code: Schema.Number }),`,
  `    handler: ({ code }) => code === 42 ? Effect.succeed("open") : Effect.fail(new Locked({ code }))`,
  `  })`,
  `} }) })`,
  ``
].join("\n")

/** A state root with `bank` (and `vault` in a worker) enabled and licensed in its instance root. */
const bankRoot = (options: { readonly vault?: boolean; readonly folder?: string } = {}) =>
  Effect.gen(function*() {
    const base = yield* tempDir
    const root = join(base, options.folder ?? "root")
    const instance = join(root, "plugins")
    const inits = join(base, "inits")
    fs.mkdirSync(instance, { recursive: true })
    writePlugin(instance, "bank", { manifest: manifest("bank"), files: { "index.mjs": bankEntry(inits) } })
    const names = options.vault === true ? ["bank", "vault"] : ["bank"]
    if (options.vault === true) {
      writePlugin(instance, "vault", { manifest: manifest("vault", { isolation: "worker" }), files: { "index.mjs": vaultEntry } })
    }
    fs.writeFileSync(join(root, "plugins.json"), JSON.stringify({ enabled: names, licensed: names }))
    /** How many times `bank` was initialized so far (by any process). */
    const initializations = () => (fs.existsSync(inits) ? fs.readFileSync(inits, "utf8").split("\n").filter((l) => l !== "").length : 0)
    return { base, root, initializations }
  })

const call = (root: string, args: ReadonlyArray<string>, cwd?: string) =>
  cityProcess(["plugins", "call", ...args], { root, ...(cwd === undefined ? {} : { cwd }) })

/** The `--json` document of a call that answered, checked against its Schema (excess fields refused). */
const answered = (run: Run) => {
  expect(run.code, run.stderr).toBe(0)
  const decoded = Schema.decodeUnknownEither(Schema.parseJson(Json.documents["plugins call"]), { onExcessProperty: "error" })(run.stdout)
  if (Either.isLeft(decoded)) return expect.fail(`${decoded.left.message}\n${run.stdout}`)
  return decoded.right
}

/** The `--json` envelope of a call that did not answer. */
const refused = (run: Run) => {
  const decoded = Schema.decodeUnknownEither(Schema.parseJson(Json.Failure), { onExcessProperty: "error" })(run.stdout)
  if (Either.isLeft(decoded)) return expect.fail(`${decoded.left.message}\n${run.stdout}`)
  expect(decoded.right.verb).toBe("plugins call")
  return decoded.right.error
}

/** The stderr of a failed call: exactly one `city: error:` line. */
const oneErrorLine = (run: Run): string => {
  const lines = run.stderr.split("\n").filter((l) => l !== "")
  expect(lines, run.stderr).toHaveLength(1)
  expect(lines[0]).toMatch(/^city: error: /)
  return lines[0]!
}

describe("city plugins call, no daemon running: a throwaway City", () => {
  live("a call answers: the result on stdout (exit 0), and the --json document says where it ran", () =>
    Effect.gen(function*() {
      const { base, initializations, root } = yield* bankRoot()
      const text = yield* call(root, ["bank", "withdraw", "--input", '{"amount": 3}'])
      expect(text.code, text.stderr).toBe(0)
      expect(JSON.parse(text.stdout)).toEqual({ balance: 7 })
      // Each call has a City of its own: a fresh instance, the balance back at 10.
      const document = answered(yield* call(root, ["bank", "withdraw", "--input", '{"amount": 4}', "--json"]))
      expect(document).toEqual({
        ok: true,
        verb: "plugins call",
        plugin: "bank",
        action: "withdraw",
        source: "throwaway",
        daemon: { running: false, pid: null },
        result: { balance: 6 }
      })
      expect(initializations()).toBe(2)
      // A text result prints as it is, lines kept; the caller is the Agent `cli` at the working directory.
      const greeted = yield* call(root, ["bank", "greet"], base)
      expect(greeted.code, greeted.stderr).toBe(0)
      expect(greeted.stdout).toBe(`hello cli\nin ${base}\n`)
    }))

  live("the action's typed failure is exit 1, printed with its tag; a defect is exit 1 too", () =>
    Effect.gen(function*() {
      const { root } = yield* bankRoot()
      const text = yield* call(root, ["bank", "withdraw", "--input", '{"amount": 30}'])
      expect(text.code).toBe(1)
      expect(text.stdout).toBe("")
      expect(oneErrorLine(text)).toBe("city: error: Action bank/withdraw failed: Overdrawn: balance 10 is less than 30")
      const json = yield* call(root, ["bank", "withdraw", "--input", '{"amount": 30}', "--json"])
      expect(json.code).toBe(1)
      expect(refused(json)).toEqual({
        _tag: "ActionFailed",
        message: "Action bank/withdraw failed: Overdrawn: balance 10 is less than 30",
        plugin: "bank",
        action: "withdraw",
        detail: "Overdrawn: balance 10 is less than 30",
        failure: { _tag: "Overdrawn", message: "balance 10 is less than 30", balance: 10, asked: 30 }
      })
      const crashed = yield* call(root, ["bank", "crash", "--json"])
      expect(crashed.code).toBe(1)
      const defect = refused(crashed)
      expect(defect).toMatchObject({ _tag: "ActionFailed", plugin: "bank", action: "crash" })
      expect(defect["failure"]).toBeUndefined()
      expect(defect["detail"]).toContain("the vault door fell off")
    }))

  live("an unknown plugin, an unknown action, input the Schema refuses and text that is not JSON are exit 2, one line each", () =>
    Effect.gen(function*() {
      const { initializations, root } = yield* bankRoot()
      const noPlugin = yield* call(root, ["nope", "withdraw"])
      expect(noPlugin.code).toBe(2)
      expect(oneErrorLine(noPlugin)).toBe("city: error: Unknown plugin: nope")
      const noAction = yield* call(root, ["bank", "deposit", "--json"])
      expect(noAction.code).toBe(2)
      expect(refused(noAction)).toMatchObject({ _tag: "ActionNotFound", plugin: "bank", action: "deposit" })
      expect(oneErrorLine(noAction)).toBe(`city: error: Plugin bank has no action "deposit"`)
      // The Schema's refusal names the field and the rule, on one line.
      const rejected = yield* call(root, ["bank", "withdraw", "--input", '{"amount": "lots"}', "--json"])
      expect(rejected.code).toBe(2)
      expect(oneErrorLine(rejected)).toBe(`city: error: Input rejected by bank/withdraw: field "amount": Expected number, actual "lots"`)
      expect(refused(rejected)).toMatchObject({ _tag: "ActionInputRejected", plugin: "bank", action: "withdraw", field: "amount", rule: `Expected number, actual "lots"` })
      const missing = yield* call(root, ["bank", "withdraw"])
      expect(missing.code).toBe(2)
      expect(oneErrorLine(missing)).toMatch(/^city: error: Input rejected by bank\/withdraw: Expected \{ readonly amount: number \}, actual undefined$/)
      // Text that is not JSON is refused before the state root is read: no City, no initialize.
      const before = initializations()
      const badJson = yield* call(root, ["bank", "withdraw", "--input", "{amount: 3"])
      expect(badJson.code).toBe(2)
      expect(oneErrorLine(badJson)).toMatch(/^city: error: --input is not valid JSON \(.+\)$/)
      expect(initializations()).toBe(before)
    }))

  live("a plugin in a worker thread: its refusal names the field too, and its typed failure keeps its tag", () =>
    Effect.gen(function*() {
      const { root } = yield* bankRoot({ vault: true })
      const opened = answered(yield* call(root, ["vault", "open", "--input", '{"code": 42}', "--json"]))
      expect(opened.result).toBe("open")
      const rejected = yield* call(root, ["vault", "open", "--input", '{"code": "x"}', "--json"])
      expect(rejected.code).toBe(2)
      expect(refused(rejected)).toMatchObject({ _tag: "ActionInputRejected", plugin: "vault", action: "open", field: "code", rule: `Expected number, actual "x"` })
      const locked = yield* call(root, ["vault", "open", "--input", '{"code": 7}', "--json"])
      expect(locked.code).toBe(1)
      expect(refused(locked)).toMatchObject({ _tag: "ActionFailed", failure: { _tag: "Locked", code: 7 } })
    }))
})

describe("city plugins call with a daemon running: the daemon's City, through its control channel", () => {
  live("two calls reach the daemon's one instance (its state kept, no second initialize); SIGTERM removes the socket and its record", () =>
    Effect.gen(function*() {
      const { base, initializations, root } = yield* bankRoot()
      const daemon = yield* startPluginDaemon(root, base, "daemon")
      expect(initializations()).toBe(1)
      const first = answered(yield* call(root, ["bank", "withdraw", "--input", '{"amount": 3}', "--json"]))
      const second = answered(yield* call(root, ["bank", "withdraw", "--input", '{"amount": 3}', "--json"]))
      expect([first.result, second.result]).toEqual([{ balance: 7 }, { balance: 4 }])
      expect(second).toMatchObject({ source: "daemon", daemon: { running: true, pid: daemon.pid } })
      expect(initializations()).toBe(1)
      // Failures come back from the daemon as they do from a throwaway City.
      const overdrawn = yield* call(root, ["bank", "withdraw", "--input", '{"amount": 30}'])
      expect(overdrawn.code).toBe(1)
      expect(oneErrorLine(overdrawn)).toBe("city: error: Action bank/withdraw failed: Overdrawn: balance 4 is less than 30")
      const rejected = yield* call(root, ["bank", "withdraw", "--input", "[]"])
      expect(rejected.code).toBe(2)
      expect(oneErrorLine(rejected)).toBe("city: error: Input rejected by bank/withdraw: Expected { readonly amount: number }, actual []")
      expect((yield* call(root, ["nope", "x"])).code).toBe(2)

      const socket = join(root, "state", "control.sock")
      const record = join(root, "state", "control.json")
      expect(fs.statSync(socket).isSocket()).toBe(true)
      expect(fs.statSync(socket).mode & 0o777).toBe(0o600)
      const version = (JSON.parse(fs.readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version
      expect(JSON.parse(fs.readFileSync(record, "utf8"))).toEqual({ schema: 1, pid: daemon.pid, path: socket, version })
      yield* daemon.kill("SIGTERM")
      expect(yield* Deferred.await(daemon.exited)).toEqual({ code: 0, signal: null })
      expect(fs.existsSync(socket)).toBe(false)
      expect(fs.existsSync(record)).toBe(false)
    }))

  live("a socket left by a daemon killed with SIGKILL: the next call runs in a throwaway City, the next daemon replaces it", () =>
    Effect.gen(function*() {
      const { base, initializations, root } = yield* bankRoot()
      const socket = join(root, "state", "control.sock")
      const killed = yield* startPluginDaemon(root, base, "killed")
      answered(yield* call(root, ["bank", "withdraw", "--input", '{"amount": 1}', "--json"]))
      yield* killed.kill("SIGKILL")
      yield* Deferred.await(killed.exited)
      expect(fs.statSync(socket).isSocket()).toBe(true)
      // The record names a dead pid: not believed, and no daemon runs.
      const alone = answered(yield* call(root, ["bank", "withdraw", "--input", '{"amount": 1}', "--json"]))
      expect(alone).toMatchObject({ source: "throwaway", daemon: { running: false, pid: null }, result: { balance: 9 } })
      expect(initializations()).toBe(2)

      const next = yield* startPluginDaemon(root, base, "next")
      yield* awaitLog(next, `removed the socket a previous daemon left at ${socket}`)
      const served = answered(yield* call(root, ["bank", "withdraw", "--input", '{"amount": 1}', "--json"]))
      expect(served).toMatchObject({ source: "daemon", daemon: { running: true, pid: next.pid }, result: { balance: 9 } })
      expect(initializations()).toBe(3)
    }))

  live("a daemon whose channel cannot be reached: exit 1 saying so, and no second City beside it", () =>
    Effect.gen(function*() {
      const { base, initializations, root } = yield* bankRoot()
      const daemon = yield* startPluginDaemon(root, base, "daemon")
      answered(yield* call(root, ["bank", "withdraw", "--input", '{"amount": 1}', "--json"]))
      fs.rmSync(join(root, "state", "control.sock"))
      const run = yield* call(root, ["bank", "withdraw", "--input", '{"amount": 1}', "--json"])
      expect(run.code).toBe(1)
      expect(oneErrorLine(run)).toContain(`the city daemon (pid ${daemon.pid}) runs on ${root}, but its control channel cannot be reached`)
      expect(refused(run)).toMatchObject({ _tag: "ControlChannelUnreachable", pid: daemon.pid, root })
      expect(initializations()).toBe(1)
    }))

  live("a daemon of another effect-city version is sent nothing: exit 1 saying to restart it, and no second City beside it", () =>
    Effect.gen(function*() {
      const { base, initializations, root } = yield* bankRoot()
      const daemon = yield* startPluginDaemon(root, base, "daemon")
      const record = join(root, "state", "control.json")
      // As after an upgrade of the package under a daemon still running the old one.
      const published = JSON.parse(fs.readFileSync(record, "utf8")) as Record<string, unknown>
      fs.writeFileSync(record, JSON.stringify({ ...published, version: "0.0.1" }))
      const run = yield* call(root, ["bank", "withdraw", "--input", '{"amount": 1}', "--json"])
      expect(run.code).toBe(1)
      expect(oneErrorLine(run)).toContain(`the city daemon (pid ${daemon.pid}) runs on ${root}, but its control channel cannot be reached: it runs effect-city 0.0.1 and this city is `)
      expect(oneErrorLine(run)).toContain(": restart the daemon with this version (city daemon) to call through it")
      expect(refused(run)).toMatchObject({ _tag: "ControlChannelUnreachable", pid: daemon.pid })
      expect(initializations()).toBe(1)
      // The daemon's own record again: the call goes through.
      fs.writeFileSync(record, JSON.stringify(published))
      expect(answered(yield* call(root, ["bank", "withdraw", "--input", '{"amount": 1}', "--json"])).result).toEqual({ balance: 9 })
    }))

  live("a root whose path is too long for a socket address: the socket is in a private folder under the temp folder, gone at stop", () =>
    Effect.gen(function*() {
      const { base, root } = yield* bankRoot({ folder: "r".repeat(100) })
      expect(Buffer.byteLength(join(root, "state", "control.sock"))).toBeGreaterThan(maxSocketPath)
      const daemon = yield* startPluginDaemon(root, base, "daemon")
      const served = answered(yield* call(root, ["bank", "withdraw", "--input", '{"amount": 2}', "--json"]))
      expect(served).toMatchObject({ source: "daemon", result: { balance: 8 } })
      const { path } = JSON.parse(fs.readFileSync(join(root, "state", "control.json"), "utf8")) as { path: string }
      expect(path.startsWith(join(os.tmpdir(), "city-control-"))).toBe(true)
      expect(Buffer.byteLength(path)).toBeLessThanOrEqual(maxSocketPath)
      const folder = join(path, "..")
      expect(fs.statSync(folder).mode & 0o777).toBe(0o700)
      yield* daemon.kill("SIGTERM")
      expect(yield* Deferred.await(daemon.exited)).toEqual({ code: 0, signal: null })
      expect(fs.existsSync(folder)).toBe(false)
    }))
})

describe("docs/cli.md documents city plugins call", () => {
  const cli = fs.readFileSync(new URL("../../docs/cli.md", import.meta.url), "utf8")

  it("its usage, where it runs, what it prints, its exit codes and the control channel", () => {
    expect(cli).toContain("city plugins call <plugin> <action> [--input <json>]")
    const section = cli.slice(cli.indexOf("### Calling a plugin's action"), cli.indexOf("## Exit codes"))
    expect(section).toContain("### The daemon's control channel")
    for (const words of ["throwaway City", "exit **1**", "exit **2**", "`--json`", "state/control.sock", "state/control.json", "103 bytes"]) {
      expect(section, words).toContain(words)
    }
    const exits = cli.slice(cli.indexOf("## Exit codes"), cli.indexOf("## Printing"))
    expect(exits).toContain("`plugins call`")
  })

  it("the glossary lists every field of its document and of its failures", () => {
    const glossary = cli.slice(cli.indexOf("### `--json` fields"), cli.indexOf("**A plugin's status"))
    const document = Json.documents["plugins call"].fields
    for (const field of Object.keys(document)) expect(glossary, field).toContain(`\`${field}\``)
    for (const field of ["plugin", "action", "status", "last_error", "detail", "failure", "field", "rule"]) {
      expect(glossary, field).toContain(`\`${field}\``)
    }
  })
})
