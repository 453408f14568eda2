/**
 * One invocation of `city`: what the process gives the CLI (its environment, working directory,
 * whether stdout and stderr are terminals) and what the CLI gives back (the exit code). The
 * process entry (`binary.ts`) builds it from `process`; tests build one per run, so a verb runs
 * in-process against a temp root and a test Console, and its exit code is a value, not
 * `process.exitCode`.
 *
 * Colour: ANSI escapes are written only to a terminal and never when `NO_COLOR` is set (to any
 * value but the empty string, https://no-color.org), help included.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import { homedir } from "node:os"
import type { EndpointOutcome } from "../schema/Outcome.ts"
import type { Occasion } from "../schema/Occasion.ts"

/** One endpoint call a joint of this invocation set out to run. */
export interface PlannedCall {
  readonly capability: string
  readonly personality: string
  readonly runtime: string
  readonly occasion: Occasion
}

/**
 * The endpoint calls of this invocation's joints so far: the ones they set out to run and the
 * outcomes of the ones that finished; what an interrupted verb reports (docs/cli.md, "Interrupted").
 */
export interface Calls {
  readonly planned: ReadonlyArray<PlannedCall>
  readonly finished: ReadonlyArray<EndpointOutcome>
}

export interface InvocationShape {
  /** The environment the CLI reads (`CITY_ROOT`, `NO_COLOR`). */
  readonly env: Readonly<Record<string, string | undefined>>
  readonly cwd: string
  readonly home: string
  readonly stdoutIsTTY: boolean
  readonly stderrIsTTY: boolean
  /** Raw text on stderr, no newline added: the progress line. */
  readonly writeStderr: (text: string) => Effect.Effect<void>
  /** The exit code of this invocation (0 unless a verb sets it). */
  readonly exitCode: Ref.Ref<number>
  /** Whether a progress line is on screen (it must be ended before anything else is printed). */
  readonly progressShown: Ref.Ref<boolean>
  /** The endpoint calls so far, planned and finished. */
  readonly calls: Ref.Ref<Calls>
}

export class Invocation extends Context.Tag("effect-city/programs/Invocation")<Invocation, InvocationShape>() {}

const noColor = (env: InvocationShape["env"]): boolean => {
  const value = env["NO_COLOR"]
  return value !== undefined && value !== ""
}

/** ANSI styling on stdout: a terminal, and no `NO_COLOR`. */
export const stdoutColor = (i: InvocationShape): boolean => i.stdoutIsTTY && !noColor(i.env)

/** ANSI control on stderr (the progress line's erase): a terminal, and no `NO_COLOR`. */
export const stderrColor = (i: InvocationShape): boolean => i.stderrIsTTY && !noColor(i.env)

export const make = (
  options: Omit<InvocationShape, "exitCode" | "progressShown" | "calls">
): Effect.Effect<InvocationShape> =>
  Effect.map(
    Effect.all([Ref.make(0), Ref.make(false), Ref.make<Calls>({ planned: [], finished: [] })]),
    ([exitCode, progressShown, calls]) => ({ ...options, exitCode, progressShown, calls })
  )

/** The invocation of this process. */
export const fromProcess: Effect.Effect<InvocationShape> = Effect.suspend(() =>
  make({
    env: process.env,
    cwd: process.cwd(),
    home: homedir(),
    stdoutIsTTY: process.stdout.isTTY === true,
    stderrIsTTY: process.stderr.isTTY === true,
    writeStderr: (text) =>
      Effect.sync(() => {
        process.stderr.write(text)
      })
  })
)

export const setExitCode = (code: number) => Effect.flatMap(Invocation, (i) => Ref.set(i.exitCode, code))
