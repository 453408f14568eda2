/**
 * Runs one declared command (spec/capability-plugin-lifecycle.md,
 * "Declaration"): "`{personality}`, `{runtime}`, `{cwd}` and `{occasion}` are
 * substituted per argument, and **no shell** is involved"; "`{privateDir}` on a
 * runtime without one is refused (`failed`) before spawn"; the private directory
 * "is also exported as `IAPEER_PRIVATE_DIR`" (ours: `CITY_PRIVATE_DIR`);
 * "Timeout per call: 120 s".
 *
 * - argv is `[command, ...args]`, each argument substituted on its own in one
 *   pass (a substituted value is never substituted again); no shell, so shell
 *   metacharacters reach the plugin literally.
 * - stdin is closed (the child reads EOF); stdout is drained and discarded;
 *   stderr is kept as a bounded tail (`stderrTailBytes`, default 4 KiB) whatever
 *   its size.
 * - The child runs in its own process group. On timeout (or interruption) the
 *   whole group gets SIGTERM, then SIGKILL after `killGrace` (default 2 s) if
 *   anything of it is still alive.
 * - Outcomes: `ok` (exit 0), `failed` (exit code + stderr tail, or killed by a
 *   signal), `timeout`, `not-executable` (spawn refused: missing file, no execute
 *   permission). `run` itself never fails.
 * @since 0.1.0
 */
import * as Command from "@effect/platform/Command"
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { type CommandSpec, type Placeholder, placeholders } from "../schema/Declaration.js"
import type { Outcome } from "../schema/Outcome.js"

/** The name of the variable carrying the endpoint's private directory. */
export const privateDirVariable = "CITY_PRIVATE_DIR"

/** Values for the placeholders; `privateDir` is absent on a runtime without one. */
export type Substitutions = { readonly [K in Placeholder]?: string }

const placeholderPattern = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g

/**
 * Substitutes the known placeholders inside one argument, in a single pass.
 * Fails with the name of a placeholder that has no value.
 */
export const substitute = (arg: string, values: Substitutions): Either.Either<string, Placeholder> => {
  let missing: Placeholder | undefined
  const out = arg.replace(placeholderPattern, (whole, name: string) => {
    if (!(placeholders as ReadonlyArray<string>).includes(name)) return whole
    const value = values[name as Placeholder]
    if (value === undefined) {
      missing ??= name as Placeholder
      return whole
    }
    return value
  })
  return missing === undefined ? Either.right(out) : Either.left(missing)
}

/** `[command, ...args]` with every argument substituted. */
export const buildArgv = (
  spec: CommandSpec,
  values: Substitutions
): Either.Either<readonly [string, ...Array<string>], Placeholder> =>
  Either.all(spec.args.map((arg) => substitute(arg, values))).pipe(
    Either.map((args) => [spec.command, ...args] as const)
  )

export interface RunRequest {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  /** Set `CITY_PRIVATE_DIR` to this; when absent the variable is removed from the child's env. */
  readonly privateDir: Option.Option<string>
  readonly timeout: Duration.DurationInput
}

export interface CommandRunnerConfig {
  /** Time between SIGTERM and SIGKILL of the process group (default 2 s). */
  readonly killGrace?: Duration.DurationInput
  /** Bytes of stderr kept (the tail; default 4096). */
  readonly stderrTailBytes?: number
}

export class CommandRunner extends Context.Tag("effect-city/CommandRunner")<
  CommandRunner,
  {
    /** Runs the command to an outcome; never fails. */
    readonly run: (request: RunRequest) => Effect.Effect<Outcome>
  }
>() {}

/** Keeps only the last `max` bytes of what is pushed. */
const makeTail = (max: number) => {
  let buffer = new Uint8Array(0)
  return {
    push: (chunk: Uint8Array) => {
      if (chunk.length >= max) {
        buffer = chunk.slice(chunk.length - max)
        return
      }
      const keepOld = Math.min(buffer.length, max - chunk.length)
      const next = new Uint8Array(keepOld + chunk.length)
      next.set(buffer.subarray(buffer.length - keepOld), 0)
      next.set(chunk, keepOld)
      buffer = next
    },
    text: () => new TextDecoder("utf-8", { fatal: false }).decode(buffer).trim()
  }
}

/** Sends a signal to a whole process group; a group that is gone is not an error. */
const signalGroup = (pid: number, signal: NodeJS.Signals | 0): Effect.Effect<boolean> =>
  Effect.try(() => process.kill(-pid, signal)).pipe(Effect.orElseSucceed(() => false))

export const make = (config: CommandRunnerConfig = {}): Effect.Effect<
  CommandRunner["Type"],
  never,
  CommandExecutor.CommandExecutor
> =>
  Effect.gen(function*() {
    const context = yield* Effect.context<CommandExecutor.CommandExecutor>()
    const killGrace = Duration.decode(config.killGrace ?? Duration.seconds(2))
    const tailBytes = config.stderrTailBytes ?? 4096

    const envFor = (privateDir: Option.Option<string>): Record<string, string> => {
      const env: Record<string, string> = {}
      for (const [key, value] of Object.entries(process.env)) {
        if (value !== undefined && key !== privateDirVariable) env[key] = value
      }
      if (Option.isSome(privateDir)) env[privateDirVariable] = privateDir.value
      return env
    }

    const run = (request: RunRequest): Effect.Effect<Outcome> =>
      Effect.gen(function*() {
        const started = yield* Clock.currentTimeMillis
        const elapsed = Effect.map(Clock.currentTimeMillis, (now) => now - started)
        const tail = makeTail(tailBytes)
        const command = Command.make(request.command, ...request.args).pipe(
          Command.env(envFor(request.privateDir), { extendEnv: false }),
          Command.workingDirectory(request.cwd),
          Command.stdin(Stream.empty)
        )
        return yield* Effect.scoped(Effect.gen(function*() {
          const started = yield* Effect.either(Command.start(command))
          if (Either.isLeft(started)) {
            return {
              state: "not-executable",
              ms: yield* elapsed,
              detail: started.left.message
            } satisfies Outcome
          }
          const proc = started.right
          const pid = Number(proc.pid)
          let finished = false
          // Runs before the platform's own release (finalizers run in reverse order), which
          // would otherwise wait forever for a child that ignores SIGTERM.
          yield* Effect.addFinalizer(() =>
            finished ? Effect.void : Effect.gen(function*() {
              yield* signalGroup(pid, "SIGTERM")
              yield* proc.exitCode.pipe(Effect.ignore, Effect.interruptible, Effect.timeoutOption(killGrace))
              // Whatever the leader did, nothing of its group outlives a timeout.
              if (yield* signalGroup(pid, 0)) yield* signalGroup(pid, "SIGKILL")
              yield* proc.exitCode.pipe(Effect.ignore, Effect.interruptible, Effect.timeoutOption(killGrace))
            })
          )
          const waited = yield* Effect.all([
            Stream.runForEach(proc.stderr, (chunk) => Effect.sync(() => tail.push(chunk))).pipe(Effect.ignore),
            Stream.runDrain(proc.stdout).pipe(Effect.ignore),
            Effect.either(proc.exitCode)
          ], { concurrency: "unbounded" }).pipe(Effect.timeoutOption(request.timeout))
          const ms = yield* elapsed
          const stderr = tail.text()
          if (Option.isNone(waited)) {
            const timeoutMs = Duration.toMillis(Duration.decode(request.timeout))
            return {
              state: "timeout",
              ms,
              detail: `no exit within ${timeoutMs} ms; process group terminated${stderr === "" ? "" : `: ${stderr}`}`
            } satisfies Outcome
          }
          finished = true
          const exit = waited.value[2]
          if (Either.isLeft(exit)) {
            return {
              state: "failed",
              ms,
              detail: stderr === "" ? exit.left.message : `${exit.left.message}: ${stderr}`
            } satisfies Outcome
          }
          const code = Number(exit.right)
          if (code === 0) return { state: "ok", exit: 0, ms } satisfies Outcome
          return {
            state: "failed",
            exit: code,
            ms,
            detail: stderr === "" ? `exit ${code}` : stderr
          } satisfies Outcome
        }))
      }).pipe(Effect.provide(context))

    return CommandRunner.of({ run })
  })

export const layer = (config: CommandRunnerConfig = {}) => Layer.effect(CommandRunner, make(config))
