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
 * - The per-call logic is `ChildRunner.ts`, the one child runner of this process
 *   (host `status` commands and tool calls use it too). Spawning is
 *   `node:child_process` directly (the platform `Command` costs about half the
 *   throughput on short commands and has no SIGKILL fallback). An interrupted
 *   call terminates the group the same way before it returns.
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
 * - Every command is recorded while it runs (ProcessRecords.ts): before a
 *   command of an endpoint is spawned, what a killed `city` left running there
 *   is ended, and a live one's is waited for (at most the timeout plus twice the
 *   grace; then `failed`, naming it); a record that cannot be written stops the
 *   command (`failed`). When this process exits with calls still in flight (a
 *   finalizer deadline gave up), their groups get SIGKILL.
 * - Outcomes: `ok` (exit 0), `failed` (exit code + stderr tail, or killed by a
 *   signal), `timeout`, `not-executable` (spawn refused: missing file, no execute
 *   permission). `run` itself never fails.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { type CommandSpec, type Placeholder, placeholders } from "../../schema/Declaration.ts"
import type { Outcome } from "../../schema/Outcome.ts"
import * as KeyedMutex from "../internal/keyedMutex.ts"
import { ProcessRecords } from "./ProcessRecords.ts"
import * as ChildRunner from "./ChildRunner.ts"

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
  /**
   * The endpoint the command acts on, as its process record names it (ProcessRecords.ts): no two
   * commands of one endpoint run at once, in this process or another.
   */
  readonly endpoint?: string
  /**
   * The endpoint's identity (`<runtime>-<personality>`): in one process, the commands of one
   * identity never run at once, whatever they do (a provisioning call, its host's `reload`,
   * `retire` or `kill`): the daemon of a fleet's host runs the fleet's provisioning calls and its
   * own owed reloads side by side (docs/cli.md, "Commands and signals").
   */
  readonly identity?: string
  /**
   * The caller holds the state-root lock (a joint): taking it ended every leftover
   * (`ProcessRecords.recover`), and no other process starts a command of this endpoint while it is
   * held, so the endpoint's slot is not read again before the spawn.
   */
  readonly rootLocked?: boolean
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
 * The runner; groups left behind by a command and still alive when the scope closes get SIGKILL.
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  config: CommandRunnerConfig = {}
): Effect.Effect<CommandRunner["Type"], never, Scope.Scope | ProcessRecords> =>
  Effect.gen(function*() {
    const records = yield* ProcessRecords
    const killGrace = Duration.decode(config.killGrace ?? Duration.seconds(2))
    const children = ChildRunner.make({
      killGraceMs: Duration.toMillis(killGrace),
      stderrGraceMs: Duration.toMillis(Duration.decode(config.stderrGrace ?? Duration.millis(250))),
      tailBytes: config.stderrTailBytes ?? 4096
    })
    yield* Effect.addFinalizer(() => Effect.sync(children.killLeftovers))
    // The environment of the children, without `CITY_PRIVATE_DIR`: read once per runner, as a
    // sweep spawns hundreds of children.
    const baseEnv = ChildRunner.currentEnvironment(privateDirVariable)
    const envFor = (privateDir: Option.Option<string>): Record<string, string> =>
      Option.isSome(privateDir) ? { ...baseEnv, [privateDirVariable]: privateDir.value } : baseEnv

    const failed = (detail: string): Outcome => ({ state: "failed", ms: 0, detail })
    // One command of an endpoint at a time in this process: checking the journals and spawning
    // are two steps, and two fibers of one process could both find the endpoint free between them.
    const exclusive = KeyedMutex.make<string>()

    /**
     * One call: the endpoint's slot vacated, the child spawned and recorded, its outcome awaited;
     * the record cleared however it ends. Interrupted (the CLI got SIGINT or SIGTERM, the caller
     * gave up), the group is terminated the same way before the call returns.
     */
    const run = (request: RunRequest): Effect.Effect<Outcome> => {
      const timeout = Duration.decode(request.timeout)
      const wait = Duration.sum(timeout, Duration.sum(Duration.times(killGrace, 2), Duration.seconds(1)))
      const vacated = request.rootLocked === true ? Effect.void : records.vacate(request.endpoint, wait)
      const command = Effect.matchEffect(vacated, {
        onFailure: (busy) => Effect.succeed(failed(`${busy.message}; not started`)),
        onSuccess: () =>
          Effect.uninterruptibleMask((restore) =>
            Effect.gen(function*() {
              const done = yield* Deferred.make<Outcome>()
              const running = children.run({
                command: request.command,
                args: request.args,
                cwd: request.cwd,
                env: envFor(request.privateDir),
                timeoutMs: Duration.toMillis(timeout)
                // unsafe: the child reports from a Node callback, outside any fiber.
              }, (outcome) => Deferred.unsafeDone(done, Exit.succeed(outcome)))
              const cancel = Effect.async<void>((resume) => running.cancel(() => resume(Effect.void)))
              if (running.pid === undefined) return yield* Deferred.await(done)
              const recorded = yield* Effect.either(records.spawned(request.endpoint, running.pid, request.command))
              if (Either.isLeft(recorded)) {
                yield* cancel
                return failed(`${recorded.left.message}; the command was stopped`)
              }
              return yield* restore(Deferred.await(done)).pipe(
                Effect.onInterrupt(() => cancel),
                Effect.ensuring(records.ended(recorded.right))
              )
            })
          )
      })
      return request.identity === undefined
        ? command
        : exclusive.withLock(request.identity, (restore) => restore(command), Effect.never)
    }

    return CommandRunner.of({ run })
  })

/**
 * The command runner as a Layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = (config: CommandRunnerConfig = {}) => Layer.scoped(CommandRunner, make(config))
