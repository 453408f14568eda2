import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Exit from "effect/Exit"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import { join } from "node:path"
import * as CommandRunner from "../../../src/services/capabilities/CommandRunner.ts"
import * as ProcessRecords from "../../../src/services/capabilities/ProcessRecords.ts"
import * as StateRoot from "../../../src/services/root/StateRoot.ts"
import { isAlive } from "../../fixtures.ts"
import { request, script } from "./runnerFixtures.ts"

describe("substitution", () => {
  it.effect("substitutes inside each argument, and a value with spaces stays one argument", () =>
    Effect.sync(() => {
      const argv = CommandRunner.buildArgv(
        { command: "/bin/prov", args: ["--cwd={cwd}", "{personality}:{runtime}", "{occasion}"] },
        { personality: "alice", runtime: "claude", cwd: "/a b/c", occasion: "birth" }
      )
      expect(argv).toEqual(Either.right(["/bin/prov", "--cwd=/a b/c", "alice:claude", "birth"]))
    }))

  it.effect("substitutes in one pass: a value that looks like a placeholder is not substituted again", () =>
    Effect.sync(() => {
      expect(CommandRunner.substitute("{cwd}/{runtime}", { cwd: "/x/{runtime}", runtime: "codex" }))
        .toEqual(Either.right("/x/{runtime}/codex"))
    }))

  it.effect("a placeholder without a value ({privateDir} on a runtime without one) is reported, not left in", () =>
    Effect.sync(() => {
      expect(CommandRunner.substitute("--dir={privateDir}", { personality: "a" })).toEqual(Either.left("privateDir"))
      expect(CommandRunner.substitute("{notAPlaceholder} $(id)", {})).toEqual(Either.right("{notAPlaceholder} $(id)"))
    }))
})

/** Process records on a state root of their own (every run is recorded while it runs). */
const records = Layer.unwrapScoped(Effect.map(
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.makeTempDirectoryScoped({ prefix: "city-runner-" })),
  (root) => ProcessRecords.layer({ killGrace: "200 millis" }).pipe(Layer.provide(StateRoot.layer({ root })))
))

describe("CommandRunner.run", () => {
  const live = <A>(
    name: string,
    body: () => Effect.Effect<A, unknown, FileSystem.FileSystem | ProcessRecords.ProcessRecords | import("effect/Scope").Scope>
  ) =>
    it.scopedLive(name, () =>
      Effect.asVoid(body()).pipe(Effect.provide(records), Effect.provide(NodeContext.layer)))

  live("exit 0 is ok; exit 3 is failed with the code and the tail of stderr", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const runner = yield* CommandRunner.make()
      const ok = yield* script(dir, "ok", "exit 0")
      const bad = yield* script(dir, "bad", "echo first >&2\necho 'second line' >&2\nexit 3")
      expect(yield* runner.run(request(ok))).toMatchObject({ state: "ok", exit: 0 })
      expect(yield* runner.run(request(bad))).toMatchObject({ state: "failed", exit: 3, detail: "first\nsecond line" })
    }))

  live("one endpoint's commands never overlap in one process: a provisioning call under the root lock and its host's reload, started together, run one after the other; another endpoint's runs beside them", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const log = join(dir, "log")
      const runner = yield* CommandRunner.make()
      const step = yield* script(dir, "step", `echo "start $1" >> '${log}'\nsleep 0.3\necho "end $1" >> '${log}'`)
      yield* Effect.all([
        runner.run(request(step, { args: ["provision"], endpoint: "cap claude-alice", identity: "claude-alice", rootLocked: true })),
        runner.run(request(step, { args: ["reload"], endpoint: "host claude-alice", identity: "claude-alice" })),
        runner.run(request(step, { args: ["other"], endpoint: "host claude-bob", identity: "claude-bob" }))
      ], { concurrency: "unbounded" })
      const lines = (yield* fs.readFileString(log)).trim().split("\n").filter((l) => !l.endsWith("other"))
      // The two of claude-alice: one ends before the other starts, in either order.
      expect([["start provision", "end provision", "start reload", "end reload"], ["start reload", "end reload", "start provision", "end provision"]])
        .toContainEqual(lines)
      // claude-bob's ran beside the first of them.
      const all = (yield* fs.readFileString(log)).trim().split("\n")
      expect(all.indexOf("start other")).toBeLessThan(all.indexOf(lines[2]!))
    }))

  live("a huge stderr is kept as a bounded tail", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const runner = yield* CommandRunner.make({ stderrTailBytes: 100 })
      const noisy = yield* script(dir, "noisy", "head -c 5000000 /dev/zero | tr '\\0' 'y' >&2\necho END >&2\nexit 1")
      const outcome = yield* runner.run(request(noisy))
      expect(outcome.state).toBe("failed")
      expect(outcome.detail?.length).toBeLessThanOrEqual(100)
      expect(outcome.detail?.endsWith("yyyEND")).toBe(true)
    }))

  live("a missing file, a directory and a file without execute permission are not-executable", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const runner = yield* CommandRunner.make()
      const plain = join(dir, "plain")
      yield* fs.writeFileString(plain, "#!/bin/sh\nexit 0\n")
      for (const command of [join(dir, "missing"), dir, plain]) {
        expect((yield* runner.run(request(command))).state, command).toBe("not-executable")
      }
    }))

  live("stdin is closed, no shell is involved, and CITY_PRIVATE_DIR is set only when given", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const out = join(dir, "out")
      const runner = yield* CommandRunner.make()
      const probe = yield* script(
        dir,
        "probe",
        `cat >/dev/null\nprintf '%s|' "$@" >> '${out}'\necho "\${CITY_PRIVATE_DIR-unset}" >> '${out}'`
      )
      yield* runner.run(request(probe, { args: ["a b", "$(id)", ";", "*"], privateDir: Option.some("/p/d") }))
      yield* runner.run(request(probe, { args: ["x"] }))
      expect(yield* fs.readFileString(out)).toBe("a b|$(id)|;|*|/p/d\nx|unset\n")
    }))

  live("the commands get this process's environment as it was when the runner was made, NODE_EXTRA_CA_CERTS and NODE_OPTIONS included", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const saved = { options: process.env.NODE_OPTIONS, certs: process.env.NODE_EXTRA_CA_CERTS }
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          for (const [key, value] of [["NODE_OPTIONS", saved.options], ["NODE_EXTRA_CA_CERTS", saved.certs]] as const) {
            if (value === undefined) delete process.env[key]
            else process.env[key] = value
          }
        })
      )
      process.env.NODE_EXTRA_CA_CERTS = join(dir, "ca.pem")
      process.env.NODE_OPTIONS = "--no-deprecation"
      const runner = yield* CommandRunner.make()
      process.env.NODE_OPTIONS = "--changed-later"
      const seen = join(dir, "seen")
      const show = yield* script(dir, "show", `echo "$NODE_OPTIONS|$NODE_EXTRA_CA_CERTS" > '${seen}'`)
      expect((yield* runner.run(request(show))).state).toBe("ok")
      expect((yield* fs.readFileString(seen)).trim()).toBe(`--no-deprecation|${join(dir, "ca.pem")}`)
    }))

  live("on timeout the whole process group gets SIGTERM, then SIGKILL when it ignores it", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const pids = join(dir, "pids")
      const runner = yield* CommandRunner.make({ killGrace: "200 millis" })
      const stubborn = yield* script(dir, "stubborn", `trap '' TERM\necho $$ >> '${pids}'\nsleep 60 &\necho $! >> '${pids}'\nwait\nwait`)
      const polite = yield* script(dir, "polite", `echo $$ >> '${pids}.2'\nsleep 60 &\necho $! >> '${pids}.2'\nwait`)
      const outcome = yield* runner.run(request(stubborn, { timeout: "300 millis" }))
      expect(outcome.state).toBe("timeout")
      const started = (yield* fs.readFileString(pids)).trim().split("\n").map(Number)
      expect(started.filter(isAlive)).toEqual([])
      expect((yield* runner.run(request(polite, { timeout: "300 millis" }))).state).toBe("timeout")
      expect((yield* fs.readFileString(`${pids}.2`)).trim().split("\n").map(Number).filter(isAlive)).toEqual([])
    }))

  live("an interrupted call terminates the process group before it returns", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const pids = join(dir, "pids")
      const runner = yield* CommandRunner.make({ killGrace: "200 millis" })
      const stubborn = yield* script(dir, "stubborn", `trap '' TERM\nsleep 60 &\necho $$ $! > '${pids}.tmp'\nmv '${pids}.tmp' '${pids}'\nwait\nwait`)
      const fiber = yield* Effect.fork(runner.run(request(stubborn, { timeout: "60 seconds" })))
      // Wait until the script has started (bounded poll of a condition, not a sleep).
      yield* fs.exists(pids).pipe(
        Effect.filterOrFail((exists) => exists),
        Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.compose(Schedule.recurs(500))))
      )
      yield* Fiber.interrupt(fiber)
      const started = (yield* fs.readFileString(pids)).trim().split(" ").map(Number)
      expect(started.length).toBe(2)
      expect(started.filter(isAlive)).toEqual([])
    }))

  /** Waits (bounded poll of a condition, not a sleep) until none of `pids` is alive; fails after ~10 s. */
  const allGone = (pids: ReadonlyArray<number>) =>
    Effect.sync(() => pids.filter(isAlive)).pipe(
      Effect.filterOrFail((alive) => alive.length === 0),
      Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.compose(Schedule.recurs(500)))),
      Effect.orElseSucceed(() => pids.filter(isAlive))
    )

  live("a command that exits 0 leaving a background process on its stderr is ok at its exit, and the leftover is terminated", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const pids = join(dir, "pids")
      const runner = yield* CommandRunner.make({ killGrace: "200 millis" })
      const leaver = yield* script(dir, "leaver", `echo 'all set' >&2\nsleep 60 &\necho $! > '${pids}'\nexit 0`)
      // Before the fix the call waited for the end of stderr: it was killed at the timeout.
      const outcome = yield* runner.run(request(leaver, { timeout: "15 seconds" }))
      expect(outcome).toMatchObject({ state: "ok", exit: 0 })
      expect(outcome.ms).toBeLessThan(15_000)
      const left = Number((yield* fs.readFileString(pids)).trim())
      expect(yield* allGone([left])).toEqual([])
    }))

  live("a failing command that leaves a background process is failed with its exit code and the stderr it wrote", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const runner = yield* CommandRunner.make({ killGrace: "200 millis" })
      const leaver = yield* script(dir, "leaver", `echo 'the reason' >&2\nsleep 60 &\nexit 3`)
      expect(yield* runner.run(request(leaver, { timeout: "15 seconds" })))
        .toMatchObject({ state: "failed", exit: 3, detail: "the reason" })
    }))

  live("a leftover that ignores SIGTERM gets SIGKILL after the grace, or when the runner's scope closes", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const pids = join(dir, "pids")
      const stubborn = yield* script(dir, "stubborn", `trap '' TERM\nsleep 60 &\necho $! >> '${pids}'\nexit 0`)
      const quick = yield* CommandRunner.make({ killGrace: "200 millis" })
      expect((yield* quick.run(request(stubborn))).state).toBe("ok")
      const first = Number((yield* fs.readFileString(pids)).trim())
      expect(yield* allGone([first])).toEqual([])
      // A long grace: the leftover outlives the call until the scope of the runner closes.
      const scope = yield* Scope.make()
      const patient = yield* CommandRunner.make({ killGrace: "60 seconds" }).pipe(Scope.extend(scope))
      expect((yield* patient.run(request(stubborn))).state).toBe("ok")
      const second = Number((yield* fs.readFileString(pids)).trim().split("\n")[1])
      expect(isAlive(second)).toBe(true)
      yield* Scope.close(scope, Exit.void)
      expect(yield* allGone([second])).toEqual([])
    }))
})
