/**
 * The in-memory file system (src/services/files/MemoryFileSystem.ts): the same script of
 * operations gives the same results and the same errors on it as on Node's file system (a
 * differential table, run on both), the state root runs on it unchanged (atomic writes, reads
 * through the one reader, listings, the `proper-lockfile` lock), the owner's mode bits are
 * enforced, and what it does not model fails loudly.
 */
import { describe, expect, it } from "@effect/vitest"
import * as PlatformError from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as StateRoot from "../../../src/services/root/StateRoot.ts"
import * as TextFile from "../../../src/services/files/TextFile.ts"
import { MemoryFileSystem } from "../../../src/testing.ts"

/** What an operation gave, comparable across file systems: a value, or the error's tag, reason and code. */
const outcome = <A>(effect: Effect.Effect<A, PlatformError.PlatformError, Scope.Scope>) =>
  Effect.scoped(effect).pipe(
    Effect.map((value) => ({ ok: value === undefined ? "done" : value as unknown })),
    Effect.catchAll((e) =>
      Effect.succeed({
        error: `${e._tag}/${e._tag === "SystemError" ? e.reason : "-"}/${String((e.cause as { code?: unknown } | undefined)?.code)}`
      })
    )
  )

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes)

/** One script of operations under `base`, each step's outcome in order. */
const script = (fs: FileSystem.FileSystem, base: string) => {
  const at = (p: string) => `${base}/${p}`
  const steps: ReadonlyArray<readonly [string, Effect.Effect<unknown, PlatformError.PlatformError, Scope.Scope>]> = [
    ["mkdir without parent", fs.makeDirectory(at("a/b"))],
    // Node's recursive mkdir returns the first folder it made, though the platform types it void.
    ["mkdir -p", Effect.asVoid(fs.makeDirectory(at("a/b"), { recursive: true }))],
    ["mkdir existing", fs.makeDirectory(at("a"))],
    ["mkdir -p existing", Effect.asVoid(fs.makeDirectory(at("a"), { recursive: true }))],
    ["write", fs.writeFileString(at("a/b/f"), "hello")],
    ["read", fs.readFileString(at("a/b/f"))],
    ["stat file", Effect.map(fs.stat(at("a/b/f")), (i) => `${i.type}:${i.size}`)],
    ["stat folder", Effect.map(fs.stat(at("a/b")), (i) => i.type)],
    ["exists", fs.exists(at("a/b/f"))],
    ["exists missing", fs.exists(at("a/zz"))],
    ["mkdir -p through a file", fs.makeDirectory(at("a/b/f/x"), { recursive: true })],
    ["mkdir -p onto a file", fs.makeDirectory(at("a/b/f"), { recursive: true })],
    ["stat under a file", fs.stat(at("a/b/f/x"))],
    ["stat missing", fs.stat(at("a/zz"))],
    ["list recursive", Effect.map(fs.readDirectory(at("a"), { recursive: true }), (l) => [...l].sort())],
    ["list a file", fs.readDirectory(at("a/b/f"))],
    ["list missing", fs.readDirectory(at("zz"))],
    ["read a folder", fs.readFile(at("a/b"))],
    ["write a folder", fs.writeFileString(at("a/b"), "x")],
    ["write without parent", fs.writeFileString(at("q/x"), "x")],
    ["open a folder for writing", fs.open(at("a/b"), { flag: "w" })],
    ["open a folder for reading, sync", Effect.flatMap(fs.open(at("a/b"), { flag: "r" }), (d) => d.sync)],
    ["read an open folder", Effect.flatMap(fs.open(at("a/b"), { flag: "r" }), (d) => d.readAlloc(10))],
    ["open wx existing", fs.open(at("a/b/f"), { flag: "wx" })],
    ["open r missing", fs.open(at("a/b/none"), { flag: "r" })],
    ["rename into itself", fs.rename(at("a"), at("a/b/sub"))],
    ["mkdir -p c/d", Effect.asVoid(fs.makeDirectory(at("c/d"), { recursive: true }))],
    ["write c/d/g", fs.writeFileString(at("c/d/g"), "g")],
    ["rename over a non-empty folder", fs.rename(at("a"), at("c"))],
    ["rename a file over a folder", fs.rename(at("a/b/f"), at("c"))],
    ["rename a folder over a file", fs.rename(at("c"), at("a/b/f"))],
    ["rename a file", fs.rename(at("a/b/f"), at("a/b/f2"))],
    ["old name gone", fs.exists(at("a/b/f"))],
    ["read renamed", fs.readFileString(at("a/b/f2"))],
    ["append", fs.writeFileString(at("a/b/f2"), "bye", { flag: "a" })],
    ["read appended", fs.readFileString(at("a/b/f2"))],
    ["write over", fs.writeFileString(at("a/b/o"), "longer text")],
    ["write shorter", fs.writeFileString(at("a/b/o"), "short")],
    ["read shorter", fs.readFileString(at("a/b/o"))],
    ["rename over a file", fs.rename(at("a/b/o"), at("c/d/g"))],
    ["read replaced", fs.readFileString(at("c/d/g"))],
    ["rename a folder over an empty one", Effect.zipRight(fs.makeDirectory(at("empty")), fs.rename(at("c/d"), at("empty")))],
    ["list moved folder", fs.readDirectory(at("empty"))],
    ["remove a folder", fs.remove(at("a"))],
    ["remove missing", fs.remove(at("zz"))],
    ["remove missing, forced", fs.remove(at("zz/x"), { force: true })],
    ["remove under a file, forced", fs.remove(at("a/b/f2/x"), { force: true })],
    ["readLink of a file", fs.readLink(at("a/b/f2"))],
    ["hard link a folder", fs.link(at("a"), at("a2"))],
    ["hard link a file", fs.link(at("a/b/f2"), at("a/b/h"))],
    ["write through the link", Effect.flatMap(fs.open(at("a/b/h"), { flag: "r+" }), (f) => f.writeAll(new TextEncoder().encode("J")))],
    ["read the other name", fs.readFileString(at("a/b/f2"))],
    ["links counted", Effect.map(fs.stat(at("a/b/f2")), (i) => i.nlink)],
    ["copyFile a folder", fs.copyFile(at("a"), at("c2"))],
    ["copyFile", Effect.zipRight(fs.copyFile(at("a/b/f2"), at("c3")), fs.readFileString(at("c3")))],
    ["copy a tree", Effect.zipRight(fs.copy(at("a"), at("a-copy")), Effect.map(fs.readDirectory(at("a-copy"), { recursive: true }), (l) => [...l].sort()))],
    ["copy into itself", fs.copy(at("a"), at("a/b/inner"))],
    ["truncate", Effect.zipRight(fs.truncate(at("a/b/f2"), 2), fs.readFileString(at("a/b/f2")))],
    ["truncate a folder", fs.truncate(at("a"))],
    [
      "a handle: write, seek, read",
      Effect.gen(function*() {
        const file = yield* fs.open(at("a/b/w"), { flag: "w+" })
        yield* file.writeAll(new TextEncoder().encode("abcdef"))
        yield* file.seek(2, "start")
        const middle = yield* file.readAlloc(3)
        const rest = yield* file.readAlloc(10)
        const end = yield* file.readAlloc(10)
        yield* file.truncate(1)
        return [Option.map(middle, text), Option.map(rest, text), end, (yield* file.stat).size]
      })
    ],
    [
      "an append handle writes at the end",
      Effect.gen(function*() {
        const file = yield* fs.open(at("a/b/w"), { flag: "a" })
        yield* file.writeAll(new TextEncoder().encode("XY"))
        return yield* Effect.scoped(Effect.flatMap(fs.open(at("a/b/w")), (f) => Effect.map(f.readAlloc(10), Option.map(text))))
      })
    ],
    ["read a write-only handle", Effect.flatMap(fs.open(at("a/b/w"), { flag: "w" }), (f) => f.readAlloc(1))],
    ["chmod", Effect.zipRight(fs.chmod(at("a/b/w"), 0o640), Effect.map(fs.stat(at("a/b/w")), (i) => (i.mode & 0o777).toString(8)))],
    [
      "utimes",
      Effect.zipRight(
        fs.utimes(at("a/b/w"), new Date(1_000_000), new Date(2_000_000)),
        Effect.map(fs.stat(at("a/b/w")), (i) => Option.map(i.mtime, (d) => d.getTime()))
      )
    ],
    ["utimes in seconds", Effect.zipRight(fs.utimes(at("a/b/w"), 5, 7), Effect.map(fs.stat(at("a/b/w")), (i) => Option.map(i.mtime, (d) => d.getTime())))],
    ["remove -r", Effect.zipRight(fs.remove(at("a"), { recursive: true }), fs.exists(at("a")))],
    ["list the base", Effect.map(fs.readDirectory(base), (l) => [...l].sort())]
  ]
  return Effect.forEach(steps, ([name, step]) => Effect.map(outcome(step), (result) => ({ name, ...result })))
}

describe("MemoryFileSystem", () => {
  it.scoped("runs a script of operations with the results and the errors of Node's file system", () =>
    Effect.gen(function*() {
      const node = yield* Effect.provide(FileSystem.FileSystem, NodeFileSystem.layer)
      const dir = yield* node.makeTempDirectoryScoped({ prefix: "city-memfs-" })
      const onDisk = yield* script(node, dir)
      const memory = yield* MemoryFileSystem.make()
      yield* memory.makeDirectory("/work")
      const inMemory = yield* script(memory, "/work")
      expect(inMemory).toEqual(onDisk)
      // The script does reach the interesting cases (a table of only successes would prove little).
      expect(onDisk.filter((s) => "error" in s).length).toBeGreaterThan(20)
    }))

  it.effect("the state root runs on it: atomic writes, 0700 folders and 0600 files, reads, listings, removal", () =>
    Effect.gen(function*() {
      const root = yield* StateRoot.StateRoot
      const fs = yield* FileSystem.FileSystem
      expect(yield* Effect.flip(root.require)).toMatchObject({ _tag: "StateRootError", reason: "RootNotFound" })
      yield* root.ensure
      yield* root.writeJson("peers/ada.json", { name: "ada" })
      yield* root.writeText("peers/bob.json", "{}\n")
      expect(yield* root.readText("peers/ada.json")).toEqual(Option.some("{\n  \"name\": \"ada\"\n}\n"))
      expect(yield* root.readText("peers/none.json")).toEqual(Option.none())
      // ENOTDIR (a path under a file) reads as absent, as on a disk.
      expect(yield* root.readText("peers/ada.json/x")).toEqual(Option.none())
      expect(yield* root.list("peers")).toEqual(["ada.json", "bob.json"])
      expect(((yield* fs.stat("/state/peers")).mode & 0o777).toString(8)).toBe("700")
      expect(((yield* fs.stat("/state/peers/ada.json")).mode & 0o777).toString(8)).toBe("600")
      // No temp file is left beside the documents.
      expect(yield* fs.readDirectory("/state", { recursive: true })).toEqual(["peers", "peers/ada.json", "peers/bob.json"])
      yield* root.remove("peers")
      expect(yield* root.list("peers")).toEqual([])
    }).pipe(
      Effect.provide(StateRoot.layer({ root: "/state" }).pipe(Layer.provideMerge(Layer.merge(MemoryFileSystem.layer, Path.layer))))
    ))

  it.live("the state root's cross-process lock (proper-lockfile) is taken and released in memory", () =>
    Effect.gen(function*() {
      const root = yield* StateRoot.StateRoot
      const fs = yield* FileSystem.FileSystem
      yield* root.ensure
      yield* Effect.scoped(Effect.gen(function*() {
        yield* root.lock
        expect((yield* fs.stat("/state/.lock")).type).toBe("Directory")
        expect(JSON.parse(yield* fs.readFileString("/state/.lock-holder.json"))).toMatchObject({ pid: process.pid })
      }))
      expect(yield* fs.readDirectory("/state")).toEqual([])
    }).pipe(
      Effect.provide(StateRoot.layer({ root: "/state" }).pipe(Layer.provideMerge(Layer.merge(MemoryFileSystem.layer, Path.layer))))
    ))

  it.effect("the one reader reads through it: a folder is refused as not a regular file", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      yield* fs.makeDirectory("/p/prompt", { recursive: true })
      yield* fs.writeFileString("/p/prompt/a.md", "\uFEFFhello")
      expect(yield* TextFile.read("/p/prompt/a.md", TextFile.kinds.prompt)).toEqual(Option.some("hello"))
      expect(yield* Effect.flip(TextFile.read("/p/prompt", TextFile.kinds.prompt))).toMatchObject({ problem: "not-a-regular-file" })
    }).pipe(Effect.provide(MemoryFileSystem.layer)))

  it.effect("the owner's mode bits are enforced, as for a non-root user", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      yield* fs.makeDirectory("/d")
      yield* fs.writeFileString("/d/f", "x")
      yield* fs.chmod("/d/f", 0o200)
      expect(yield* Effect.flip(fs.readFileString("/d/f"))).toMatchObject({ reason: "PermissionDenied" })
      expect(yield* Effect.flip(fs.access("/d/f", { readable: true }))).toMatchObject({ reason: "PermissionDenied" })
      yield* fs.chmod("/d", 0o500)
      expect(yield* Effect.flip(fs.writeFileString("/d/g", "y"))).toMatchObject({ reason: "PermissionDenied" })
      expect(yield* Effect.flip(fs.remove("/d/f"))).toMatchObject({ reason: "PermissionDenied" })
      yield* fs.chmod("/d", 0o600)
      expect(yield* Effect.flip(fs.stat("/d/f"))).toMatchObject({ reason: "PermissionDenied" })
      // New files and folders take the umask off their mode.
      yield* fs.makeDirectory("/e", { mode: 0o777 })
      expect(((yield* fs.stat("/e")).mode & 0o777).toString(8)).toBe("755")
    }).pipe(Effect.provide(MemoryFileSystem.layer)))

  it.effect("temporary folders live under /tmp; a scoped one is removed when its Scope closes", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const kept = yield* fs.makeTempDirectory({ prefix: "kept-" })
      expect(kept).toMatch(/^\/tmp\/kept-[A-Za-z0-9]{6}$/)
      const scoped = yield* Effect.scoped(Effect.tap(fs.makeTempDirectoryScoped(), (dir) => fs.writeFileString(`${dir}/x`, "x")))
      expect(yield* fs.exists(scoped)).toBe(false)
      expect(yield* fs.exists(kept)).toBe(true)
      const file = yield* fs.makeTempFile({ suffix: ".json" })
      expect((yield* fs.stat(file)).size).toBe(BigInt(0))
      expect(file.endsWith(".json")).toBe(true)
    }).pipe(Effect.provide(MemoryFileSystem.layer)))

  it.effect("each build of the layer is a new, empty store", () =>
    Effect.gen(function*() {
      yield* Effect.flatMap(FileSystem.FileSystem, (fs) => fs.writeFileString("/tmp/x", "x")).pipe(Effect.provide(MemoryFileSystem.layer))
      const again = yield* Effect.flatMap(FileSystem.FileSystem, (fs) => fs.exists("/tmp/x")).pipe(Effect.provide(MemoryFileSystem.layer))
      expect(again).toBe(false)
    }))

  it.effect("what it does not model fails loudly, naming the operation: symbolic links, watching, relative paths", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      yield* fs.writeFileString("/tmp/f", "x")
      const symlink = yield* Effect.flip(fs.symlink("/tmp/f", "/tmp/l"))
      expect(symlink).toMatchObject({ _tag: "SystemError", method: "symlink" })
      expect(symlink.message).toContain("symbolic links")
      expect(yield* fs.exists("/tmp/l")).toBe(false)
      const watched = yield* Effect.exit(Stream.runDrain(fs.watch("/tmp")))
      expect(Exit.isFailure(watched)).toBe(true)
      expect(String(Exit.isFailure(watched) ? watched.cause : "")).toContain("watch")
      const relative = yield* Effect.flip(fs.writeFileString("notes.txt", "x"))
      expect(relative).toMatchObject({ _tag: "BadArgument", method: "writeFile" })
      expect(relative.message).toContain("absolute paths only")
    }).pipe(Effect.provide(MemoryFileSystem.layer)))
})
