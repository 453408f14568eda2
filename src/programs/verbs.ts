/**
 * The command tree of `city`: groups (`city`, `city capability`, `city peer`) and verbs. A verb
 * is an `@effect/cli` command (it parses the verb's arguments) plus the help rows of its
 * parameters (`options.ts`); a group only routes. `cli.ts` walks the tree, `help.ts` renders it.
 *
 * Loaded when run: the tree (`capability.ts`, `peer.ts`, `live.ts`, `plugins.ts`, `daemon.ts`)
 * holds each verb's name, summary and parameters; what a verb does lives in `run/<group>.ts`,
 * which its handler imports when the verb runs (`loaded`). So `city --help`, a usage error, and
 * every verb start without evaluating the services, Schemas and layers of the other verbs: a
 * start of `city` evaluates the code it runs, not the whole CLI (docs/cli.md, "Start-up").
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Descriptor from "@effect/cli/CommandDescriptor"
import type * as CliConfig from "@effect/cli/CliConfig"
import type * as ValidationError from "@effect/cli/ValidationError"
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import type * as Terminal from "@effect/platform/Terminal"
import * as Options from "@effect/cli/Options"
import type * as Usage from "@effect/cli/Usage"
import * as Effect from "effect/Effect"
import type * as Types from "effect/Types"
import type { Invocation } from "./invocation.ts"
import { helpFor, type ParamHelp } from "./options.ts"

/** What a verb's handler may use: the invocation and the file system (to check its inputs). */
export type VerbContext = Invocation | FileSystem.FileSystem

/** What parsing a verb's arguments decided. */
export type Parsed =
  | { readonly _tag: "Run"; readonly effect: Effect.Effect<void, never, VerbContext> }
  /** A built-in flag of `@effect/cli` that `city` does not offer on a verb (`--wizard`, ...). */
  | { readonly _tag: "BuiltIn"; readonly flag: string }
  | { readonly _tag: "Leftover"; readonly leftover: ReadonlyArray<string> }

/** What a verb's command line may hold: its flags (whether each takes a value) and how many arguments. */
export interface Lexicon {
  /** Every name of every flag (`--root`), and whether it takes a value (`--root <dir>`) or not (`--json`). */
  readonly flags: ReadonlyMap<string, boolean>
  /** The most positional arguments the verb takes (`Infinity` for a repeated one). */
  readonly maxArgs: number
}

export interface Verb {
  readonly _tag: "Verb"
  readonly name: string
  readonly summary: string
  readonly params: ReadonlyArray<ParamHelp>
  readonly lexicon: Lexicon
  readonly examples: ReadonlyArray<string>
  readonly parse: (
    args: ReadonlyArray<string>,
    config: CliConfig.CliConfig
  ) => Effect.Effect<Parsed, ValidationError.ValidationError, FileSystem.FileSystem | Path.Path | Terminal.Terminal>
  /** The parser's view of the verb, for the completion scripts. */
  readonly descriptor: Descriptor.Command<void>
}

export interface Group {
  readonly _tag: "Group"
  readonly name: string
  readonly summary: string
  readonly children: ReadonlyArray<Node>
  readonly descriptor: Descriptor.Command<void>
}

export type Node = Verb | Group

const builtInFlag: Record<string, string> = {
  ShowHelp: "--help",
  ShowCompletions: "--completions",
  ShowWizard: "--wizard",
  ShowVersion: "--version",
  SetLogLevel: "--log-level"
}

const namesOf = (usage: Usage.Usage): ReadonlyArray<string> => {
  switch (usage._tag) {
    case "Named":
      return usage.names
    case "Optional":
    case "Repeated":
      return namesOf(usage.usage)
    case "Alternation":
    case "Concat":
      return [...namesOf(usage.left), ...namesOf(usage.right)]
    default:
      return []
  }
}

/** The flags and the argument count of a verb's config, read from the parser's own descriptions of them. */
const lexiconOf = (config: Command.Command.Config): Lexicon => {
  const flags = new Map<string, boolean>()
  let maxArgs = 0
  const visit = (value: unknown): void => {
    if (Options.isOptions(value)) {
      for (const name of namesOf(Options.getUsage(value))) flags.set(name, !Options.isBool(value))
    } else if (Args.isArgs(value)) {
      maxArgs += Args.getMaxSize(value)
    } else if (typeof value === "object" && value !== null) {
      for (const nested of Object.values(value)) visit(nested)
    }
  }
  visit(config)
  return { flags, maxArgs }
}

/** The words `@effect/cli` reads as the value of a boolean flag given right after it (`--json true`). */
const booleanWords = new Set(["true", "1", "y", "yes", "on", "false", "0", "n", "no", "off"])

/**
 * The words of a verb's command line that it cannot take, each as given: flags it does not
 * have (a cluster such as `-rf` as one word) and arguments beyond the ones it takes. A known
 * flag is never among them, wherever it stands; the value of a known flag is skipped, and so is
 * the word after an unknown `--name` (it may be its value); after `--` every word is an argument.
 */
export const strayWords = (
  lexicon: Lexicon,
  args: ReadonlyArray<string>
): { readonly flags: ReadonlyArray<string>; readonly args: ReadonlyArray<string> } => {
  const flags: Array<string> = []
  const extra: Array<string> = []
  let positional = 0
  let onlyArgs = false
  for (let i = 0; i < args.length; i++) {
    const word = args[i] ?? ""
    if (!onlyArgs && word === "--") {
      onlyArgs = true
      continue
    }
    if (!onlyArgs && word.startsWith("-") && word !== "-") {
      const equals = word.indexOf("=")
      const name = word.startsWith("--") && equals !== -1 ? word.slice(0, equals) : word
      const valued = lexicon.flags.get(name)
      if (valued === undefined) {
        flags.push(word)
        // What follows an unknown `--name` may be its value (`--concurrency 3`): named with it, not as an argument.
        const next = args[i + 1]
        if (word.startsWith("--") && equals === -1 && next !== undefined && !next.startsWith("-")) i++
      } else if (equals === -1 || !word.startsWith("--")) {
        const next = args[i + 1]
        // The value of a flag that takes one; a flag given as the value (`--timeout-ms --json`) is refused elsewhere.
        if (valued && next !== undefined && !next.startsWith("--")) i++
        else if (!valued && next !== undefined && booleanWords.has(next.toLowerCase())) i++
      }
      continue
    }
    positional++
    if (positional > lexicon.maxArgs) extra.push(word)
  }
  return { flags, args: extra }
}

/**
 * A verb: `name`, a one-line summary, its parameters (each `described`) and its handler, which
 * reports failures itself (`output.runVerb`) and so cannot fail.
 */
export const verb = <const Name extends string, const Config extends Command.Command.Config>(
  name: Name,
  summary: string,
  config: Config,
  handler: (parsed: Types.Simplify<Command.Command.ParseConfig<Config>>) => Effect.Effect<void, never, VerbContext>,
  examples: ReadonlyArray<string> = []
): Verb => {
  const command = Command.make(name, config, handler).pipe(Command.withDescription(summary))
  const params = Object.values(config).flatMap((param) => {
    const help = helpFor(param)
    return help === undefined ? [] : [help]
  })
  return {
    _tag: "Verb",
    name,
    summary,
    params,
    lexicon: lexiconOf(config),
    examples,
    descriptor: Descriptor.map(command.descriptor, () => undefined),
    parse: (args, cliConfig) =>
      Effect.map(Descriptor.parse(command.descriptor, [name, ...args], cliConfig), (directive): Parsed => {
        if (directive._tag === "BuiltIn") return { _tag: "BuiltIn", flag: builtInFlag[directive.option._tag] ?? "--help" }
        if (directive.leftover.length > 0) return { _tag: "Leftover", leftover: directive.leftover }
        return { _tag: "Run", effect: command.transform(command.handler(directive.value), directive.value) }
      })
  }
}

/**
 * A handler whose code is in another module, imported when the verb runs: `load` is that
 * module's `import()`, `run` calls its function with the parsed arguments.
 */
export const loaded = <M>(
  load: () => Promise<M>,
  run: (module: M) => Effect.Effect<void, never, VerbContext>
): Effect.Effect<void, never, VerbContext> => Effect.flatMap(Effect.promise(load), run)

export const group = (name: string, summary: string, children: ReadonlyArray<Node>): Group => {
  const [first, ...rest] = children.map((c) => [c.name, c.descriptor] as const)
  const base = Descriptor.withDescription(Descriptor.make(name), summary)
  const descriptor = first === undefined
    ? Descriptor.map(base, () => undefined)
    : Descriptor.map(Descriptor.withSubcommands(base, [first, ...rest]), () => undefined)
  return { _tag: "Group", name, summary, children, descriptor }
}
