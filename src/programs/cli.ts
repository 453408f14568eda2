/**
 * The front of `city`: walks the command tree (`verbs.ts`) along the arguments, answers
 * `--help`, `--version` and `--completions` itself, lets `@effect/cli` parse the verb's
 * arguments, runs the verb, and turns bad usage into one clear message. `run` returns the exit
 * code, so tests run the CLI in-process against a temp root and a test Console.
 *
 * Decisions (also in the README):
 * - A word that is not a command is named at its own level with a suggestion:
 *   `unknown command 'frob' for 'city capability'`, then `Did you mean this?` when a command is
 *   at most two edits away, starts with the word, or is a verb of a group (`city register` →
 *   `capability register`). A group without a command prints its help (exit 0), as gh does.
 * - Bad usage (unknown command or flag, a missing or malformed value) is exit 2, the message on
 *   stderr followed by the usage line; with `--json` the envelope `{ ok: false, verb, error }`
 *   goes to stdout too.
 * - `--root <dir>` and `--json`, which every verb takes, may also come before the command
 *   (`city --root /srv/city peer list`), as kubectl allows its global flags.
 * - `city help [<command>...]` shows the help of that command, as `--help` after it does.
 * - `--version` and `--completions <bash|zsh|fish>` belong to `city` alone; `--wizard` and
 *   `--log-level` are not offered (the wizard needs a terminal, a script would hang on it).
 * @since 0.1.0
 */
import * as AutoCorrect from "@effect/cli/AutoCorrect"
import * as CliConfig from "@effect/cli/CliConfig"
import * as Descriptor from "@effect/cli/CommandDescriptor"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as ValidationError from "@effect/cli/ValidationError"
import * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import type * as Terminal from "@effect/platform/Terminal"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Ref from "effect/Ref"
import { capability } from "./capability.ts"
import { daemon } from "./daemon.ts"
import { fleet } from "./fleet.ts"
import { reload, status } from "./live.ts"
import * as Help from "./help.ts"
import { Invocation, stdoutColor } from "./invocation.ts"
import * as Print from "./print.ts"
import { peer } from "./peer.ts"
import { plugins } from "./plugins.ts"
import { group, type Node, strayWords, type Verb } from "./verbs.ts"

export const city = group("city", "effect-city: capability plugins and peers on this host", [
  capability,
  peer,
  plugins,
  // Live application.
  status,
  reload,
  daemon,
  // Many hosts.
  fleet
])

const config = CliConfig.make({})

/** Escape sequences of `@effect/cli`'s messages (they are styled for a terminal). */
const unstyle = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, "")

const lowerFirst = (text: string) => text.length === 0 ? text : `${text[0]?.toLowerCase()}${text.slice(1)}`

const isHelp = (arg: string) => arg === "--help" || arg === "-h"

/** `@effect/cli`'s messages, in the words gh uses; one line per message. */
const reword = (text: string): string =>
  text.split("\n").map((line) => line.trim()).filter((line) => line !== "").map((line) =>
    lowerFirst(
      line
        .replace(/^Expected to find option: '(.+)'$/, "missing required flag $1")
        .replace(/^Expected at least (\d+) value\(s\) for option: '(.+)'$/, "missing required flag $2")
    )
  ).join("; ")

/**
 * A flag that takes a value, given last or followed by another flag (`--timeout-ms --json`):
 * the parser would otherwise read the next word, or the flag itself, as something else.
 */
const flagWithoutValue = (verb: Verb, args: ReadonlyArray<string>): string | undefined => {
  const valued = new Set(verb.params.flatMap((p) => {
    const match = /^(--[a-z-]+) </.exec(p.usage)
    return p.kind === "flag" && match?.[1] !== undefined ? [match[1]] : []
  }))
  return args.find((arg, i) => valued.has(arg) && (args[i + 1] === undefined || args[i + 1]?.startsWith("--") === true))
}

const quoted = (words: ReadonlyArray<string>) => words.map((w) => `'${w}'`).join(", ")

/**
 * The words of a verb's command line it cannot take, all named in one message (`unknown flag
 * '-rf' for 'city capability sync'`, `unknown flags '-rf', '--bogus' and unexpected argument
 * 'c2' for ...`), before the parser sees them: it names only the first thing it trips on, which
 * may be a known flag after an unknown one.
 */
const refusedWords = (path: ReadonlyArray<string>, verb: Verb, args: ReadonlyArray<string>): string | undefined => {
  const stray = strayWords(verb.lexicon, args)
  const parts = [
    ...(stray.flags.length === 0 ? [] : [`unknown flag${stray.flags.length === 1 ? "" : "s"} ${quoted(stray.flags)}`]),
    ...(stray.args.length === 0 ? [] : [`unexpected argument${stray.args.length === 1 ? "" : "s"} ${quoted(stray.args)}`])
  ]
  return parts.length === 0 ? undefined : `${parts.join(" and ")} for '${path.join(" ")}'`
}

/** Commands near `word`: a few edits away, or starting with it; verbs of a group by their path. */
export const suggestions = (node: Node, word: string): ReadonlyArray<string> => {
  if (node._tag === "Verb") return []
  const near = (name: string) =>
    AutoCorrect.levensteinDistance(word, name, config) <= config.autoCorrectLimit ||
    (word.length >= 2 && name.startsWith(word))
  const direct = node.children.filter((c) => near(c.name)).map((c) => c.name)
  const nested = node.children.flatMap((c) =>
    c._tag === "Group" ? c.children.filter((v) => v.name === word).map((v) => `${c.name} ${v.name}`) : []
  )
  return [...direct, ...nested]
}

/** Bad usage: the message and the usage line on stderr, the envelope with `--json`; exit 2. */
const usageError = (
  path: ReadonlyArray<string>,
  node: Node,
  json: boolean,
  message: string,
  suggested: ReadonlyArray<string> = []
) =>
  Effect.gen(function*() {
    const lines = [Print.safe`city: error: ${message}`]
    if (suggested.length > 0) lines.push("", "Did you mean this?", ...suggested.map((s) => `    ${s}`))
    lines.push("", `Usage: ${Help.usageLine(path, node)}`, `Run '${path.join(" ")} --help' for more information.`)
    yield* Console.error(lines.join("\n"))
    if (json) {
      yield* Print.printFailure(
        path.slice(1).join(" "),
        { _tag: "UsageError", message, ...(suggested.length > 0 ? { suggestions: suggested } : {}) },
        // The daemon's stdout under --json is JSON lines (docs/cli.md, "`--json` fields").
        node === daemon ? "line" : undefined
      )
    }
    return 2
  })

const showHelp = (path: ReadonlyArray<string>, node: Node) =>
  Effect.flatMap(Invocation, (invocation) => Console.log(Help.render(path, node, stdoutColor(invocation)))).pipe(
    Effect.as(0)
  )

const completions = (shell: string | undefined, json: boolean) => {
  switch (shell) {
    case "bash":
      return Descriptor.getBashCompletions(city.descriptor, "city")
    case "zsh":
      return Descriptor.getZshCompletions(city.descriptor, "city")
    case "fish":
      return Descriptor.getFishCompletions(city.descriptor, "city")
    default:
      return usageError(
        ["city"],
        city,
        json,
        shell === undefined ? "--completions needs a shell: bash, zsh or fish" : `unknown shell '${shell}': use bash, zsh or fish`
      )
  }
}

/**
 * Runs `city` with `args` (without `node` and the script): prints what the command prints and
 * returns its exit code. Never fails.
 */
export const run = (
  args: ReadonlyArray<string>
): Effect.Effect<number, never, Invocation | FileSystem.FileSystem | Path.Path | Terminal.Terminal> =>
  dispatch(args).pipe(
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause) ? Effect.failCause(cause) : unexpected(args.includes("--json"), cause)
    ),
    // Only an interruption is left, and it ends the process (130); in-process it ends the fiber.
    Effect.orDie
  )

/**
 * Anything no verb turned into a typed failure (a defect, a platform error from the parser): one
 * line on stderr, the envelope on stdout with `--json` (stdout stays valid JSON), exit 1.
 */
const unexpected = (json: boolean, cause: Cause.Cause<unknown>) =>
  Effect.gen(function*() {
    const failure = Cause.squash(cause)
    const message = failure instanceof Error ? failure.message : String(failure)
    yield* Print.endProgress()
    yield* Console.error(Print.safe`city: error: ${message.split("\n")[0] ?? ""}`)
    if (json) yield* Print.printFailure("", { _tag: "UnexpectedError", message })
    return 1
  })

const dispatch = (
  args: ReadonlyArray<string>
): Effect.Effect<number, never, Invocation | FileSystem.FileSystem | Path.Path | Terminal.Terminal> =>
  Effect.gen(function*() {
    const json = args.includes("--json")
    const path: Array<string> = ["city"]
    const carried: Array<string> = []
    let node: Node = city
    let i = 0
    while (node._tag === "Group") {
      const word = args[i]
      if (word === undefined) {
        return json ? yield* usageError(path, node, json, `missing command for '${path.join(" ")}'`) : yield* showHelp(path, node)
      }
      if (isHelp(word)) return yield* showHelp(path, node)
      // `city help [command...]` is `city [command...] --help`, as gh and kubectl have it.
      if (path.length === 1 && word === "help") return yield* dispatch([...carried, ...args.slice(i + 1), "--help"])
      // The flags every verb takes may also come before the command (`city --root /srv/city peer list`).
      if (word === "--json" || word.startsWith("--root=")) {
        carried.push(word)
        i++
        continue
      }
      if (word === "--root") {
        const value = args[i + 1]
        if (value === undefined || value.startsWith("--")) return yield* usageError(path, node, json, "flag needs a value: --root")
        carried.push(word, value)
        i += 2
        continue
      }
      if (path.length === 1 && word === "--version") {
        const v = yield* Effect.flatMap(Effect.promise(() => import("./version.ts")), (m) => m.version)
        yield* json ? Print.printJson({ ok: true, verb: "", version: v }) : Console.log(v)
        return 0
      }
      if (path.length === 1 && word === "--completions") {
        const script = yield* completions(args[i + 1], json)
        if (typeof script === "number") return script
        yield* Console.log(script.join("\n"))
        return 0
      }
      if (word.startsWith("-")) return yield* usageError(path, node, json, `unknown flag '${word}' for '${path.join(" ")}'`)
      const child: Node | undefined = node.children.find((c) => c.name === word)
      if (child === undefined) {
        return yield* usageError(
          path,
          node,
          json,
          `unknown command '${word}' for '${path.join(" ")}'`,
          suggestions(node, word)
        )
      }
      node = child
      path.push(word)
      i++
    }
    const verb = node
    const rest = [...args.slice(i), ...carried]
    const end = rest.indexOf("--")
    if ((end === -1 ? rest : rest.slice(0, end)).some(isHelp)) return yield* showHelp(path, verb)
    const stray = refusedWords(path, verb, rest)
    if (stray !== undefined) return yield* usageError(path, verb, json, stray)
    const missing = flagWithoutValue(verb, end === -1 ? rest : rest.slice(0, end))
    if (missing !== undefined) return yield* usageError(path, verb, json, `flag needs a value: ${missing}`)
    const parsed = yield* Effect.either(verb.parse(rest, config))
    if (Either.isLeft(parsed)) {
      const error = parsed.left
      // `-rf`: the parser splits a cluster of short flags and, none being known, says nothing.
      const message = ValidationError.isUnclusteredFlag(error)
        ? `unknown flag '-${error.unclustered.map((f) => f.replace(/^-/, "")).join("")}' for '${path.join(" ")}'`
        : reword(unstyle(HelpDoc.toAnsiText(error.error)))
      return yield* usageError(path, verb, json, message === "" ? `cannot parse the arguments of '${path.join(" ")}'` : message)
    }
    const directive = parsed.right
    switch (directive._tag) {
      case "BuiltIn":
        return yield* usageError(path, verb, json, `unknown flag '${directive.flag}' for '${path.join(" ")}'`)
      case "Leftover": {
        const [first = ""] = directive.leftover
        return yield* usageError(
          path,
          verb,
          json,
          first.startsWith("-")
            ? `unknown flag '${first}' for '${path.join(" ")}'`
            : `unexpected argument '${first}' for '${path.join(" ")}'`
        )
      }
      case "Run": {
        yield* directive.effect
        return yield* Ref.get((yield* Invocation).exitCode)
      }
    }
  })
