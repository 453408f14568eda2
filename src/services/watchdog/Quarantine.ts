/**
 * The freeze record and the quarantine (docs/plugin-loader.md, "The host's own thread"): a daemon
 * whose thread a plugin blocked past the freeze limit ends itself, and "quarantines it on the next
 * start" (docs/design.md, "Containment by default").
 *
 * - The freeze record, `$CITY_ROOT/daemon.freeze.json` beside `daemon.pid`, is written by the
 *   daemon's watchdog thread (HostWatchdog.ts) while its host thread is blocked, and removed when
 *   the thread is free again; `ended: true` when the watchdog ended the process. `city status`
 *   reads it: the running daemon it names is `frozen`.
 * - At its start the daemon takes over a record a previous daemon left (it died frozen: ended at
 *   the limit, or killed meanwhile): the plugin it names joins `state/plugins/quarantine.json`, and
 *   the record goes.
 * - A quarantined plugin loads with isolation `"worker"` (LoaderOptions.isolation, whatever
 *   `plugins.json` or its manifest say), one log line at every start saying so, until `city
 *   plugins clear-quarantine <name>`. A plugin that cannot run in a worker (one that provides
 *   services to its siblings) is then skipped with the loader's reason.
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { StateRootError } from "../../schema/CapabilityErrors.ts"
import type { IsolationMode } from "../../schema/Isolation.ts"
import { StateRoot } from "../root/StateRoot.ts"
import { layout } from "../root/CityRoot.ts"
import { discover } from "../loader/Discovery.ts"
import type { LoaderOptions } from "../loader/PluginLoader.ts"
import type { PluginRoot } from "../loader/Discovery.ts"

/**
 * What the watchdog thread writes while the host's thread is blocked.
 * @since 0.1.0
 * @category models
 */
export const FreezeRecord = Schema.Struct({
  schema: Schema.Literal(1),
  /** The process whose thread is blocked. */
  pid: Schema.Int,
  /** The plugin whose code was on the stack, if any. */
  plugin: Schema.NullOr(Schema.String),
  /** `<url>:<line> in <function>`; null when no frame could be taken. */
  location: Schema.NullOr(Schema.String),
  /** When the thread was last seen free (ISO). */
  since: Schema.String,
  blocked_ms: Schema.Number,
  limit_ms: Schema.Number,
  /** The watchdog ended the process at the limit. */
  ended: Schema.Boolean,
  /** What the plugin did, when it did not block the thread (HostFaults.ts: `threw Error: boom`). */
  reason: Schema.optionalWith(Schema.String, { exact: true })
})

/**
 * @since 0.1.0
 * @category models
 */
export type FreezeRecord = typeof FreezeRecord.Type

const QuarantinedPlugin = Schema.Struct({
  name: Schema.String,
  location: Schema.NullOr(Schema.String),
  blocked_ms: Schema.Number,
  /** What it did, when it did not block the thread. */
  reason: Schema.optionalWith(Schema.String, { exact: true }),
  /** When it was quarantined (ISO). */
  at: Schema.String
})

/**
 * A quarantined plugin.
 * @since 0.1.0
 * @category models
 */
export type QuarantinedPlugin = typeof QuarantinedPlugin.Type

const QuarantineFile = Schema.Struct({ schema: Schema.Literal(1), plugins: Schema.Array(QuarantinedPlugin) })

const decodeFreeze = Schema.decodeUnknownEither(Schema.parseJson(FreezeRecord))
const decodeQuarantine = Schema.decodeUnknownEither(Schema.parseJson(QuarantineFile))

/**
 * The freeze record, if there is one that reads (a file that does not is no freeze).
 * @since 0.1.0
 * @category constructors
 */
export const freezeRecord: Effect.Effect<Option.Option<FreezeRecord>, StateRootError, StateRoot> = Effect.flatMap(
  StateRoot,
  (state) => Effect.map(state.readText(layout.daemonFreeze), Option.flatMap((text) => Either.getRight(decodeFreeze(text))))
)

/**
 * The quarantined plugins (none when the file is absent or does not read).
 * @since 0.1.0
 * @category constructors
 */
export const quarantined: Effect.Effect<ReadonlyArray<QuarantinedPlugin>, StateRootError, StateRoot> = Effect.flatMap(
  StateRoot,
  (state) =>
    Effect.map(state.readText(layout.quarantine), (text) =>
      Option.match(Option.flatMap(text, (t) => Either.getRight(decodeQuarantine(t))), {
        onNone: () => [],
        onSome: (file) => file.plugins
      }))
)

const write = (plugins: ReadonlyArray<QuarantinedPlugin>) =>
  Effect.flatMap(StateRoot, (state) =>
    plugins.length === 0
      ? state.remove(layout.quarantine)
      : state.writeJson(layout.quarantine, { schema: 1, plugins }))

/** `4 s`, `12 s`: a freeze's length for a log line. */
const seconds = (ms: number) => `${Math.floor(ms / 1000)} s`

/**
 * At a daemon's start: takes over the freeze record a previous daemon left (its plugin joins the
 * quarantine), then gives the quarantine, each entry logged once.
 * @since 0.1.0
 * @category constructors
 */
export const atStart: Effect.Effect<ReadonlyArray<QuarantinedPlugin>, StateRootError, StateRoot> = Effect.gen(function*() {
  const state = yield* StateRoot
  const left = yield* freezeRecord
  let plugins = yield* quarantined
  if (Option.isSome(left) && left.value.pid !== process.pid) {
    const record = left.value
    if (record.plugin !== null) {
      const entry: QuarantinedPlugin = {
        name: record.plugin,
        location: record.location,
        blocked_ms: record.blocked_ms,
        ...(record.reason === undefined ? {} : { reason: record.reason }),
        at: DateTime.formatIso(yield* DateTime.now)
      }
      plugins = [...plugins.filter((p) => p.name !== entry.name), entry]
      yield* write(plugins)
    }
    yield* state.remove(layout.daemonFreeze)
  }
  for (const p of plugins) {
    yield* Effect.logWarning(
      `plugin ${p.name} quarantined: it ${p.reason ?? `froze the host's thread for ${seconds(p.blocked_ms)}`}` +
        (p.location === null ? "" : ` at ${p.location}`) +
        `; it runs in a worker thread of its own until \`city plugins clear-quarantine ${p.name}\``
    ).pipe(Effect.annotateLogs({ plugin: p.name, code: "plugin.quarantined" }))
  }
  return plugins
})

/**
 * Takes `name` out of the quarantine; whether it was in it.
 * @since 0.1.0
 * @category constructors
 */
export const clear = (name: string): Effect.Effect<boolean, StateRootError, StateRoot> =>
  Effect.gen(function*() {
    const plugins = yield* quarantined
    if (!plugins.some((p) => p.name === name)) return false
    yield* write(plugins.filter((p) => p.name !== name))
    return true
  })

/**
 * The loader's isolation with the quarantined plugins in worker threads. One mode for every
 * plugin (`"none"`) becomes a mode per name for every plugin folder found, so the others keep it.
 * @since 0.1.0
 * @category utils
 */
export const isolation = (
  options: LoaderOptions & { readonly roots: ReadonlyArray<PluginRoot> },
  plugins: ReadonlyArray<QuarantinedPlugin>
): Effect.Effect<LoaderOptions["isolation"], never, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const current = options.isolation
    if (plugins.length === 0 || current === "worker") return current
    const worker = Object.fromEntries(plugins.map((p): [string, IsolationMode] => [p.name, "worker"]))
    if (current === undefined) return worker
    if (typeof current === "string") {
      const found = yield* Effect.orElseSucceed(discover(options.roots), () => [])
      return { ...Object.fromEntries(found.map((p): [string, IsolationMode] => [p.name, current])), ...worker }
    }
    return { ...current, ...worker }
  })
