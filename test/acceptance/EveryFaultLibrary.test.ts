/**
 * Every fault of a refused file in one run (docs/cli.md, "Declaration rules"): a declaration, a peer
 * file, `host.json` and a plugin manifest that break several rules say so all at once, a line each
 * naming the file, the field and the rule, at most 20 lines and a count of the others. Through the
 * library's services on real temp roots and plugin folders.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { join } from "node:path"
import * as CapabilityServices from "../../src/layers/CapabilityServices.ts"
import type { InvalidFile } from "../../src/schema/FileErrors.ts"
import { Peers } from "../../src/services/capabilities/Peers.ts"
import * as Provisioner from "../../src/services/capabilities/Provisioner.ts"
import * as RuntimeProfiles from "../../src/services/capabilities/RuntimeProfiles.ts"
import * as StateRoot from "../../src/services/root/StateRoot.ts"
import * as Discovery from "../../src/services/loader/Discovery.ts"
import { referenceManifests } from "../fixtures/referencePlugins.ts"
import { manifest, writePlugin } from "../loaderFixtures.ts"

const declaration = {
  schema: 1,
  capability: "stat",
  runtimes: ["claude"],
  provision: { command: "/abs/bin", args: ["provision-peer", "{personality}"] },
  unprovision: { command: "/abs/bin", args: ["unprovision-peer", "{personality}"] }
}

/** The issue's declaration: both args lack {personality}, and its name is not the file stem `bad`. */
export const threeFaults = {
  ...declaration,
  capability: "good",
  provision: { command: "/abs/bin", args: ["provision-peer", "--runtime", "{runtime}"] },
  unprovision: { command: "/abs/bin", args: ["unprovision-peer"] }
}

const personality = "must carry {personality}: several personalities can share one cwd"

/** A temp directory with a state root folder `root` in it. */
const temp = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const base = yield* fs.makeTempDirectoryScoped({ prefix: "city-faults-" })
  return { fs, base, root: join(base, "root") }
})

const faultsOf = (e: InvalidFile) => e.faults.map((f) => [f.field, f.rule] as const)

describe("a refused file names every fault at once", () => {
  it.scoped("a declaration with three faults: both args without {personality}, a name that is not the file stem", () =>
    Effect.gen(function*() {
      const { base, fs, root } = yield* temp
      const file = join(base, "bad.json")
      yield* fs.writeFileString(file, JSON.stringify(threeFaults))
      const refused = yield* Effect.flip(
        Effect.flatMap(Provisioner.Provisioner, (p) => p.register(file)).pipe(Effect.provide(CapabilityServices.layer({ root })))
      )
      expect(refused._tag).toBe("InvalidFile")
      if (refused._tag !== "InvalidFile") return
      expect(refused.name).toBe("InvalidDeclaration")
      expect(faultsOf(refused)).toEqual([
        ["provision.args", personality],
        ["unprovision.args", personality],
        ["capability", "must equal the file stem \"bad\", got \"good\""]
      ])
      expect(refused.moreFaults).toBe(0)
      // The first fault is still `field` and `rule`, as one fault always was.
      expect([refused.field, refused.rule]).toEqual(["provision.args", personality])
      expect(refused.message.split("\n")).toEqual([
        `invalid capability declaration ${file}: field "provision.args": ${personality}`,
        `invalid capability declaration ${file}: field "unprovision.args": ${personality}`,
        `invalid capability declaration ${file}: field "capability": must equal the file stem "bad", got "good"`
      ])
      expect(yield* fs.exists(join(root, "capabilities", "good.json"))).toBe(false)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a runtime listed twice and a channel runtime: both faults, the host's rule judged beside the list's own", () =>
    Effect.gen(function*() {
      const { base, fs, root } = yield* temp
      const file = join(base, "twice.json")
      yield* fs.writeFileString(file, JSON.stringify({ ...declaration, capability: "twice", runtimes: ["claude", "claude", "web"] }))
      const refused = yield* Effect.flip(
        Effect.flatMap(Provisioner.Provisioner, (p) => p.register(file)).pipe(Effect.provide(CapabilityServices.layer({ root })))
      )
      if (refused._tag !== "InvalidFile") return expect.fail(refused.message)
      expect(faultsOf(refused)).toEqual([
        ["runtimes", expect.stringContaining("twice")],
        ["runtimes[2]", expect.stringMatching(/^web is a channel runtime of this host/)]
      ])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a declaration with 25 faults: 20 lines, then the count of the other 5", () =>
    Effect.gen(function*() {
      const { base, fs, root } = yield* temp
      const file = join(base, "many.json")
      const runtimes = Array.from({ length: 25 }, (_, i) => `Runtime${i}`)
      yield* fs.writeFileString(file, JSON.stringify({ ...declaration, capability: "many", runtimes }))
      const refused = yield* Effect.flip(
        Effect.flatMap(Provisioner.Provisioner, (p) => p.register(file)).pipe(Effect.provide(CapabilityServices.layer({ root })))
      )
      if (refused._tag !== "InvalidFile") return expect.fail(refused.message)
      expect(refused.faults.map((f) => f.field)).toEqual(runtimes.slice(0, 20).map((_, i) => `runtimes[${i}]`))
      expect(refused.moreFaults).toBe(5)
      const lines = refused.message.split("\n")
      expect(lines).toHaveLength(21)
      expect(lines[19]).toMatch(/field "runtimes\[19\]": must be 1-64 characters/)
      expect(lines[20]).toBe("… and 5 more faults")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a peer file with several faults, read and listed", () =>
    Effect.gen(function*() {
      const { fs, root } = yield* temp
      yield* fs.makeDirectory(join(root, "peers"), { recursive: true })
      const file = join(root, "peers", "ann.json")
      yield* fs.writeFileString(
        file,
        JSON.stringify({ schema: 2, personality: "bob", cwd: "work", runtimes: ["claude", "claude"], default_runtime: "claude", extra: 1 })
      )
      // The Schema's issues in its order (an excess property first), then the stem rule.
      const expected = [
        ["extra", "is not a known field"],
        ["schema", "must be 1"],
        ["cwd", "must be an absolute path"],
        ["runtimes", "must not list a runtime twice"],
        ["personality", "must equal the file stem \"ann\", got \"bob\""]
      ]
      const { got, scan } = yield* Effect.gen(function*() {
        const peers = yield* Peers
        return { got: yield* Effect.flip(peers.get("ann")), scan: yield* peers.scan }
      }).pipe(Effect.provide(CapabilityServices.layer({ root })))
      for (const refused of [got, scan.invalid[0]]) {
        if (refused === undefined || refused._tag !== "InvalidFile") return expect.fail(String(refused))
        expect(refused.name).toBe("InvalidPeerFile")
        expect(faultsOf(refused)).toEqual(expected)
        expect(refused.message.split("\n").map((line) => line.startsWith(`invalid peer file ${file}: field "`))).toEqual(
          expected.map(() => true)
        )
      }
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("host.json with several faults", () =>
    Effect.gen(function*() {
      const { fs, root } = yield* temp
      yield* fs.makeDirectory(root)
      yield* fs.writeFileString(
        join(root, "host.json"),
        JSON.stringify({
          schema: 1,
          agent_runtimes: ["claude", "Codex"],
          channel_runtimes: "telegram",
          profiles: { claude: { private_dir: "/abs/{personality}" }, opencode: { private_dir: "state/opencode" } },
          redact: ["("]
        })
      )
      const refused = yield* Effect.flip(RuntimeProfiles.make.pipe(Effect.provide(StateRoot.layer({ root }))))
      if (refused._tag !== "InvalidFile") return expect.fail(refused.message)
      expect(refused.name).toBe("InvalidHostConfig")
      expect(refused.faults.map((f) => f.field)).toEqual([
        "agent_runtimes[1]",
        "channel_runtimes",
        "profiles.claude.private_dir",
        "profiles.opencode.private_dir",
        "redact[0]"
      ])
      expect(refused.faults.map((f) => f.rule)).toEqual([
        expect.stringContaining("must be 1-64 characters"),
        expect.stringContaining("Expected ReadonlyArray"),
        "must be relative to the state root",
        "must carry {personality}: each peer has its own",
        expect.stringContaining("is not a regular expression")
      ])
      expect(refused.message.split("\n")).toHaveLength(5)
      for (const line of refused.message.split("\n")) {
        expect(line.startsWith(`invalid host configuration ${join(root, "host.json")}: field "`)).toBe(true)
      }
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a manifest with several wrong fields, its folder rules among them", () =>
    Effect.gen(function*() {
      const { base } = yield* temp
      const pluginRoot = join(base, "plugins")
      // A reference plugin's manifest (test/fixtures/referencePlugins.ts) with five wrong fields.
      const reference = JSON.parse(referenceManifests.find((m) => m.folder === "browser")!.text) as Record<string, unknown>
      writePlugin(pluginRoot, "notes", {
        manifest: { ...reference, name: "other-name", version: "", apiVersion: 1, entry: "../outside/index.mjs", showOutput: "all" }
      })
      const found = yield* Discovery.readFolder({ kind: "instance", path: pluginRoot }, "notes")
      const discovered = Option.getOrThrow(found)
      if (discovered._tag !== "Invalid") return expect.fail("the manifest was accepted")
      const file = join(pluginRoot, "notes", "city-plugin.json")
      expect((discovered.error.issues ?? []).map((i) => i.field)).toEqual(["version", "apiVersion", "showOutput", "name", "entry"])
      expect((discovered.error.issues ?? []).at(-2)?.rule).toBe("must equal the folder name \"notes\", got \"other-name\"")
      expect((discovered.error.issues ?? []).at(-1)?.rule).toBe("must stay inside the plugin folder, got \"../outside/index.mjs\"")
      const lines = discovered.error.message.split("\n")
      expect(lines).toHaveLength(5)
      for (const [i, line] of lines.entries()) {
        expect(line.startsWith(`${file}: ${discovered.error.issues?.[i]?.field}: `)).toBe(true)
      }
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a manifest with 25 faults: 20 lines, then the count of the other 5", () =>
    Effect.gen(function*() {
      const { base } = yield* temp
      const pluginRoot = join(base, "plugins")
      writePlugin(pluginRoot, "many", { manifest: manifest("many", { requiresControls: Array.from({ length: 25 }, () => "") }) })
      const discovered = Option.getOrThrow(yield* Discovery.readFolder({ kind: "instance", path: pluginRoot }, "many"))
      if (discovered._tag !== "Invalid") return expect.fail("the manifest was accepted")
      expect(discovered.error.issues).toHaveLength(20)
      expect(discovered.error.moreIssues).toBe(5)
      const lines = discovered.error.message.split("\n")
      expect(lines).toHaveLength(21)
      expect(lines[20]).toBe("… and 5 more faults")
    }).pipe(Effect.provide(NodeContext.layer)))
})
