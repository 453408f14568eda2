/**
 * The tools an endpoint can call, read from its launch-read files: the concrete meaning of
 * "a tool added by the capability is callable in the next Turn and a removed one is neither
 * listed nor callable" (docs/capability-plugin-lifecycle.md, "Applying surfaces to a live
 * endpoint") for endpoints hosted as City Sessions.
 *
 * A tool is an MCP server entry, named by its key, in any launch-read file:
 * - JSON with `mcpServers` (claude's `.mcp.json`): `{ "mcpServers": { "<tool>": { "command": "/abs", "args": [..] } } }`;
 * - JSON with `mcp` (opencode fragments in the private directory): `{ "mcp": { "<tool>": { "command": ["/abs", ..] } } }`;
 * - TOML (codex's `.codex/config.toml`): `[mcp_servers.<tool>]` with `command = "/abs"` and
 *   `args = ["..", ..]`. Only this subset of TOML is read: section headers, and `command`/`args`
 *   whose values are JSON-compatible strings and string arrays; other lines are ignored.
 * Files are read in sorted path order; a later entry of the same name replaces an earlier one.
 * A file that cannot be parsed contributes nothing (the fingerprint still tracks it). Files are
 * read through the one file reader (`files/TextFile.ts`, launch-read surface file: 16 MiB): a FIFO,
 * a device, a folder, a larger file or invalid UTF-8 contributes nothing either, with a warning
 * naming the file and the rule.
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as TextFile from "../files/TextFile.ts"

/**
 * One callable tool: an argv (no shell) and the file that declared it.
 * @since 0.1.0
 * @category models
 */
export interface Tool {
  readonly name: string
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly source: string
}

const Strings = Schema.Array(Schema.String)
const isStrings = Schema.is(Strings)

/** The tool sections of a JSON launch-read file (other keys are the runtime's, and ignored). */
const JsonSurface = Schema.parseJson(Schema.Struct({
  mcpServers: Schema.optional(Schema.Unknown),
  mcp: Schema.optional(Schema.Unknown)
}))
/** A section: an object of entries by tool name; an entry that is not what its runtime reads is skipped. */
const Section = Schema.Record({ key: Schema.String, value: Schema.Unknown })
/** A claude entry: `command` a string; `args`, when it is not a list of strings, is no arguments. */
const ClaudeEntry = Schema.Struct({ command: Schema.String, args: Schema.optional(Schema.Unknown) })
/** An opencode entry: `command` the whole argv. */
const OpencodeEntry = Schema.Struct({ command: Strings })

const decodeSurface = Schema.decodeUnknownOption(JsonSurface)
const decodeSection = Schema.decodeUnknownOption(Section)
const decodeClaude = Schema.decodeUnknownOption(ClaudeEntry)
const decodeOpencode = Schema.decodeUnknownOption(OpencodeEntry)

const entriesOf = (section: unknown) =>
  Option.match(decodeSection(section), { onNone: () => [], onSome: (entries) => Object.entries(entries) })

const fromJson = (file: string, text: string): ReadonlyArray<Tool> =>
  Option.match(decodeSurface(text), {
    onNone: () => [],
    onSome: (json) => [
      ...entriesOf(json.mcpServers).flatMap(([name, entry]) =>
        Option.match(decodeClaude(entry), {
          onNone: () => [],
          onSome: ({ args, command }): ReadonlyArray<Tool> => [{ name, command, args: isStrings(args) ? args : [], source: file }]
        })
      ),
      ...entriesOf(json.mcp).flatMap(([name, entry]) =>
        Option.match(decodeOpencode(entry), {
          onNone: () => [],
          onSome: ({ command: [command, ...args] }): ReadonlyArray<Tool> =>
            command === undefined ? [] : [{ name, command, args, source: file }]
        })
      )
    ]
  })

/** A `command` or `args` value: the JSON-compatible subset of TOML strings and string arrays. */
const decodeTomlValue = Schema.decodeUnknownOption(Schema.parseJson(Schema.Union(Schema.String, Strings)))

const fromToml = (file: string, text: string): ReadonlyArray<Tool> => {
  const found = new Map<string, { command?: string; args?: ReadonlyArray<string> }>()
  let current: string | undefined
  for (const raw of text.split("\n")) {
    const line = raw.trim()
    const header = /^\[mcp_servers\.(?:"([^"]+)"|([A-Za-z0-9_-]+))\]$/.exec(line)
    if (header !== null) {
      current = header[1] ?? header[2]
      if (current !== undefined && !found.has(current)) found.set(current, {})
      continue
    }
    if (line.startsWith("[")) {
      current = undefined
      continue
    }
    const kv = /^(command|args)\s*=\s*(.+)$/.exec(line)
    if (current === undefined || kv === null) continue
    const value = decodeTomlValue(kv[2] ?? "")
    if (Option.isNone(value)) continue
    const entry = found.get(current) ?? {}
    if (kv[1] === "command" && typeof value.value === "string") entry.command = value.value
    if (kv[1] === "args" && isStrings(value.value)) entry.args = value.value
    found.set(current, entry)
  }
  return [...found].flatMap(([name, e]) =>
    e.command === undefined ? [] : [{ name, command: e.command, args: e.args ?? [], source: file }]
  )
}

const toolsOf = (file: string, text: string): ReadonlyArray<Tool> =>
  file.endsWith(".toml") ? fromToml(file, text) : file.endsWith(".json") ? fromJson(file, text) : []

/**
 * The tools declared by `files` (absent or refused files declare none), by name.
 * @since 0.1.0
 * @category constructors
 */
export const readTools = (files: ReadonlyArray<string>): Effect.Effect<ReadonlyMap<string, Tool>, never, FileSystem.FileSystem> =>
  Effect.map(
    Effect.forEach([...files].sort(), (file) =>
      TextFile.read(file, TextFile.kinds.launchFile).pipe(
        Effect.map(Option.match({ onNone: () => [], onSome: (text) => toolsOf(file, text) })),
        Effect.catchAll((refused) => Effect.as(Effect.logWarning(`tools not read: ${refused.message}`), []))
      )),
    (found) => {
      const tools = new Map<string, Tool>()
      for (const tool of found.flat()) tools.set(tool.name, tool)
      return tools
    }
  )
