/**
 * Support for the acceptance tests: runs `city` in-process (the command tree of
 * `src/programs/cli.ts` against a test Console and a temp root) or, for the few
 * scenarios that are about the process itself (exit codes, signals, the lock
 * across processes, the environment children inherit), as the real binary in a
 * child process; writes small provisioner scripts that journal their argv and
 * environment, and reads the journals back.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import type * as Terminal from "@effect/platform/Terminal"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { execFile, execFileSync } from "node:child_process"
import { homedir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { run } from "../../src/programs/cli.ts"
import * as Invocation from "../../src/programs/invocation.ts"

export const binary = resolve(dirname(fileURLToPath(import.meta.url)), "../../bin/city.mjs")

export interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

export interface RunOptions {
  readonly root?: string
  readonly cwd?: string
  readonly env?: Record<string, string>
}

export interface InProcessOptions extends RunOptions {
  /** Pretend stdout and stderr are terminals (progress line, colour). */
  readonly tty?: boolean
  /** Sees each piece of raw stderr as it is written (the run's result has all of it at the end). */
  readonly onStderr?: (text: string) => void
}

/** A Console that collects what is printed: `log` and `info` to stdout, the rest to stderr. */
export const collectingConsole = (stdout: Array<string>, stderr: Array<string>): Console.Console => {
  const line = (sink: Array<string>) => (...args: ReadonlyArray<unknown>) =>
    Effect.sync(() => {
      sink.push(`${args.map(String).join(" ")}\n`)
    })
  const none = () => Effect.void
  return {
    [Console.TypeId]: Console.TypeId,
    assert: none,
    clear: Effect.void,
    count: none,
    countReset: none,
    debug: line(stderr),
    dir: line(stdout),
    dirxml: line(stdout),
    error: line(stderr),
    group: none,
    groupEnd: Effect.void,
    info: line(stdout),
    log: line(stdout),
    table: line(stdout),
    time: none,
    timeEnd: none,
    timeLog: none,
    trace: line(stderr),
    warn: line(stderr),
    unsafe: globalThis.console
  }
}

/**
 * Runs `city ...args` in this process with `CITY_ROOT=root`: the same command tree as the
 * binary, its output collected; never fails (the exit code is in the result).
 */
export const city = (
  args: ReadonlyArray<string>,
  options: InProcessOptions = {}
): Effect.Effect<Run, never, FileSystem.FileSystem | Path.Path | Terminal.Terminal> =>
  Effect.gen(function*() {
    const stdout: Array<string> = []
    const stderr: Array<string> = []
    const invocation = yield* Invocation.make({
      env: { ...(options.root === undefined ? {} : { CITY_ROOT: options.root }), ...options.env },
      cwd: options.cwd ?? process.cwd(),
      home: homedir(),
      stdoutIsTTY: options.tty ?? false,
      stderrIsTTY: options.tty ?? false,
      writeStderr: (text) =>
        Effect.sync(() => {
          stderr.push(text)
          options.onStderr?.(text)
        })
    })
    const code = yield* run(args).pipe(
      Effect.provideService(Invocation.Invocation, invocation),
      Console.withConsole(collectingConsole(stdout, stderr))
    )
    return { code, stdout: stdout.join(""), stderr: stderr.join("") }
  })

export interface ProcessOptions extends RunOptions {
  /** Run it under this umask (octal digits, e.g. "000"), set by `/bin/sh` before it execs node. */
  readonly umask?: string
}

/** The argv that runs `node ...args`, under `umask` when one is given (a umask is per process). */
export const underUmask = (umask: string | undefined, args: ReadonlyArray<string>): readonly [string, ReadonlyArray<string>] =>
  umask === undefined
    ? [process.execPath, args]
    : ["/bin/sh", ["-c", `umask ${umask} && exec "$0" "$@"`, process.execPath, ...args]]

/**
 * Runs the real binary, `node bin/city.mjs ...args`, with `CITY_ROOT=root`; never fails (the
 * exit code is in the result).
 */
export const cityProcess = (args: ReadonlyArray<string>, options: ProcessOptions = {}): Effect.Effect<Run> =>
  Effect.async<Run>((resume) => {
    const env: Record<string, string | undefined> = { ...process.env }
    delete env["CITY_PRIVATE_DIR"]
    Object.assign(env, options.env)
    if (options.root !== undefined) env["CITY_ROOT"] = options.root
    const [file, argv] = underUmask(options.umask, [binary, ...args])
    const child = execFile(file, argv, {
      env,
      cwd: options.cwd ?? process.cwd(),
      maxBuffer: 64 * 1024 * 1024,
      encoding: "utf8"
    }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
      resume(Effect.succeed({ code, stdout, stderr }))
    })
    child.stdin?.end()
    // Interrupted (a test that gives up on a verb that hangs): the verb is ended, not left behind.
    return Effect.sync(() => void child.kill("SIGKILL"))
  })

/** A JSON verb's stdout, parsed. */
export const json = (run: Run): Record<string, unknown> => JSON.parse(run.stdout) as Record<string, unknown>

/** A fresh directory, removed with the test's Scope. */
export const tempDir = Effect.flatMap(FileSystem.FileSystem, (fs) => fs.makeTempDirectoryScoped({ prefix: "city-acc-" }))

/** A temp world: a state root, a peer cwd, a folder for scripts and declarations, a journal. */
export const world = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const base = yield* tempDir
  const root = join(base, "root")
  const work = join(base, "work")
  const bin = join(base, "bin")
  yield* fs.makeDirectory(work)
  yield* fs.makeDirectory(bin)
  return { base, root, work, bin, journal: join(base, "journal") }
})

/**
 * Writes an executable `/bin/sh` script at `dir/name` that appends one line per
 * call to `journal`: each argument, then `ENV=<CITY_PRIVATE_DIR or <unset>>`,
 * then `PWD=`, separated by \x1f; then runs `body`.
 */
export const provisioner = (dir: string, name: string, journal: string, body = "exit 0") =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const file = join(dir, name)
    // One line per call, written by one printf (one write to a file opened for appending), so
    // that calls running at once never interleave their parts in the journal.
    const script = [
      "#!/bin/sh",
      "us=$(printf '\\037')",
      "line=''",
      "for a in \"$@\"; do line=\"$line$a$us\"; done",
      `printf '%sENV=%s\\037PWD=%s\\n' "$line" "\${CITY_PRIVATE_DIR-<unset>}" "$PWD" >> '${journal}'`,
      body,
      ""
    ].join("\n")
    yield* fs.writeFileString(file, script)
    yield* fs.chmod(file, 0o755)
    return file
  })

export interface Call {
  readonly args: ReadonlyArray<string>
  readonly env: string
}

/** The calls journaled so far (none when the journal was never written). */
export const journalOf = (journal: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    if (!(yield* fs.exists(journal))) return [] as ReadonlyArray<Call>
    const text = yield* fs.readFileString(journal)
    return text.split("\n").filter((l) => l !== "").map((line): Call => {
      const parts = line.split("\u001f")
      const env = parts.find((p) => p.startsWith("ENV="))?.slice(4) ?? ""
      return { args: parts.filter((p) => !p.startsWith("ENV=") && !p.startsWith("PWD=")), env }
    })
  })

export interface DeclarationInput {
  readonly name: string
  readonly runtimes?: ReadonlyArray<string>
  readonly command: string
  readonly unprovisionCommand?: string
  readonly provisionArgs?: ReadonlyArray<string>
  readonly unprovisionArgs?: ReadonlyArray<string>
  readonly version?: string
}

/** The usual declaration: both commands carry every placeholder but {privateDir}. */
export const declaration = (input: DeclarationInput) => ({
  schema: 1,
  capability: input.name,
  package: `@test/${input.name}`,
  version: input.version ?? "1.0.0",
  runtimes: input.runtimes ?? ["claude", "codex", "opencode"],
  provision: {
    command: input.command,
    args: input.provisionArgs ?? ["provision-peer", "{personality}", "{runtime}", "{cwd}", "{occasion}"]
  },
  unprovision: {
    command: input.unprovisionCommand ?? input.command,
    args: input.unprovisionArgs ?? ["unprovision-peer", "{personality}", "{runtime}", "{cwd}", "{occasion}"]
  }
})

/** Writes `value` as `dir/<file>` and returns the path. */
export const writeJson = (dir: string, file: string, value: unknown) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = join(dir, file)
    yield* fs.writeFileString(path, JSON.stringify(value, null, 2))
    return path
  })

/**
 * Writes `peers/<personality>.json` directly, as an operator could: setup for
 * scenarios whose subject is not birth (it saves a CLI start each).
 */
export const seedPeer = (root: string, personality: string, cwd: string, runtimes: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    yield* fs.makeDirectory(join(root, "peers"), { recursive: true })
    yield* writeJson(join(root, "peers"), `${personality}.json`, {
      schema: 1,
      personality,
      cwd,
      runtimes,
      default_runtime: runtimes[0]
    })
  })

/** Writes an executable `/bin/sh` script of `lines` at `file` and returns the path. */
export const sh = (file: string, lines: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    yield* fs.writeFileString(file, ["#!/bin/sh", ...lines, ""].join("\n"))
    yield* fs.chmod(file, 0o755)
    return file
  })

/**
 * Writes an owed-reload record, `state/reloads/<runtime>-<personality>.json`, directly (as a
 * daemon that owes one left it); `fields` adds to or replaces the record's own.
 */
export const seedOwedReload = (
  root: string,
  personality: string,
  runtime: string,
  fields: { readonly requested: number; readonly applied: number } & Record<string, unknown>
) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const dir = join(root, "state", "reloads")
    yield* fs.makeDirectory(dir, { recursive: true })
    return yield* writeJson(dir, `${runtime}-${personality}.json`, {
      schema: 1,
      personality,
      runtime,
      reason: "owed by the test",
      updated_at: "2025-01-01T00:00:00.000Z",
      ...fields
    })
  })

/** The ways a record can be unreadable, each written at `file` (the folder exists). */
export const unreadable: ReadonlyArray<readonly [string, (file: string) => Effect.Effect<void, unknown, FileSystem.FileSystem>]> = [
  ["a FIFO", (file) => Effect.sync(() => void execFileSync("mkfifo", [file]))],
  ["a directory", (file) => Effect.flatMap(FileSystem.FileSystem, (fs) => fs.makeDirectory(join(file, "inside"), { recursive: true }))],
  ["bytes that are not UTF-8", (file) => Effect.flatMap(FileSystem.FileSystem, (fs) => fs.writeFile(file, new Uint8Array([0xff, 0xfe, 0x7b, 0x7d])))],
  // Sparse: the size is over the 16 MiB cap, and the reader refuses it on its stat.
  ["over the state cap", (file) =>
    Effect.flatMap(FileSystem.FileSystem, (fs) => Effect.zipRight(fs.writeFileString(file, ""), fs.truncate(file, 16 * 1024 * 1024 + 1)))],
  ["truncated JSON", (file) => Effect.flatMap(FileSystem.FileSystem, (fs) => fs.writeFileString(file, "{\"schema\":1,\"personality\":\"al"))]
]
