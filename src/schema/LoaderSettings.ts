/**
 * The loader's settings on a state root, `$CITY_ROOT/plugins.json`, read by `city daemon` and the
 * `city plugins` verbs (a host application passes its own LoaderOptions instead).
 *
 * ```json
 * {
 *   "bundledRoot": "/opt/app/plugins",
 *   "enabled": ["notes", "clock"],
 *   "licensed": ["notes"],
 *   "config": { "notes": { "folder": "~/notes", "maxItems": 50 } }
 * }
 * ```
 * Every key is optional; any other key is refused, naming it (with the known key it most
 * resembles), so a misspelt `licenced` never opens the gate. Decisions (docs/plugin-loader.md,
 * "plugins.json"):
 * - `licensed`: the instance-root plugins this licence includes. The gate is closed by default:
 *   without the key, or without the file, no instance-root plugin is licensed (the bundled root
 *   is never gated);
 * - `enabled`: the names that load; without it every plugin folder found is enabled (and an
 *   instance-root one still needs the licence);
 * - `config`: each plugin's settings, decoded against its manifest's `configSchema`
 *   (schema/ConfigField.ts) and given to it as `ctx.config`;
 * - `isolation`: `"worker"`, `"process"` or `"none"` for every plugin, or `{ "<name>": "worker" |
 *   "process" | "none" }` per
 *   plugin; it overrides the manifest's `isolation`; without either a plugin runs in the host's
 *   thread (docs/plugin-loader.md, "Isolation", says why);
 * - `workerLimits`: `{ "heapMb" }` of each isolated plugin, in a worker or a process;
 * - `bundledRoot` is overridden by `--bundled`.
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { IsolationMode } from "./Isolation.ts"
import { choiceRule } from "./ParseIssue.ts"

/**
 * Where plugins run: one mode for every plugin, or a mode per plugin name (a name not listed
 * keeps its manifest's choice, else the default, `"none"`).
 * @since 0.1.0
 * @category schemas
 */
export const Isolation = Schema.Union(IsolationMode, Schema.Record({ key: Schema.String, value: IsolationMode })).annotations({
  // One issue for a value that is neither (each member's own would print one each); an object's
  // faults are its entries' own, `isolation.<name>`.
  message: (issue) => ({
    message: choiceRule(IsolationMode.literals, issue.actual, ", or an object of plugin names to one of them"),
    override: typeof issue.actual !== "object" || issue.actual === null || Array.isArray(issue.actual)
  })
})

/**
 * The limits of each isolated plugin (in a worker or a process); a limit not given keeps its default.
 * @since 0.1.0
 * @category schemas
 */
export const WorkerLimits = Schema.Struct({
  heapMb: Schema.optionalWith(Schema.Int.pipe(Schema.between(16, 65536)), { exact: true })
})

/**
 * @since 0.1.0
 * @category models
 */
export const LoaderSettings = Schema.Struct({
  bundledRoot: Schema.optionalWith(Schema.String, { exact: true }),
  enabled: Schema.optionalWith(Schema.Array(Schema.String), { exact: true }),
  licensed: Schema.optionalWith(Schema.Array(Schema.String), { exact: true }),
  config: Schema.optionalWith(
    Schema.Record({ key: Schema.String, value: Schema.Record({ key: Schema.String, value: Schema.Unknown }) }),
    { exact: true }
  ),
  isolation: Schema.optionalWith(Isolation, { exact: true }),
  workerLimits: Schema.optionalWith(WorkerLimits, { exact: true })
}).annotations({ identifier: "LoaderSettings" })

/**
 * @since 0.1.0
 * @category models
 */
export type LoaderSettings = typeof LoaderSettings.Type

/**
 * The keys `plugins.json` may hold.
 * @since 0.1.0
 * @category models
 */
export const settingsKeys: ReadonlyArray<string> = Object.keys(LoaderSettings.fields)
