/**
 * The live-application part of a runtime profile in `host.json` (docs/capability-plugin-lifecycle.md,
 * "Writers outside the core" and "Applying surfaces to a live endpoint"):
 * - `launch_files`: the files the runtime reads at launch, as templates over `{cwd}` and
 *   `{privateDir}`; a `*` is allowed in the last path segment only (`{privateDir}/*.json`).
 *   Absent: the spec's table for claude, codex and opencode, none for other runtimes.
 * - `launch_exclude`: file names never fingerprinted even when a pattern matches them (runtime
 *   state and the core's own files). Absent: the spec's exclusions for opencode.
 * - `host`: who hosts the runtime's endpoints: `commands` (default: a runtime outside this
 *   process, driven by `commands`) or `city` (the `city daemon` hosts them as City Sessions).
 * - `commands`: argv commands (absolute, no shell, substituted like provisioning commands, with
 *   `{occasion}` the operation name) through which the core drives endpoints of a runtime that
 *   runs outside this process: `status` prints one of `idle busy asleep stopped foreign`;
 *   `reload`, `retire`, `kill` exit 0 when done.
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { CommandSpec } from "./Declaration.ts"
import { literalChoice } from "./ParseIssue.ts"

const Template = Schema.String.pipe(
  Schema.filter((s) => s.startsWith("{cwd}/") || s.startsWith("{privateDir}/") || s.startsWith("/") ||
    "must start with {cwd}/, {privateDir}/ or be absolute"),
  Schema.filter((s) => !s.slice(0, s.lastIndexOf("/")).includes("*") || "may use * in the last path segment only")
)

/**
 * The argv commands through which the core drives endpoints of a runtime outside the process.
 * @since 0.1.0
 * @category models
 */
export const EndpointCommands = Schema.Struct({
  status: Schema.optional(CommandSpec),
  reload: Schema.optional(CommandSpec),
  retire: Schema.optional(CommandSpec),
  kill: Schema.optional(CommandSpec)
})
/**
 * The argv commands through which the core drives endpoints of a runtime outside the process.
 * @since 0.1.0
 * @category models
 */
export type EndpointCommands = typeof EndpointCommands.Type

/**
 * The fields a runtime profile gains for live application.
 * @since 0.1.0
 * @category models
 */
export const LiveProfileFields = {
  host: Schema.optional(literalChoice("commands", "city")),
  launch_files: Schema.optional(Schema.Array(Template)),
  launch_exclude: Schema.optional(Schema.Array(Schema.String)),
  commands: Schema.optional(EndpointCommands)
}

/**
 * The spec's table of launch-read files.
 * @since 0.1.0
 * @category constants
 */
export const defaultLaunchFiles: Readonly<Record<string, ReadonlyArray<string>>> = {
  claude: ["{cwd}/.mcp.json", "{cwd}/.claude/settings.json"],
  codex: ["{cwd}/.codex/config.toml", "{cwd}/.codex/hooks.json"],
  opencode: ["{privateDir}/*.json", "{privateDir}/*.mjs", "{cwd}/.mcp.json", "{cwd}/.codex/config.toml"]
}

/**
 * Never fingerprinted by default: runtime state and the core's own files (ours: city-plugin.mjs, peer-mcp.json).
 * @since 0.1.0
 * @category constants
 */
export const defaultLaunchExclude: ReadonlyArray<string> = ["state.json", "events.jsonl", "city-plugin.mjs", "peer-mcp.json"]
