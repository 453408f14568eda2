/**
 * Every fault in one run, through the `city` CLI (docs/cli.md, "Declaration rules"): a refused
 * declaration prints a `city: error:` line per fault and `--json` lists them; a peer file,
 * `host.json`, `plugins.json` and a plugin manifest with several faults likewise. The declaration's scenarios and
 * `plugins list`'s log run the real binary; the others the command tree in-process.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"
import { join } from "node:path"
import { referenceManifests } from "../fixtures/referencePlugins.ts"
import { writePlugin } from "../loaderFixtures.ts"
import { city, cityProcess, declaration, json, world, writeJson } from "./cityCli.ts"

const acceptance = (
  name: string,
  body: () => Effect.Effect<void, unknown, NodeContext.NodeContext | Scope.Scope>
) => it.scopedLive(name, () => body().pipe(Effect.provide(NodeContext.layer)), 120_000)

const personality = "must carry {personality}: several personalities can share one cwd"

/** stderr's lines, without the last newline. */
const lines = (text: string) => text.replace(/\n$/, "").split("\n")

describe("a declaration with three faults is refused with all three at once", () => {
  acceptance("text: a `city: error:` line per fault, each naming the file, the field and the rule; exit 2, nothing stored", () =>
    Effect.gen(function*() {
      const w = yield* world
      // The declaration: both args without {personality}, a name that is not the file stem.
      const file = yield* writeJson(w.bin, "bad.json", {
        ...declaration({ name: "good", command: "/abs/prov" }),
        provision: { command: "/abs/prov", args: ["provision-peer", "{runtime}"] },
        unprovision: { command: "/abs/prov", args: ["unprovision-peer"] }
      })
      const run = yield* cityProcess(["capability", "register", file], { root: w.root })
      expect(run.code).toBe(2)
      expect(lines(run.stderr)).toEqual([
        `city: error: invalid capability declaration ${file}: field "provision.args": ${personality}`,
        `city: error: invalid capability declaration ${file}: field "unprovision.args": ${personality}`,
        `city: error: invalid capability declaration ${file}: field "capability": must equal the file stem "bad", got "good"`
      ])
      expect(run.stdout).toBe("")
      expect(fs.existsSync(join(w.root, "capabilities"))).toBe(false)

      const asJson = yield* cityProcess(["capability", "register", file, "--json"], { root: w.root })
      expect(asJson.code).toBe(2)
      expect(lines(asJson.stderr)).toHaveLength(3)
      const error = json(asJson)["error"]
      expect(json(asJson)).toMatchObject({ ok: false, verb: "capability register" })
      expect(error).toEqual({
        _tag: "InvalidDeclaration",
        file,
        field: "provision.args",
        rule: personality,
        faults: [
          { field: "provision.args", rule: personality },
          { field: "unprovision.args", rule: personality },
          { field: "capability", rule: "must equal the file stem \"bad\", got \"good\"" }
        ],
        more_faults: 0,
        message: lines(run.stderr).map((line) => line.slice("city: error: ".length)).join("\n")
      })
    }))

  acceptance("25 faults print 20 lines and `… and 5 more faults`; --json lists 20 and counts 5", () =>
    Effect.gen(function*() {
      const w = yield* world
      const runtimes = Array.from({ length: 25 }, (_, i) => `Bad Runtime ${i}`)
      const file = yield* writeJson(w.bin, "many.json", declaration({ name: "many", command: "/abs/prov", runtimes }))
      const run = yield* cityProcess(["capability", "register", file, "--json"], { root: w.root })
      expect(run.code).toBe(2)
      const printed = lines(run.stderr)
      expect(printed).toHaveLength(21)
      printed.slice(0, 20).forEach((line, i) =>
        expect(line).toMatch(new RegExp(`^city: error: invalid capability declaration .*many\\.json: field "runtimes\\[${i}\\]": must be 1-64`))
      )
      expect(printed[20]).toBe("city: error: … and 5 more faults")
      const error = json(run)["error"] as { faults: ReadonlyArray<unknown>; more_faults: number; message: string }
      expect(error.faults).toHaveLength(20)
      expect(error.more_faults).toBe(5)
      expect(error.message.split("\n")).toHaveLength(21)
    }))
})

describe("a peer file, host.json and a plugin manifest with several faults report them all", () => {
  acceptance("a peer file: a warning line, a table row and a --json fault each", () =>
    Effect.gen(function*() {
      const w = yield* world
      const fileSystem = yield* FileSystem.FileSystem
      yield* fileSystem.makeDirectory(join(w.root, "peers"), { recursive: true })
      const file = yield* writeJson(join(w.root, "peers"), "ann.json", {
        schema: 1,
        personality: "bob",
        cwd: "work",
        runtimes: ["claude", "claude"],
        default_runtime: "claude"
      })
      const faults = [
        { field: "cwd", rule: "must be an absolute path" },
        { field: "runtimes", rule: "must not list a runtime twice" },
        { field: "personality", rule: "must equal the file stem \"ann\", got \"bob\"" }
      ]
      const text = yield* city(["peer", "list"], { root: w.root })
      expect(text.code).toBe(0)
      expect(lines(text.stderr)).toEqual(faults.map((f) => `city: warning: invalid peer file ${file}: field "${f.field}": ${f.rule}`))
      for (const f of faults) expect(text.stdout).toMatch(new RegExp(`\\nINVALID\\s+-\\s+-\\s+${file}: ${f.field}: ${f.rule.replace(/"/g, "\"")}`))
      const listed = json(yield* city(["peer", "list", "--json"], { root: w.root }))
      expect(listed["invalid"]).toEqual([expect.objectContaining({ kind: "InvalidPeerFile", file, field: "cwd", faults, more_faults: 0 })])
    }))

  acceptance("host.json: a `city: error:` line per fault, exit 2; --json lists them", () =>
    Effect.gen(function*() {
      const w = yield* world
      const fileSystem = yield* FileSystem.FileSystem
      yield* fileSystem.makeDirectory(w.root)
      const file = yield* writeJson(w.root, "host.json", {
        schema: 2,
        agent_runtimes: ["claude"],
        channel_runtimes: ["Telegram"],
        profiles: { opencode: { private_dir: "../x/{personality}" } }
      })
      const run = yield* city(["capability", "list"], { root: w.root })
      expect(run.code).toBe(2)
      expect(lines(run.stderr)).toEqual([
        `city: error: invalid host configuration ${file}: field "schema": must be 1`,
        `city: error: invalid host configuration ${file}: field "channel_runtimes[0]": must be 1-64 characters of a-z, 0-9, '.', '_' or '-', starting with a letter or digit`,
        `city: error: invalid host configuration ${file}: field "profiles.opencode.private_dir": must stay inside the state root (no '..')`
      ])
      const asJson = json(yield* city(["capability", "list", "--json"], { root: w.root }))
      expect(asJson["error"]).toMatchObject({
        _tag: "InvalidHostConfig",
        faults: [{ field: "schema" }, { field: "channel_runtimes[0]" }, { field: "profiles.opencode.private_dir" }]
      })
    }))

  acceptance("plugins.json: a `city: error:` line per fault from plugins list, exit 2; --json lists them", () =>
    Effect.gen(function*() {
      const w = yield* world
      const fileSystem = yield* FileSystem.FileSystem
      yield* fileSystem.makeDirectory(w.root)
      const file = yield* writeJson(w.root, "plugins.json", {
        licenced: ["notes"],
        enabled: "notes",
        isolation: { notes: "thread" }
      })
      const run = yield* city(["plugins", "list"], { root: w.root })
      expect(run.code).toBe(2)
      expect(lines(run.stderr).filter((line) => line.startsWith("city: error:"))).toEqual([
        expect.stringMatching(new RegExp(`^city: error: ${file}: licenced: is not a known key \\(did you mean "licensed"\\?`)),
        `city: error: ${file}: enabled: Expected ReadonlyArray<string>, actual "notes"`,
        `city: error: ${file}: isolation.notes: Expected "none" | "worker" | "process", actual "thread"`
      ])
      const asJson = json(yield* city(["plugins", "list", "--json"], { root: w.root }))
      expect(asJson["error"]).toMatchObject({
        faults: [{ field: "licenced" }, { field: "enabled" }, { field: "isolation.notes" }],
        more_faults: 0
      })
    }))

  acceptance("a plugin manifest (the reference's shape, several wrong fields): a line per fault in discover, list and the log", () =>
    Effect.gen(function*() {
      const w = yield* world
      const instance = join(w.root, "plugins")
      const bundled = join(w.base, "bundled")
      fs.mkdirSync(bundled, { recursive: true })
      // A reference plugin's manifest (test/fixtures/referencePlugins.ts) with five wrong fields.
      const reference = referenceManifests.find((m) => m.folder === "browser")!
      writePlugin(instance, "notes", {
        manifest: {
          ...JSON.parse(reference.text) as Record<string, unknown>,
          name: "other",
          apiVersion: 1,
          description: 5,
          requiresCore: "latest",
          entry: "../index.mjs"
        },
        files: { "index.mjs": "export function register(ctx) {}\n" }
      })
      fs.writeFileSync(join(w.root, "plugins.json"), JSON.stringify({ bundledRoot: bundled, enabled: ["notes"], licensed: ["notes"] }))
      const file = join(instance, "notes", "city-plugin.json")
      const expected = ["apiVersion", "description", "requiresCore", "name", "entry"]

      const discovered = json(yield* city(["plugins", "discover", "--json"], { root: w.root }))
      expect((discovered["invalid"] as ReadonlyArray<{ field: string }>).map((i) => i.field)).toEqual(expected)
      const table = yield* city(["plugins", "discover"], { root: w.root })
      const rows = lines(table.stdout).filter((line) => line.startsWith("notes "))
      expect(rows.map((row) => row.slice(row.indexOf(file) + file.length + 2).split(":")[0])).toEqual(expected)

      // The real binary: each skip's line is a warning on stderr (the CLI's logger).
      const listed = yield* cityProcess(["plugins", "list"], { root: w.root })
      expect(listed.code).toBe(0)
      const skipped = lines(listed.stderr).filter((line) => line.startsWith("city: warning: plugin skipped: notes: "))
      expect(skipped.map((line) => line.slice(`city: warning: plugin skipped: notes: ${file}: `.length).split(":")[0])).toEqual(expected)
      expect(lines(listed.stdout).filter((line) => line.startsWith("notes ")).length).toBe(expected.length)
    }))
})
