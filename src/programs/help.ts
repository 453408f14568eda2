/**
 * `--help` for every level of `city`, in the shape gh and kubectl use: what the command does, a
 * usage line naming the whole command (`city capability register <file> [flags]`), then its
 * commands or its arguments and flags, each with a real description and its default. Only what
 * applies is offered: `--timeout-ms` and `--concurrency` appear only on verbs that run commands,
 * `--version` and `--completions` only on `city` itself, `--wizard` nowhere (it needs a terminal
 * to answer its prompts, so a script would hang on it).
 *
 * Headings are bold only when stdout is a terminal and `NO_COLOR` is not set.
 * @since 0.1.0
 */
import type { ParamHelp } from "./options.ts"
import type { Group, Node, Verb } from "./verbs.ts"

const helpFlag: ParamHelp = { kind: "flag", usage: "-h, --help", description: "Show help for this command" }

/** The flags only `city` itself takes. */
export const rootFlags: ReadonlyArray<ParamHelp> = [
  { kind: "flag", usage: "--version", description: "Print the version of city" },
  {
    kind: "flag",
    usage: "--completions <shell>",
    description: "Print a completion script for bash, zsh or fish (docs/cli.md, \"Completions\")"
  }
]

const heading = (text: string, color: boolean) => color ? `\u001b[1m${text}\u001b[0m` : text

const rows = (items: ReadonlyArray<readonly [string, string]>): Array<string> => {
  const width = Math.max(...items.map(([left]) => left.length))
  return items.map(([left, right]) => `  ${left.padEnd(width)}   ${right}`)
}

/** A flag's column: short flags line up after `-h, `, long ones after four spaces (gh's layout). */
const flagColumn = (p: ParamHelp) => p.usage.startsWith("--") ? `    ${p.usage}` : p.usage

const paramText = (p: ParamHelp) => p.default === undefined ? p.description : `${p.description} (default ${p.default})`

/** `city capability register <file> [flags]`: the whole command, its arguments, required flags. */
export const usageLine = (path: ReadonlyArray<string>, node: Node): string => {
  if (node._tag === "Group") return `${path.join(" ")} <command> [flags]`
  const args = node.params.filter((p) => p.kind === "argument").map((p) => p.usage)
  const required = node.params.filter((p) => p.kind === "flag" && p.required === true).map((p) => p.usage)
  return [...path, ...args, ...required, "[flags]"].join(" ")
}

const verbHelp = (path: ReadonlyArray<string>, verb: Verb, color: boolean): Array<string> => {
  const args = verb.params.filter((p) => p.kind === "argument")
  const flags = [...verb.params.filter((p) => p.kind === "flag")].sort((a, b) =>
    a.usage.replace(/^-+/, "").localeCompare(b.usage.replace(/^-+/, ""))
  )
  const lines = [`${verb.summary}.`, "", heading("USAGE", color), `  ${usageLine(path, verb)}`]
  if (args.length > 0) lines.push("", heading("ARGUMENTS", color), ...rows(args.map((a) => [a.usage, paramText(a)])))
  lines.push("", heading("FLAGS", color), ...rows([...flags, helpFlag].map((f) => [flagColumn(f), paramText(f)])))
  if (verb.examples.length > 0) lines.push("", heading("EXAMPLES", color), ...verb.examples.map((e) => `  $ ${e}`))
  return lines
}

const groupHelp = (path: ReadonlyArray<string>, group: Group, color: boolean): Array<string> => {
  const flags = path.length === 1 ? [...rootFlags, helpFlag] : [helpFlag]
  return [
    `${group.summary}.`,
    "",
    heading("USAGE", color),
    `  ${usageLine(path, group)}`,
    "",
    heading("COMMANDS", color),
    ...rows([
      ...group.children.map((c) => [c.name, c.summary] as const),
      ...(path.length === 1 ? [["help", "Show the help of a command (city help <command>)"] as const] : [])
    ]),
    "",
    heading("FLAGS", color),
    ...rows(flags.map((f) => [flagColumn(f), paramText(f)])),
    "",
    `Run '${path.join(" ")} <command> --help' for more about a command.`
  ]
}

/** The help of the command at `path` (the names from `city` down to `node`). */
export const render = (path: ReadonlyArray<string>, node: Node, color: boolean): string =>
  (node._tag === "Verb" ? verbHelp(path, node, color) : groupHelp(path, node, color)).join("\n")
