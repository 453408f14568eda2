/**
 * Runs one declared command (docs/capability-plugin-lifecycle.md,
 * "Declaration"): "`{personality}`, `{runtime}`, `{cwd}` and `{occasion}` are
 * substituted per argument, and **no shell** is involved"; "`{privateDir}` on a
 * runtime without one is refused (`failed`) before spawn"; the private directory
 * "is also exported as `IAPEER_PRIVATE_DIR`" (ours: `CITY_PRIVATE_DIR`);
 * "Timeout per call: 120 s".
 *
 * - argv is `[command, ...args]`, each argument substituted on its own in one
 *   pass (a substituted value is never substituted again); no shell, so shell
 *   metacharacters reach the plugin literally.
 * - stdin is closed: it is `/dev/null`, so the child reads EOF at once; stdout
 *   is discarded (`/dev/null`, stderr is the failure detail); stderr is kept as a
 *   bounded tail (`stderrTailBytes`, default 4 KiB) whatever its size.
 * - The child's environment is this process's environment as it was when the
 *   service was built, plus or minus `CITY_PRIVATE_DIR`.
 * - The per-call logic is `runChild.ts`. Spawning is `node:child_process`
 *   directly (the platform `Command` costs about half the throughput on short
 *   commands and has no SIGKILL fallback). An interrupted call terminates the
 *   group the same way before it returns.
 * - The runner bounds nothing itself: a joint runs at most `--concurrency`
 *   calls of `run` at once (`Effect.forEach` in `EndpointCalls`).
 * - The child runs in its own process group. On timeout (or interruption) the
 *   whole group gets SIGTERM, then SIGKILL after `killGrace` (default 2 s) if
 *   anything of it is still alive.
 * - The outcome is decided by the exit of the command itself, not by the end of
 *   its stderr: a command that leaves a background process holding stderr open
 *   (`sleep 60 & exit 0`) is `ok` at exit 0. Its stderr tail is what arrived
 *   until the pipe closed, or until `stderrGrace` (default 250 ms) after the
 *   exit, whichever comes first.
 * - What the command leaves behind in its process group is terminated when it
 *   exits (decision; the spec is silent): SIGTERM at once, SIGKILL after
 *   `killGrace` if anything is still alive, without delaying the outcome; groups
 *   still alive when the service's scope closes (the CLI exits) get SIGKILL. A
 *   call is over when its command exits; a helper meant to outlive it must leave
 *   the group (`setsid`).
 * - Outcomes: `ok` (exit 0), `failed` (exit code + stderr tail, or killed by a
 *   signal), `timeout`, `not-executable` (spawn refused: missing file, no execute
 *   permission). `run` itself never fails.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { type CommandSpec, type Placeholder, placeholders } from "../../schema/Declaration.ts"
import type { Outcome } from "../../schema/Outcome.ts"
import { makeChildRunner } from "./runChild.ts"

/**
 * The name of the variable carrying the endpoint's private directory.
 * @since 0.1.0
 * @category constants
 */
export const privateDirVariable = "CITY_PRIVATE_DIR"

/**
 * Values for the placeholders; `privateDir` is absent on a runtime without one.
 * @since 0.1.0
 * @category models
 */
export type Substitutions = { readonly [K in Placeholder]?: string }

const placeholderPattern = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g

/**
 * Substitutes the known placeholders inside one argument, in a single pass.
 * Fails with the name of a placeholder that has no value.
 * @since 0.1.0
 * @category utils
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

/**
 * `[command, ...args]` with every argument substituted.
 * @since 0.1.0
 * @category utils
 */
export const buildArgv = (
  spec: CommandSpec,
  values: Substitutions
): Either.Either<readonly [string, ...Array<string>], Placeholder> =>
  Either.all(spec.args.map((arg) => substitute(arg, values))).pipe(
    Either.map((args) => [spec.command, ...args] as const)
  )

/**
 * One command to run: argv, working directory, private directory and timeout.
 * @since 0.1.0
 * @category models
 */
export interface RunRequest {
  /** The executable (argv[0]), run without a shell. */
  readonly command: string
  /** The arguments, placeholders already substituted. */
  readonly args: ReadonlyArray<string>
  /** The working directory of the child. */
  readonly cwd: string
  /** Set `CITY_PRIVATE_DIR` to this; when absent the variable is removed from the child's env. */
  readonly privateDir: Option.Option<string>
  /** How long the command may run before its process group is stopped (outcome `timeout`). */
  readonly timeout: Duration.DurationInput
}

/**
 * How the runner stops a command that outlives its timeout.
 * @since 0.1.0
 * @category models
 */
export interface CommandRunnerConfig {
  /** Time between SIGTERM and SIGKILL of the process group (default 2 s). */
  readonly killGrace?: Duration.DurationInput
  /** Bytes of stderr kept (the tail; default 4096). */
  readonly stderrTailBytes?: number
  /** How long after the command's exit its stderr is still read, when something else holds it open (default 250 ms). */
  readonly stderrGrace?: Duration.DurationInput
}

/**
 * Runs one provisioning command without a shell and reports its outcome.
 * @since 0.1.0
 * @category tags
 */
export class CommandRunner extends Context.Tag("effect-city/CommandRunner")<
  CommandRunner,
  {
    /** Runs the command to an outcome; never fails. */
    readonly run: (request: RunRequest) => Effect.Effect<Outcome>
  }
>() {}

/**
 * The environment of the children: this process's environment as it is now (`NODE_EXTRA_CA_CERTS`
 * and `NODE_OPTIONS` included), without `CITY_PRIVATE_DIR`. Read once per runner: `process.env`
 * is slow to enumerate, and a sweep spawns hundreds of children.
 */
const baseEnvironment = (): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && key !== privateDirVariable) env[key] = value
  }
  return env
}

/**
 * The runner; groups left behind by a command and still alive when the scope closes get SIGKILL.
 * @since 0.1.0
 * @category constructors
 */
export const make = (config: CommandRunnerConfig = {}): Effect.Effect<CommandRunner["Type"], never, Scope.Scope> =>
  Effect.gen(function*() {
    const children = makeChildRunner({
      killGraceMs: Duration.toMillis(Duration.decode(config.killGrace ?? Duration.seconds(2))),
      stderrGraceMs: Duration.toMillis(Duration.decode(config.stderrGrace ?? Duration.millis(250))),
      tailBytes: config.stderrTailBytes ?? 4096
    })
    yield* Effect.addFinalizer(() => Effect.sync(children.killLeftovers))
    const baseEnv = baseEnvironment()
    const envFor = (privateDir: Option.Option<string>): Record<string, string> =>
      Option.isSome(privateDir) ? { ...baseEnv, [privateDirVariable]: privateDir.value } : baseEnv

    /**
     * One call, as a single asynchronous operation: a sweep spawns hundreds of
     * children from one thread, so the per-call bookkeeping is plain callbacks
     * (timers, listeners) rather than a scope and fibers per call.
     */
    const run = (request: RunRequest): Effect.Effect<Outcome> =>
      Effect.async<Outcome>((resume) => {
        const running = children.run({
          command: request.command,
          args: request.args,
          cwd: request.cwd,
          env: envFor(request.privateDir),
          timeoutMs: Duration.toMillis(Duration.decode(request.timeout))
        }, (outcome) => resume(Effect.succeed(outcome)))
        // Interrupted (the CLI got SIGINT, the caller gave up): the same termination, awaited.
        return Effect.async<void>((resumeCancel) => running.cancel(() => resumeCancel(Effect.void)))
      })

    return CommandRunner.of({ run })
  })

/**
 * The command runner as a Layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = (config: CommandRunnerConfig = {}) => Layer.scoped(CommandRunner, make(config))
