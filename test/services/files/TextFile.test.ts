import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as PlatformError from "@effect/platform/Error"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { execFile, execFileSync } from "node:child_process"
import { chmodSync, mkdirSync, symlinkSync, truncateSync, unlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { FileRefused } from "../../../src/schema/FileErrors.ts"
import * as Capabilities from "../../../src/services/capabilities/Capabilities.ts"
import * as RuntimeProfiles from "../../../src/services/capabilities/RuntimeProfiles.ts"
import * as StateRoot from "../../../src/services/root/StateRoot.ts"
import * as TextFile from "../../../src/services/files/TextFile.ts"
import * as Fingerprints from "../../../src/services/live/Fingerprints.ts"

const projectRoot = fileURLToPath(new URL("../../..", import.meta.url))

/** A fresh temp directory for the test's Scope. */
const tempDir = Effect.flatMap(FileSystem.FileSystem, (fs) => fs.makeTempDirectoryScoped({ prefix: "city-textfile-" }))

const refusal = (effect: Effect.Effect<unknown, FileRefused, FileSystem.FileSystem>) =>
  Effect.flip(effect).pipe(Effect.provide(NodeContext.layer))

const fifo = (path: string) => execFileSync("mkfifo", [path])

describe("TextFile.read", () => {
  it.scoped("gives the text of a regular file, and None for a missing one", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFileSync(join(dir, "a.json"), "{\"a\": \"é\"}\n")
      expect(yield* TextFile.read(join(dir, "a.json"), TextFile.kinds.stateDocument)).toEqual(Option.some("{\"a\": \"é\"}\n"))
      expect(yield* TextFile.read(join(dir, "missing.json"), TextFile.kinds.stateDocument)).toEqual(Option.none())
      expect(yield* TextFile.readBytes(join(dir, "missing.json"), TextFile.kinds.stateDocument)).toEqual(Option.none())
      writeFileSync(join(dir, "empty"), "")
      expect(yield* TextFile.read(join(dir, "empty"), TextFile.kinds.prompt)).toEqual(Option.some(""))
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a path under a plain file (ENOTDIR) is absent, not an error", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFileSync(join(dir, "plain"), "x")
      expect(yield* TextFile.read(join(dir, "plain", "host.json"), TextFile.kinds.hostConfig)).toEqual(Option.none())
      expect(yield* TextFile.readBytes(join(dir, "plain", "a", "b"), TextFile.kinds.launchFile)).toEqual(Option.none())
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("strips a UTF-8 byte-order mark from the text; readBytes keeps the bytes as they are", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = join(dir, "bom.json")
      writeFileSync(file, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("{}")]))
      expect(yield* TextFile.read(file, TextFile.kinds.manifest)).toEqual(Option.some("{}"))
      const bytes = yield* TextFile.readBytes(file, TextFile.kinds.manifest)
      expect(Option.map(bytes, (b) => b.length)).toEqual(Option.some(5))
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("reads a file larger than one read chunk whole, up to its cap", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = join(dir, "big.json")
      const text = "é".repeat(300_000) // 600,000 bytes: several 64 KiB reads after the first
      writeFileSync(file, text)
      expect(yield* TextFile.read(file, TextFile.kinds.manifest)).toEqual(Option.some(text))
      writeFileSync(file, "x".repeat(TextFile.kinds.manifest.maxBytes))
      const exact = yield* TextFile.readBytes(file, TextFile.kinds.manifest)
      expect(Option.map(exact, (b) => b.length)).toEqual(Option.some(TextFile.kinds.manifest.maxBytes))
    }).pipe(Effect.provide(NodeContext.layer)))

  describe("refuses invalid UTF-8 with the byte offset of the first ill-formed sequence", () => {
    const cases: ReadonlyArray<readonly [string, ReadonlyArray<number>, number]> = [
      ["a stray continuation byte", [...Buffer.from("0123456789abcdefg"), 0x80, 0x41], 17],
      ["a byte that never starts UTF-8", [0x41, 0xff], 1],
      ["an overlong form", [0x41, 0x42, 0xc0, 0xaf], 2],
      ["an encoded surrogate", [0xed, 0xa0, 0x80], 0],
      ["a code point over U+10FFFF", [0x20, 0xf4, 0x90, 0x80, 0x80], 1],
      ["a sequence cut by the end of the file", [0x41, 0xe2, 0x82], 1],
      ["a bad byte after a byte-order mark", [0xef, 0xbb, 0xbf, 0x41, 0xfe], 4]
    ]
    for (const [name, bytes, offset] of cases) {
      it.scoped(name, () =>
        Effect.gen(function*() {
          const dir = yield* tempDir
          const file = join(dir, "bad.txt")
          writeFileSync(file, Buffer.from(bytes))
          const e = yield* refusal(TextFile.read(file, TextFile.kinds.prompt))
          expect(e.problem).toBe("invalid-utf8")
          expect(e.rule).toBe(`is not valid UTF-8 (at byte ${offset})`)
          expect(e.message).toBe(`${file}: is not valid UTF-8 (at byte ${offset})`)
        }).pipe(Effect.provide(NodeContext.layer)))
    }
  })

  it.live("refuses a FIFO and a symlink to a FIFO at once, without opening them", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const dir = yield* tempDir
        const pipe = join(dir, "pipe")
        fifo(pipe)
        symlinkSync(pipe, join(dir, "link-to-pipe"))
        const started = Date.now()
        for (const file of [pipe, join(dir, "link-to-pipe")]) {
          const e = yield* refusal(TextFile.read(file, TextFile.kinds.stateDocument))
          expect(e.problem).toBe("not-a-regular-file")
          expect(e.message).toBe(`${file}: is a FIFO, not a regular file`)
        }
        expect(Date.now() - started).toBeLessThan(2_000)
      }).pipe(Effect.provide(NodeContext.layer))
    ))

  it.scoped("refuses devices and directories: a symlink to /dev/zero, /dev/null, a folder", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      symlinkSync("/dev/zero", join(dir, "zero"))
      mkdirSync(join(dir, "folder"))
      const cases: ReadonlyArray<readonly [string, string]> = [
        [join(dir, "zero"), "is a character device, not a regular file"],
        ["/dev/null", "is a character device, not a regular file"],
        [join(dir, "folder"), "is a directory, not a regular file"]
      ]
      for (const [file, rule] of cases) {
        const e = yield* refusal(TextFile.readBytes(file, TextFile.kinds.launchFile))
        expect(e.problem).toBe("not-a-regular-file")
        expect(e.rule).toBe(rule)
      }
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("refuses a 50 MB file with its size and the cap, in a short reason, without reading it", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = join(dir, "city-plugin.json")
      writeFileSync(file, "")
      truncateSync(file, 50 * 1024 * 1024) // sparse: nothing is written
      const e = yield* refusal(TextFile.read(file, TextFile.kinds.manifest))
      expect(e.problem).toBe("too-large")
      expect(e.rule).toBe("is 52428800 bytes, over the 1048576-byte cap for a plugin manifest")
      expect(e.message).toContain(file)
      expect(e.message.length).toBeLessThan(400)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a file without read permission: refused as unreadable, unless this user may read anything (root)", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = join(dir, "secret.json")
      writeFileSync(file, "{}")
      chmodSync(file, 0o000)
      const result = yield* Effect.either(TextFile.read(file, TextFile.kinds.stateDocument))
      if (process.getuid?.() === 0) {
        // Root reads a mode-000 file: the reader must then give its text, not a refusal.
        expect(result._tag).toBe("Right")
        if (result._tag === "Right") expect(result.right).toEqual(Option.some("{}"))
      } else {
        expect(result._tag).toBe("Left")
        if (result._tag === "Left") expect(result.left.message).toBe(`${file}: cannot be read: permission denied`)
      }
    }).pipe(Effect.provide(NodeContext.layer)))

  /** The real file system, with `open` (or the stat of the path and of the open file) replaced. */
  const tampered = (patch: (fs: FileSystem.FileSystem) => Partial<FileSystem.FileSystem>) =>
    Layer.effect(
      FileSystem.FileSystem,
      Effect.map(FileSystem.FileSystem, (fs) => ({ ...fs, ...patch(fs) }))
    ).pipe(Layer.provide(NodeFileSystem.layer))

  /** What a stat says of a small regular file. */
  const smallFile = (size: number): FileSystem.File.Info => ({
    type: "File",
    mtime: Option.none(),
    atime: Option.none(),
    birthtime: Option.none(),
    dev: 0,
    ino: Option.none(),
    mode: 0o644,
    nlink: Option.none(),
    uid: Option.none(),
    gid: Option.none(),
    rdev: Option.none(),
    size: FileSystem.Size(size),
    blksize: Option.none(),
    blocks: Option.none()
  })

  /** An open file whose `fstat` lies too: only its reads are real. */
  const lyingFile = (file: FileSystem.File, info: FileSystem.File.Info): FileSystem.File => ({
    [FileSystem.FileTypeId]: FileSystem.FileTypeId,
    fd: file.fd,
    stat: Effect.succeed(info),
    seek: (offset, from) => file.seek(offset, from),
    sync: file.sync,
    read: (buffer) => file.read(buffer),
    readAlloc: (size) => file.readAlloc(size),
    truncate: (length) => file.truncate(length),
    write: (buffer) => file.write(buffer),
    writeAll: (buffer) => file.writeAll(buffer)
  })

  it.scoped("an open that fails with PermissionDenied is refused as unreadable, in words", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = join(dir, "a.json")
      writeFileSync(file, "{}")
      const denied = tampered(() => ({
        open: (path) =>
          Effect.fail(
            new PlatformError.SystemError({ reason: "PermissionDenied", module: "FileSystem", method: "open", pathOrDescriptor: path })
          )
      }))
      const e = yield* Effect.flip(TextFile.read(file, TextFile.kinds.stateDocument)).pipe(Effect.provide(denied))
      expect(e).toBeInstanceOf(FileRefused)
      expect(e.problem).toBe("unreadable")
      expect(e.message).toBe(`${file}: cannot be read: permission denied`)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a path swapped for an endless device after the stat is refused as too large, never read whole", () =>
    Effect.gen(function*() {
      const swapped = tampered((fs) => ({ stat: () => Effect.succeed(smallFile(5)), open: (_path, options) => fs.open("/dev/urandom", options) }))
      const e = yield* Effect.flip(TextFile.read("/somewhere/a.md", TextFile.kinds.prompt)).pipe(Effect.provide(swapped))
      expect(e.problem).toBe("too-large")
    }))

  it.scoped("never reads more than cap + 1 bytes, even when every stat says the file is small", () =>
    Effect.gen(function*() {
      // /dev/zero never ends: a reader that trusted the stat, or read to EOF, would not return.
      const endless = tampered((fs) => ({
        stat: () => Effect.succeed(smallFile(10)),
        open: (_path, options) => Effect.map(fs.open("/dev/zero", options), (file) => lyingFile(file, smallFile(10)))
      }))
      const e = yield* Effect.flip(TextFile.readBytes("/somewhere/prompt.md", TextFile.kinds.prompt)).pipe(Effect.provide(endless))
      expect(e.problem).toBe("too-large")
      const cap = TextFile.kinds.prompt.maxBytes
      expect(e.rule).toBe(`is more than ${cap} bytes, over the ${cap}-byte cap for a prompt file`)
    }))

  it.live("no hostile file can hang or exhaust a process with a 64 MB heap: FIFO, /dev/zero link, 50 MB file", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const dir = yield* tempDir
        fifo(join(dir, "pipe"))
        symlinkSync("/dev/zero", join(dir, "zero"))
        writeFileSync(join(dir, "big"), "")
        truncateSync(join(dir, "big"), 50 * 1024 * 1024)
        const script = `
          import * as Effect from "effect/Effect"
          import * as NodeContext from "@effect/platform-node/NodeContext"
          import * as TextFile from "./src/services/files/TextFile.ts"
          const dir = ${JSON.stringify(dir)}
          for (const name of ["pipe", "zero", "big"]) {
            const exit = await Effect.runPromise(Effect.either(TextFile.read(dir + "/" + name, TextFile.kinds.stateDocument)).pipe(Effect.provide(NodeContext.layer)))
            console.log(exit._tag === "Left" ? exit.left.message : "read " + name)
          }
        `
        const output = yield* Effect.async<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>((resume) => {
          const child = execFile(
            process.execPath,
            ["--max-old-space-size=64", "--import", "tsx", "--input-type=module", "-e", script],
            { cwd: projectRoot, timeout: 20_000, killSignal: "SIGKILL" },
            (error, stdout, stderr) => resume(Effect.succeed({ code: error === null ? 0 : child.exitCode, stdout, stderr }))
          )
        })
        expect(output.stderr).toBe("")
        expect(output.code).toBe(0)
        expect(output.stdout.trim().split("\n")).toEqual([
          `${dir}/pipe: is a FIFO, not a regular file`,
          `${dir}/zero: is a character device, not a regular file`,
          `${dir}/big: is 52428800 bytes, over the 16777216-byte cap for a state document`
        ])
      }).pipe(Effect.provide(NodeContext.layer))
    ), 30_000)
})

describe("the readers of the state root, host.json, declarations and fingerprints go through TextFile", () => {
  /** A state root with a FIFO where a document would be, and the services on it. */
  const services = (root: string) => {
    const state = Layer.effect(StateRoot.StateRoot, StateRoot.make({ root }))
    const host = RuntimeProfiles.layer.pipe(Layer.provideMerge(state))
    return Layer.mergeAll(Capabilities.layer, Fingerprints.layer).pipe(
      Layer.provideMerge(host),
      Layer.provideMerge(NodeContext.layer)
    )
  }

  it.live("StateRoot.readText refuses a FIFO and a file over the kind's cap as a StateError with the one-line rule", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const root = yield* tempDir
        mkdirSync(join(root, "peers"))
        fifo(join(root, "peers", "alice.json"))
        writeFileSync(join(root, "peers", "bob.json"), "{}")
        const state = yield* StateRoot.make({ root })
        const e = yield* Effect.flip(state.readText("peers/alice.json"))
        expect(e).toMatchObject({ _tag: "StateRootError", reason: "StateError" })
        expect(e.detail).toBe("is a FIFO, not a regular file")
        expect(e.message).toBe(`state root: cannot read ${join(root, "peers", "alice.json")}: is a FIFO, not a regular file`)
        writeFileSync(join(root, "host.json"), "")
        truncateSync(join(root, "host.json"), 2 * 1024 * 1024)
        expect((yield* Effect.flip(state.readText("host.json", TextFile.kinds.hostConfig))).detail)
          .toBe("is 2097152 bytes, over the 1048576-byte cap for a host configuration")
        // The same file is within a state document's cap.
        expect(Option.map(yield* state.readText("host.json"), (text) => text.length)).toEqual(Option.some(2 * 1024 * 1024))
        expect(yield* state.list("peers")).toEqual(["alice.json", "bob.json"])
        expect(yield* state.list("no-such-folder")).toEqual([])
        // host.json as a FIFO: Host fails at once instead of waiting for a writer.
        unlinkSync(join(root, "host.json"))
        fifo(join(root, "host.json"))
        const hostError = yield* Effect.flip(RuntimeProfiles.make.pipe(Effect.provideService(StateRoot.StateRoot, state)))
        expect(hostError.message).toContain("is a FIFO, not a regular file")
      }).pipe(Effect.provide(NodeContext.layer))
    ))

  it.live("a declaration given to register that is a FIFO, too large or missing is an InvalidDeclaration naming file and rule", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const dir = yield* tempDir
        const root = join(dir, "root")
        fifo(join(dir, "pipe.json"))
        writeFileSync(join(dir, "big.json"), "")
        truncateSync(join(dir, "big.json"), 50 * 1024 * 1024)
        const result = yield* Effect.gen(function*() {
          const capabilities = yield* Capabilities.Capabilities
          return yield* Effect.forEach(["pipe.json", "big.json", "missing.json"], (name) =>
            Effect.flip(capabilities.readFile(join(dir, name))))
        }).pipe(Effect.provide(services(root)))
        expect(result.map((e) => [e.name, e.file, e.rule])).toEqual([
          ["InvalidDeclaration", join(dir, "pipe.json"), "is a FIFO, not a regular file"],
          ["InvalidDeclaration", join(dir, "big.json"), "is 52428800 bytes, over the 1048576-byte cap for a capability declaration"],
          ["InvalidDeclaration", join(dir, "missing.json"), "does not exist"]
        ])
      }).pipe(Effect.provide(NodeContext.layer))
    ))

  it.live("a stored declaration is read with the declaration's 1 MiB cap, as register reads its input, not the state documents' 16 MiB", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const dir = yield* tempDir
        const root = join(dir, "root")
        mkdirSync(join(root, "capabilities"), { recursive: true })
        // Valid JSON, padded to 2 MiB: only the size breaks a rule.
        const body = JSON.stringify({
          schema: 1, capability: "big", package: "@test/big", version: "1.0.0", runtimes: ["claude"],
          provision: { command: "/bin/true", args: ["{personality}"] }, unprovision: { command: "/bin/true", args: ["{personality}"] }
        })
        const file = join(root, "capabilities", "big.json")
        writeFileSync(file, body + " ".repeat(2 * 1024 * 1024 - body.length))
        const { got, scan } = yield* Effect.gen(function*() {
          const capabilities = yield* Capabilities.Capabilities
          return { got: yield* Effect.flip(capabilities.get("big")), scan: yield* capabilities.scan }
        }).pipe(Effect.provide(services(root)))
        const rule = "is 2097152 bytes, over the 1048576-byte cap for a capability declaration"
        expect(got.message).toBe(`invalid capability declaration ${file}: cannot be read (${rule})`)
        expect(scan.valid).toEqual([])
        expect(scan.invalid.map((e) => e.message)).toEqual([`invalid capability declaration ${file}: cannot be read (${rule})`])
      }).pipe(Effect.provide(NodeContext.layer))
    ))

  it.live("a launch-read file that is a FIFO is fingerprinted as absent, without blocking; a real file then is a change", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const dir = yield* tempDir
        const root = join(dir, "root")
        const cwd = join(dir, "work")
        mkdirSync(cwd)
        fifo(join(cwd, ".mcp.json"))
        const ref = { personality: "alice", runtime: "claude", identity: "claude-alice", cwd, privateDir: Option.none() }
        const { changes, recorded } = yield* Effect.gen(function*() {
          const fingerprints = yield* Fingerprints.Fingerprints
          const state = yield* StateRoot.StateRoot
          yield* fingerprints.record(ref)
          const recorded = yield* state.readText(`${Fingerprints.fingerprintsDir}/claude-alice.json`)
          expect(yield* fingerprints.poll([ref])).toEqual([])
          unlinkSync(join(cwd, ".mcp.json"))
          writeFileSync(join(cwd, ".mcp.json"), "{}")
          return { recorded, changes: yield* fingerprints.poll([ref]) }
        }).pipe(Effect.provide(services(root)))
        const files = Option.map(recorded, (text) => JSON.parse(text).files)
        expect(Option.map(files, (f) => f[join(cwd, ".mcp.json")])).toEqual(Option.some({ absent: true }))
        expect(changes.map((c) => c.changed)).toEqual([[join(cwd, ".mcp.json")]])
      }).pipe(Effect.provide(NodeContext.layer))
    ))
})
