/**
 * The behaviour of the declaration store (`Capabilities`) and the peer store (`Peers`), run against
 * each implementation: the files under the state root (capabilities/Capabilities.ts, Peers.ts) and
 * SQL on SQLite in a temp file (cluster/SqlCapabilities.ts, SqlPeers.ts), so a difference between
 * them fails. Each store names where a document lives with `file`, and an invalid document is
 * reported with that same locator (docs/capability-plugin-lifecycle.md, "Declaration": "an invalid
 * file found on disk is reported loudly and never skipped silently"; docs/cluster.md, "Capability,
 * peer and host stores on SQL").
 */
import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, truncateSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import type { Declaration } from "../../src/schema/Declaration.ts"
import { defaultHostConfig } from "../../src/schema/HostConfig.ts"
import type { Peer } from "../../src/schema/Peer.ts"
import * as Capabilities from "../../src/services/capabilities/Capabilities.ts"
import * as Peers from "../../src/services/capabilities/Peers.ts"
import * as RuntimeProfiles from "../../src/services/capabilities/RuntimeProfiles.ts"
import * as StateRoot from "../../src/services/root/StateRoot.ts"
import * as SqlCapabilities from "../../src/services/cluster/SqlCapabilities.ts"
import * as SqlPeers from "../../src/services/cluster/SqlPeers.ts"

/** Stores a document's text behind the store's back: a file written by hand, a row written by SQL. */
class Behind extends Context.Tag("test/Behind")<Behind, {
  readonly declaration: (name: string, text: string) => Effect.Effect<void>
  readonly peer: (personality: string, text: string) => Effect.Effect<void>
}>() {}

interface Store {
  readonly name: string
  readonly layer: (root: string) => Layer.Layer<Capabilities.Capabilities | Peers.Peers | Behind, unknown>
}

/** What every store runs on: this host's state root (a peer's private directories) and host.json's defaults. */
const host = (root: string) =>
  Layer.mergeAll(
    StateRoot.layer({ root }),
    Layer.succeed(RuntimeProfiles.RuntimeProfiles, RuntimeProfiles.fromConfig(defaultHostConfig))
  ).pipe(Layer.provideMerge(NodeContext.layer))

const write = (file: string, text: string) =>
  Effect.sync(() => {
    mkdirSync(join(file, ".."), { recursive: true })
    writeFileSync(file, text)
  })

const files: Store = {
  name: "files",
  layer: (root) =>
    Layer.mergeAll(
      Capabilities.layer,
      Peers.layer,
      Layer.succeed(Behind, {
        declaration: (name, text) => write(join(root, "capabilities", `${name}.json`), text),
        peer: (personality, text) => write(join(root, "peers", `${personality}.json`), text)
      })
    ).pipe(Layer.provide(host(root)))
}

const sqlite: Store = {
  name: "SQLite",
  layer: (root) =>
    Layer.mergeAll(
      SqlCapabilities.layer,
      SqlPeers.layer({ host: "web-01" }),
      Layer.effect(
        Behind,
        Effect.map(SqlClient.SqlClient, (sql) => ({
          declaration: (name: string, text: string) =>
            Effect.orDie(sql`INSERT INTO city_capabilities (name, revision, declaration) VALUES (${name}, 1, ${text})`),
          peer: (personality: string, text: string) =>
            Effect.orDie(sql`INSERT INTO city_peers (host, personality, peer) VALUES (${"web-01"}, ${personality}, ${text})`)
        }))
      )
    ).pipe(Layer.provide(host(root)), Layer.provide(SqliteClient.layer({ filename: join(root, "city.db") })))
}

const declaration = (capability: string, version = "1.0.0"): Declaration => ({
  schema: 1,
  capability,
  package: `@test/${capability}`,
  version,
  runtimes: ["claude", "opencode"],
  provision: { command: "/abs/bin", args: ["provision", "{personality}"] },
  unprovision: { command: "/abs/bin", args: ["unprovision", "{personality}"] }
})

const peer = (personality: string, cwd = `/work/${personality}`): Peer => ({
  schema: 1,
  personality,
  cwd,
  runtimes: ["claude", "opencode"],
  default_runtime: "claude"
})

/** Runs `body` on a fresh state root (and a fresh database) with the store's services. */
const withStore = <A, E>(
  store: Store,
  body: (root: string) => Effect.Effect<A, E, Capabilities.Capabilities | Peers.Peers | Behind>
) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const root = yield* fs.makeTempDirectoryScoped()
    return yield* body(root).pipe(Effect.provide(store.layer(root)))
  }).pipe(Effect.provide(NodeContext.layer))

describe.each([files, sqlite])("the $name stores", (store) => {
  it.scoped("a declaration is stored, replaced, listed in name order and removed", () =>
    withStore(store, () =>
      Effect.gen(function*() {
        const capabilities = yield* Capabilities.Capabilities
        yield* capabilities.store(declaration("mail"))
        yield* capabilities.store(declaration("a-notes"))
        expect(yield* capabilities.get("mail")).toEqual(declaration("mail"))
        yield* capabilities.store(declaration("mail", "2.0.0"))
        expect((yield* capabilities.get("mail")).version).toBe("2.0.0")
        const scan = yield* capabilities.scan
        expect(scan.valid.map((d) => [d.capability, d.version])).toEqual([["a-notes", "1.0.0"], ["mail", "2.0.0"]])
        expect(scan.invalid).toEqual([])
        yield* capabilities.remove("mail")
        yield* capabilities.remove("mail") // a missing one is not an error
        const unknown = yield* Effect.flip(capabilities.get("mail"))
        expect(unknown).toMatchObject({ _tag: "CapabilityError", reason: "UnknownCapability", capability: "mail", file: capabilities.file("mail") })
        expect((yield* capabilities.scan).valid.map((d) => d.capability)).toEqual(["a-notes"])
      })))

  it.scoped("readFile reads a declaration file on this host's disk through the one reader, on this host's rules", () =>
    withStore(store, (root) =>
      Effect.gen(function*() {
        const capabilities = yield* Capabilities.Capabilities
        const file = join(root, "input", "mail.json")
        yield* write(file, JSON.stringify(declaration("mail")))
        expect(yield* capabilities.readFile(file)).toEqual(declaration("mail"))
        const missing = yield* Effect.flip(capabilities.readFile(join(root, "input", "none.json")))
        expect([missing.name, missing.file, missing.rule]).toEqual(["InvalidDeclaration", join(root, "input", "none.json"), "does not exist"])
        // The one reader's refusals: a FIFO is refused at once, a file over the declaration cap too.
        execFileSync("mkfifo", [join(root, "input", "pipe.json")])
        writeFileSync(join(root, "input", "big.json"), "")
        truncateSync(join(root, "input", "big.json"), 2 * 1024 * 1024)
        const refused = yield* Effect.forEach(["pipe.json", "big.json"], (name) => Effect.flip(capabilities.readFile(join(root, "input", name))))
        expect(refused.map((e) => e.rule)).toEqual([
          "is a FIFO, not a regular file",
          "is 2097152 bytes, over the 1048576-byte cap for a capability declaration"
        ])
        yield* write(join(root, "input", "chat.json"), JSON.stringify({ ...declaration("chat"), runtimes: ["claude", "telegram"] }))
        const channel = yield* Effect.flip(capabilities.readFile(join(root, "input", "chat.json")))
        expect([channel.field, channel.rule]).toEqual(["runtimes[1]", expect.stringContaining("telegram is a channel runtime of this host")])
      })))

  it.scoped("a stored declaration that breaks a rule is reported with its locator by scan and refused by get", () =>
    withStore(store, () =>
      Effect.gen(function*() {
        const capabilities = yield* Capabilities.Capabilities
        const behind = yield* Behind
        yield* capabilities.store(declaration("mail"))
        yield* behind.declaration("bad", "{ torn")
        yield* behind.declaration("chat", JSON.stringify({ ...declaration("chat"), runtimes: ["telegram"] }))
        yield* behind.declaration("other", JSON.stringify(declaration("not-other")))
        yield* behind.declaration("extra", JSON.stringify({ ...declaration("extra"), more: 1 }))
        const scan = yield* capabilities.scan
        expect(scan.valid.map((d) => d.capability)).toEqual(["mail"])
        expect(scan.invalid.map((e) => [e.name, e.file, e.field, e.rule])).toEqual([
          ["InvalidDeclaration", capabilities.file("bad"), "", expect.stringContaining("not valid JSON")],
          ["InvalidDeclaration", capabilities.file("chat"), "runtimes[0]", expect.stringContaining("is a channel runtime")],
          ["InvalidDeclaration", capabilities.file("extra"), "more", "is not a known field"],
          ["InvalidDeclaration", capabilities.file("other"), "capability", expect.stringContaining("must equal")]
        ])
        const refused = yield* Effect.flip(capabilities.get("chat"))
        expect(refused).toMatchObject({ _tag: "InvalidFile", reason: "Declaration", file: capabilities.file("chat"), field: "runtimes[0]" })
        expect(refused.message).toContain(capabilities.file("chat"))
      })))

  it.scoped("a peer is put, read, listed in name order, and purged with its private directories", () =>
    withStore(store, (root) =>
      Effect.gen(function*() {
        const peers = yield* Peers.Peers
        yield* peers.put(peer("bob"))
        yield* peers.put(peer("alice"))
        yield* peers.put(peer("bob", "/elsewhere"))
        expect(yield* peers.get("bob")).toEqual(peer("bob", "/elsewhere"))
        expect(yield* peers.exists("alice")).toBe(true)
        expect(yield* peers.exists("carol")).toBe(false)
        expect((yield* peers.scan).valid.map((p) => p.personality)).toEqual(["alice", "bob"])

        const privateDir = (p: string) => join(root, "state", "opencode", p)
        mkdirSync(privateDir("alice"), { recursive: true })
        mkdirSync(privateDir("bob"), { recursive: true })
        yield* peers.purgeRuntime("bob", "opencode")
        yield* peers.purgeRuntime("bob", "claude") // no private directory: nothing to do
        expect(existsSync(privateDir("bob"))).toBe(false)
        expect(yield* peers.exists("bob")).toBe(true)

        yield* peers.purge("alice")
        expect(existsSync(privateDir("alice"))).toBe(false)
        expect(yield* peers.exists("alice")).toBe(false)
        expect(yield* Effect.flip(peers.get("alice"))).toMatchObject({ _tag: "CapabilityError", reason: "UnknownPeer", file: peers.file("alice") })
        expect((yield* peers.scan).valid.map((p) => p.personality)).toEqual(["bob"])
      })))

  it.scoped("a stored peer that breaks a rule exists, is reported with its locator by scan and refused by get", () =>
    withStore(store, () =>
      Effect.gen(function*() {
        const peers = yield* Peers.Peers
        const behind = yield* Behind
        yield* peers.put(peer("alice"))
        yield* behind.peer("bob", JSON.stringify({ ...peer("bob"), cwd: "relative" }))
        yield* behind.peer("carol", JSON.stringify(peer("dave")))
        const scan = yield* peers.scan
        expect(scan.valid.map((p) => p.personality)).toEqual(["alice"])
        expect(scan.invalid.map((e) => [e.name, e.file, e.field, e.rule])).toEqual([
          ["InvalidPeerFile", peers.file("bob"), "cwd", "must be an absolute path"],
          ["InvalidPeerFile", peers.file("carol"), "personality", expect.stringContaining("must equal")]
        ])
        expect(yield* peers.exists("bob")).toBe(true)
        expect(yield* Effect.flip(peers.get("bob"))).toMatchObject({ _tag: "InvalidFile", reason: "PeerFile", file: peers.file("bob") })
      })))
})
