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
import * as TextFile from "../files/TextFile.ts"

/**
 * One callable tool: an argv (no shell) and the file that declared it.
 * @since 0.1.0
 * @category model
 */
export interface Tool {
  readonly name: string
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly source: string
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)
const isStrings = (u: unknown): u is ReadonlyArray<string> => Array.isArray(u) && u.every((x) => typeof x === "string")

const fromJson = (file: string, text: string): ReadonlyArray<Tool> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return []
  }
  if (!isRecord(json)) return []
  const tools: Array<Tool> = []
  const servers = json["mcpServers"]
  if (isRecord(servers)) {
    for (const [name, entry] of Object.entries(servers)) {
      if (!isRecord(entry) || typeof entry["command"] !== "string") continue
      tools.push({ name, command: entry["command"], args: isStrings(entry["args"]) ? entry["args"] : [], source: file })
    }
  }
  const mcp = json["mcp"]
  if (isRecord(mcp)) {
    for (const [name, entry] of Object.entries(mcp)) {
      if (!isRecord(entry) || !isStrings(entry["command"])) continue
      const [command, ...args] = entry["command"]
      if (command !== undefined) tools.push({ name, command, args, source: file })
    }
  }
  return tools
}

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
    let value: unknown
    try {
      value = JSON.parse(kv[2] ?? "")
    } catch {
      continue
    }
    const entry = found.get(current) ?? {}
    if (kv[1] === "command" && typeof value === "string") entry.command = value
    if (kv[1] === "args" && isStrings(value)) entry.args = value
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
