/**
 * The "Commands" endpoint host (docs/design.md, "Capabilities": the `EndpointHost` service): endpoints of runtimes outside this
 * process (claude, codex, opencode…), driven by the argv commands of their runtime profile in
 * `host.json` (`commands.status|reload|retire|kill`; schema/LiveProfile.ts). This is how an
 * operator wires real agent runtimes.
 *
 * - Commands are absolute and run without a shell, substituted per argument like provisioning
 *   commands (`{personality}`, `{runtime}`, `{cwd}`, `{privateDir}`, and `{occasion}` = the
 *   operation name), with the same timeout (default 120 s) and `CITY_PRIVATE_DIR`.
 * - `status` prints one of `idle busy asleep stopped foreign` on its first line; anything else,
 *   a non-zero exit or a timeout is `EndpointHostFailed`. It runs through the one child runner
 *   (capabilities/ChildRunner.ts) in its own process group, without a process record (it only reads;
 *   a poll every second must not write): its stdout read until the pipes close (at most 1 MiB),
 *   its group killed (SIGKILL) at the timeout or when the call is interrupted. `reload`, `retire`
 *   and `kill` run as provisioning commands do (CommandRunner.ts).
 * - A runtime without a `status` command is not reachable by the core: its endpoints are
 *   `asleep` (nothing the core hosts or can reach is running; the next launch reads current
 *   surfaces). Decision: a wrong guess here would be a false `applied`, never a kill.
 * - `reload` and `retire` wait for the Turn boundary by polling `status` every `pollInterval`
 *   (default 1 s) until the endpoint is not busy, then run their command; an endpoint that is by
 *   then asleep, stopped or foreign is left alone. A claimed reload is not interrupted: a daemon
 *   asked to stop lets it finish (within the finalizer deadline). A missing `reload`/`retire`/`kill` command on
 *   a runtime that has a `status` command is `EndpointHostFailed` (reported `failed`, exit 1).
 * - A failure's detail (stderr, a `status` command's output) is redacted with the host's `redact`
 *   (schema/Redaction.ts) before it leaves this host: `last_error`, logs and the board never see a secret.
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type { CommandSpec } from "../../schema/Declaration.ts"
import { EndpointError, EndpointState } from "../../schema/Live.ts"
import type { Outcome } from "../../schema/Outcome.ts"
import { buildArgv, CommandRunner, privateDirVariable } from "../capabilities/CommandRunner.ts"
import * as ChildRunner from "../capabilities/ChildRunner.ts"
import { RuntimeProfiles } from "../capabilities/RuntimeProfiles.ts"
import { StateRoot } from "../root/StateRoot.ts"
import type { EndpointHostShape, EndpointRef } from "./EndpointHost.ts"

/**
 * Timeout of each endpoint command (default 120 s) and the interval of status polls while waiting for a Turn boundary (default 1 s).
 * @since 0.1.0
 * @category models
 */
export interface CommandsHostConfig {
  /** Timeout of each endpoint command (default 120 s). */
  readonly timeout?: Duration.DurationInput
  /** Interval of status polls while waiting for a Turn boundary (default 1 s). */
  readonly pollInterval?: Duration.DurationInput
}

/** The most a `status` command may print (stdout and stderr together): 1 MiB. */
const statusOutputBytes = 1024 * 1024

/**
 * The runner of `status` commands: stdout is the answer, read until the pipes close; the group
 * gets SIGKILL at the timeout, at interruption, and when the command leaves something behind.
 */
const statusRunner = ChildRunner.make({
  killGraceMs: 0,
  stderrGraceMs: Infinity,
  tailBytes: statusOutputBytes,
  outputBytes: statusOutputBytes
})

/** The environment of a `status` command: this process's as it is now, `CITY_PRIVATE_DIR` set or removed. */
const environment = (ref: EndpointRef): Record<string, string> => {
  const env = ChildRunner.currentEnvironment(privateDirVariable)
  if (Option.isSome(ref.privateDir)) env[privateDirVariable] = ref.privateDir.value
  return env
}

/**
 * A command that did not end `ok`. The message already says `<operation> failed`: a failed call is
 * described by its detail alone (its stderr, or `exit N`), other outcomes by their state.
 */
const describe = (outcome: Outcome): string =>
  outcome.state === "failed"
    ? outcome.detail ?? `exit ${outcome.exit ?? "?"}`
    : `${outcome.state}${outcome.detail === undefined ? "" : `: ${outcome.detail}`}`

const isState = (s: string): s is EndpointState => (EndpointState.literals as ReadonlyArray<string>).includes(s)

/**
 * Builds the Commands host from the runtime profiles of `host.json`.
 * @since 0.1.0
 * @category constructors
 */
export const make = (config: CommandsHostConfig = {}): Effect.Effect<
  EndpointHostShape,
  never,
  RuntimeProfiles | CommandRunner | StateRoot
> =>
  Effect.gen(function*() {
    const profiles = yield* RuntimeProfiles
    const runner = yield* CommandRunner
    const state = yield* StateRoot
    const timeout = Duration.decode(config.timeout ?? Duration.seconds(120))
    const poll = Duration.decode(config.pollInterval ?? Duration.seconds(1))
    const commandsOf = (runtime: string) => profiles.config.profiles[runtime]?.commands

    const argvOf = (ref: EndpointRef, operation: string, spec: CommandSpec) =>
      buildArgv(spec, {
        personality: ref.personality,
        runtime: ref.runtime,
        cwd: ref.cwd,
        occasion: operation,
        ...(Option.isSome(ref.privateDir) ? { privateDir: ref.privateDir.value } : {})
      }).pipe(Either.mapLeft((p) => `{${p}} is not available for runtime ${ref.runtime}; refused before spawn`))

    // Every failure's detail (a command's stderr, a `status` command's output) is redacted here,
    // before an owed reload's `last_error`, the daemon's log or the status board holds it.
    const fail = (ref: EndpointRef, operation: string) => (detail: string) =>
      new EndpointError({ reason: "EndpointHostFailed", identity: ref.identity, operation, detail: profiles.redact(detail) })

    const status = (ref: EndpointRef): Effect.Effect<EndpointState, EndpointError> => {
      const spec = commandsOf(ref.runtime)?.status
      if (spec === undefined) return Effect.succeed("asleep")
      const argv = argvOf(ref, "status", spec)
      if (Either.isLeft(argv)) return Effect.fail(fail(ref, "status")(argv.left))
      const [command, ...args] = argv.right
      return Effect.flatMap(
        Effect.suspend(() =>
          ChildRunner.run(statusRunner, { command, args, cwd: state.root, env: environment(ref), timeoutMs: Duration.toMillis(timeout) })
        ),
        ({ outcome, stdout }): Effect.Effect<EndpointState, EndpointError> => {
          if (outcome.state !== "ok") return Effect.fail(fail(ref, "status")(describe(outcome)))
          const first = stdout.split("\n")[0]?.trim() ?? ""
          return isState(first)
            ? Effect.succeed(first)
            : Effect.fail(fail(ref, "status")(`printed ${JSON.stringify(first)}; expected one of ${EndpointState.literals.join(" ")}`))
        }
      )
    }

    const run = (ref: EndpointRef, operation: "reload" | "retire" | "kill") =>
      Effect.gen(function*() {
        const spec = commandsOf(ref.runtime)?.[operation]
        if (spec === undefined) {
          return yield* fail(ref, operation)(`runtime ${ref.runtime} has no ${operation} command in host.json`)
        }
        const argv = argvOf(ref, operation, spec)
        if (Either.isLeft(argv)) return yield* fail(ref, operation)(argv.left)
        const [command, ...args] = argv.right
        const outcome = yield* runner.run({
          command,
          args,
          cwd: state.root,
          privateDir: ref.privateDir,
          timeout,
          endpoint: `host ${ref.identity}`,
          identity: ref.identity
        })
        if (outcome.state !== "ok") return yield* fail(ref, operation)(describe(outcome))
      })

    /** Polls status until the endpoint is not busy; the state it settled in. */
    const boundary = (ref: EndpointRef): Effect.Effect<EndpointState, EndpointError> =>
      Effect.flatMap(status(ref), (s) => s === "busy" ? Effect.zipRight(Effect.sleep(poll), boundary(ref)) : Effect.succeed(s))

    const reload = <A, E>(ref: EndpointRef, claim: Effect.Effect<Option.Option<A>, E>) =>
      Effect.gen(function*() {
        if ((yield* boundary(ref)) !== "idle") return Option.none<A>()
        // Once claimed, the reload runs to its end even if the daemon is asked to stop meanwhile
        // (bounded by the command timeout and the process's finalizer deadline).
        return yield* Effect.uninterruptible(Effect.gen(function*() {
          const claimed = yield* claim
          if (Option.isSome(claimed)) yield* run(ref, "reload")
          return claimed
        }))
      })

    return {
      status,
      reload,
      retire: (ref) => Effect.flatMap(boundary(ref), (s) => s === "idle" ? run(ref, "retire") : Effect.void),
      kill: (ref) => Effect.flatMap(status(ref), (s) => s === "foreign" ? Effect.void : run(ref, "kill")),
      unreachable: (runtime) => commandsOf(runtime)?.status === undefined
    } satisfies EndpointHostShape
  })
