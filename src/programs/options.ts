/**
 * The arguments and options of the `city` verbs, each with the text its help shows: a real
 * description, the value's name and the default. `--root` and `--json` are on every verb;
 * `--timeout-ms` and `--concurrency` only on verbs that run provisioning commands.
 *
 * `@effect/cli` parses; the help is ours (`help.ts`): `described` records what a parameter's help
 * row says, keyed by the parameter itself, so a verb lists its parameters once (in its
 * `Command.make` config) and its help follows from that list.
 *
 * Decisions: numbers are whole decimal numbers, and a value that is not one is refused in English
 * (`--timeout-ms expects a whole number of milliseconds, got 'soon'`), as is a value of an enum
 * option (`--log-format expects one of logfmt, json, got 'xml'`): the message names the flag; a file argument that does
 * not exist is refused before anything runs, naming the file once.
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import type * as Command from "@effect/cli/Command"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { isAbsolute, resolve } from "node:path"
import * as CityRoot from "../services/root/CityRoot.ts"
import { Invocation, type InvocationShape } from "./invocation.ts"

/** What one help row says about a parameter. */
export interface ParamHelp {
  readonly kind: "argument" | "flag"
  /** `<file>`, `[<personality>]`, `--timeout-ms <ms>`. */
  readonly usage: string
  readonly description: string
  readonly default?: string
  /** A required flag is shown in the usage line too. */
  readonly required?: boolean
}

const helpOf = new WeakMap<object, ParamHelp>()

/** Records the help row of a parameter (an `Args` or `Options` value) and returns it unchanged. */
export const described = <P extends object>(param: P, help: ParamHelp): P => {
  helpOf.set(param, help)
  return param
}

/** The help row of a parameter, if it was `described`. */
export const helpFor = (param: unknown): ParamHelp | undefined =>
  typeof param === "object" && param !== null ? helpOf.get(param) : undefined

/** `--<name>`, a boolean flag, with its one description (the parser's and the help row's). */
export const flag = (name: string, description: string) =>
  described(Options.boolean(name).pipe(Options.withDescription(description)), {
    kind: "flag",
    usage: `--${name}`,
    description
  })

/** `--force` with its one description. */
export const force = (description: string) => flag("force", description)

/** `--<name> <value>`, optional, with its one description and what holds when it is absent. */
export const optionalText = (name: string, value: string, description: string, absent: string) =>
  described(
    Options.text(name).pipe(Options.withPseudoName(value), Options.withDescription(description), Options.optional),
    { kind: "flag", usage: `--${name} <${value}>`, description, default: absent }
  )

/** A whole decimal number, or an English refusal naming the flag and what it expects. */
export const wholeNumber = (flag: string, unit: string) => (text: string) =>
  /^[+-]?\d+$/.test(text.trim()) && Number.isSafeInteger(Number(text))
    ? Effect.succeed(Number(text))
    : Effect.fail(ValidationError.invalidValue(HelpDoc.p(`--${flag} expects a whole number of ${unit}, got '${text}'`)))

/** One of `choices`, or an English refusal naming the flag and the choices. */
export const oneOf = <const C extends string>(flag: string, choices: ReadonlyArray<C>) => (text: string) =>
  (choices as ReadonlyArray<string>).includes(text)
    ? Effect.succeed(text as C)
    : Effect.fail(ValidationError.invalidValue(HelpDoc.p(`--${flag} expects one of ${choices.join(", ")}, got '${text}'`)))

/** `--<name> <value>`: one of `choices`, `fallback` when absent; a bad value is refused naming the flag. */
export const choiceOption = <const C extends string>(name: string, choices: ReadonlyArray<C>, fallback: C) =>
  Options.text(name).pipe(
    Options.withPseudoName(choices.join("|")),
    Options.mapEffect(oneOf(name, choices)),
    Options.withDefault(fallback)
  )

/** `--<name> <n>`: a whole number of `unit`, `fallback` when absent; a bad value is refused naming the flag. */
export const numberOption = (name: string, unit: string, fallback: number) =>
  Options.text(name).pipe(
    Options.withPseudoName(unit === "milliseconds" ? "ms" : "n"),
    Options.mapEffect(wholeNumber(name, unit)),
    Options.withDefault(fallback)
  )

export const root = described(
  // Text, not `Options.directory`: the parser's own check of the path failed with a raw
  // platform error (a stack trace on stdout) on an inaccessible root; the state root reports it.
  Options.text("root").pipe(
    Options.withPseudoName("dir"),
    Options.withDescription("The state root"),
    Options.optional
  ),
  { kind: "flag", usage: "--root <dir>", description: "The state root", default: "$CITY_ROOT, else ~/.city" }
)

export const json = described(
  Options.boolean("json").pipe(Options.withDescription("Print one JSON document on stdout")),
  { kind: "flag", usage: "--json", description: "Print one JSON document on stdout, { ok, verb, ... }" }
)

export const timeoutMs = described(numberOption("timeout-ms", "milliseconds", 120_000), {
  kind: "flag",
  usage: "--timeout-ms <ms>",
  description: "Time limit of each provisioning call; then its process group is killed",
  default: "120000"
})

export const concurrency = described(numberOption("concurrency", "calls", 4), {
  kind: "flag",
  usage: "--concurrency <n>",
  description: "Provisioning calls run at once",
  default: "4"
})

/**
 * A file argument. The verb reads it from the current directory of the invocation and refuses a
 * missing one as `file not found: <path>` (`inputFile`), before anything runs.
 */
export const file = (name: string, description: string) =>
  described(Args.text({ name }), { kind: "argument", usage: `<${name}>`, description })

/** An argument of the command line that cannot be used: refused input (exit 2), like any bad usage. */
export class UsageError extends Schema.TaggedError<UsageError>()("UsageError", { message: Schema.String }) {}

/** The absolute path of a file argument, or `file not found: <path>` naming it once. */
export const inputFile = (path: string) =>
  Effect.gen(function*() {
    const invocation = yield* Invocation
    const fs = yield* FileSystem.FileSystem
    const absolute = isAbsolute(path) ? path : resolve(invocation.cwd, path)
    const exists = yield* fs.exists(absolute).pipe(Effect.orElseSucceed(() => false))
    if (!exists) return yield* new UsageError({ message: `file not found: ${path}` })
    return absolute
  })

/** A required text argument. */
export const text = (name: string, description: string) =>
  described(Args.text({ name }), { kind: "argument", usage: `<${name}>`, description })

/** `--root`, else `$CITY_ROOT`, else `~/.city` (the library's rule, CityRoot.rootFrom). */
export const resolveRoot = (flag: Option.Option<string>, invocation: InvocationShape): string =>
  CityRoot.rootFrom({ root: Option.getOrUndefined(flag), env: invocation.env, home: invocation.home, cwd: invocation.cwd })

/** The options of every verb that runs provisioning commands. */
export const commandOptions = { root, json, timeoutMs, concurrency }

/** The options of every verb that only reads. */
export const readOptions = { root, json }

/** What every verb that runs provisioning commands is given: `commandOptions`, parsed. */
export type CommandInput = Command.Command.ParseConfig<typeof commandOptions>

/** What every verb that only reads is given: `readOptions`, parsed. */
export type ReadInput = Command.Command.ParseConfig<typeof readOptions>

/**
 * `--freeze-limit <seconds>` of `city daemon` and `city plugins list`: how long the host's thread
 * may stay blocked before the watchdog ends the process (docs/plugin-loader.md, "The host's own
 * thread"). At least 1 (checked by the verb).
 */
export const freezeLimit = described(
  numberOption("freeze-limit", "seconds", 30).pipe(
    Options.withDescription("How long the host's thread may stay blocked (a plugin spinning on it) before the process ends, in seconds")
  ),
  {
    kind: "flag",
    usage: "--freeze-limit <seconds>",
    description: "How long the host's thread may stay blocked (a plugin spinning on it) before the process ends",
    default: "30"
  }
)

/** A `--freeze-limit` below 1 second is refused naming the flag. */
export const checkFreezeLimit = (seconds: number) =>
  seconds < 1
    ? Effect.fail(new UsageError({ message: `--freeze-limit must be at least 1 (seconds), got ${seconds}` }))
    : Effect.succeed(seconds)
