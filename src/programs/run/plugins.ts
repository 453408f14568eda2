/**
 * What `city plugins list|discover|reload` do (their parameters are in `../plugins.ts`): the loader's observability (docs/plugin-loader.md) and
 * the restart by generation of a running daemon (docs/plugin-loader-lifecycle.md: "a plugin
 * change is applied by restarting, never by swapping the plugin in place").
 *
 * - `discover` reads the manifests of both roots and prints every plugin folder with its root,
 *   version, whether its manifest is valid, whether it is enabled and licensed (the bundled root is
 *   never gated), and the reason `list` would not load it (an invalid manifest, else no licence).
 *   It imports nothing.
 * - `list`, when a `city daemon` runs on the root, shows the generation it serves, as it
 *   published it (`state/plugins/generation.json`: generation number, start, what loaded from
 *   which root, what was skipped and why); it runs no plugin code then, and `--bundled` and
 *   `plugins.json` are not read (the daemon's own are what it loaded). When no daemon runs (or it
 *   has published no generation yet), it says so in one line and loads the plugin set the way a
 *   City starts it (a throwaway City on the state root: import, initialize, publish), prints the
 *   loaded plugins with root, version and status, the skipped ones with their reasons and the
 *   enabled names no root provides, then closes that City (every plugin is disposed). The plugins'
 *   code runs on this thread then, so the host's watchdog bounds it: blocked past `--freeze-limit`
 *   (default 30 s), the verb ends with exit 1 and one line naming the plugin (docs/plugin-loader.md,
 *   "The host's own thread"); quarantined plugins load in worker threads as in the daemon.
 * - `clear-quarantine <name>` takes a plugin out of the quarantine (watchdog/Quarantine.ts).
 * - `reload [--reason <text>] [--wait]` records a restart request for the daemon
 *   (RestartRequests.ts) and prints `pending`, exit 0: the running daemon carries it out at its
 *   next poll, pausing running Turns first; with no daemon running, the next `city daemon` start
 *   satisfies it (its generation 1 is built from disk). With `--wait` and a daemon running, it
 *   waits up to 60 s for the daemon to apply it and prints `applied: generation N` (exit 0), or
 *   `failed: <reason>` (exit 1) when the restart was refused, or `pending` (exit 1) when the time
 *   ran out or the daemon stopped first; without a daemon `--wait` does not wait.
 *
 * Roots: `--bundled <dir>` (else `bundledRoot` in `$CITY_ROOT/plugins.json`, else none) and the
 * instance root `$CITY_ROOT/plugins`. Enabled and licensed names come from `plugins.json`
 * (schema/LoaderSettings.ts). The verbs exit 0 when they could report, 2 when `plugins.json` is
 * refused or the state root does not exist, 1 when a root or the state cannot be read. Warnings (each skip) go to stderr through the CLI's
 * logger, so `--json` output stays parseable.
 * @since 0.1.0
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { join } from "node:path"
import * as LoaderCore from "../../layers/internal/loaderCore.ts"
import type { StateRootError } from "../../schema/CapabilityErrors.ts"
import type { CityClosed } from "../../schema/Errors.ts"
import type { InvalidFile } from "../../schema/FileErrors.ts"
import type { LoadReport } from "../../schema/LoadReport.ts"
import { manifestFile } from "../../schema/Manifest.ts"
import { PluginLoadError } from "../../schema/LoaderErrors.ts"
import * as StateRoot from "../../services/root/StateRoot.ts"
import { PluginRegistry } from "../../services/city/internal/pluginRegistry.ts"
import * as DaemonLock from "../../services/live/DaemonLock.ts"
import { discover as discoverRoots } from "../../services/loader/Discovery.ts"
import { Generations } from "../../services/loader/Generations.ts"
import { PluginLoader } from "../../services/loader/PluginLoader.ts"
import { Workers } from "../../services/isolation/Workers.ts"
import type { RunningGeneration } from "../../schema/PluginGeneration.ts"
import * as RestartRequests from "../../services/loader/RestartRequests.ts"
import * as Settings from "../../services/loader/Settings.ts"
import * as HostWatchdog from "../../services/watchdog/HostWatchdog.ts"
import * as Quarantine from "../../services/watchdog/Quarantine.ts"
import * as PluginNameRule from "../../schema/PluginName.ts"
import { Invocation, type InvocationShape } from "../invocation.ts"
import * as Arguments from "../arguments.ts"
import * as Opt from "../options.ts"
import { type Classified, exitCodeOf } from "../../schema/ExitPolicy.ts"
import * as Out from "../output.ts"

/** The bundled root of `--bundled`, relative to the invocation's directory. */
export const resolveBundled = (flag: Option.Option<string>, invocation: InvocationShape): string | undefined =>
  Option.getOrUndefined(Option.map(flag, (b) => Opt.resolveRoot(Option.some(b), invocation)))

/** What every `plugins` verb but `reload` is given: `--root`, `--json`, `--bundled`. */
export type LoaderInput = Opt.ReadInput & { readonly bundled: Option.Option<string> }

/**
 * The loader's failures a verb reports: the settings file refused (exit 2), a root, the state or
 * the City (exit 1; a state root that does not exist, exit 2).
 */
export type LoaderVerbError = InvalidFile | PluginLoadError | CityClosed | StateRootError | Opt.UsageError

/** The state root alone, on Node (what the verbs below read and write there). */
export const stateLayer = (root: string) => StateRoot.layer({ root }).pipe(Layer.provide(Layer.merge(NodeFileSystem.layer, NodePath.layer)))

/**
 * The root's running daemon and the generation it published: `generation` is none when no daemon
 * runs, or when the running one has published none yet (it is starting or stopping).
 */
export const runningGeneration = Effect.gen(function*() {
  const daemon = yield* DaemonLock.running
  const generation = Option.isNone(daemon)
    ? Option.none<RunningGeneration>()
    : yield* RestartRequests.published(daemon.value.pid)
  return { pid: Option.map(daemon, (d) => d.pid), generation }
})

/**
 * Runs a verb as `output.runVerb` does for capability errors: one `city: error:` line on stderr,
 * the `{ ok: false, verb, error }` envelope on stdout with `--json`, and the exit code; and as it
 * does when interrupted (`output.reportInterrupted`).
 */
export const runLoaderVerb = <E extends LoaderVerbError | (Classified & { readonly message: string }), R>(
  name: string,
  json: boolean,
  body: Effect.Effect<void, E, R>
) =>
  body.pipe(
    Effect.catchAll((error) =>
      Effect.gen(function*() {
        yield* Effect.forEach(Out.errorLines(error), (line) => Console.error(`city: error: ${Out.oneLine(line, 2000)}`), {
          discard: true
        })
        if (json) yield* Out.printFailure(name, error)
        yield* Out.setExitCode(exitCodeOf(error))
      })
    ),
    Effect.onInterrupt(() => Out.reportInterrupted(name, json))
  )

/** The state root and the loader options of an invocation (relative paths from its directory). */
const setUp = (root: Option.Option<string>, bundledFlag: Option.Option<string>) =>
  Effect.gen(function*() {
    const invocation = yield* Invocation
    const stateRoot = Opt.resolveRoot(root, invocation)
    const bundledRoot = resolveBundled(bundledFlag, invocation)
    return { stateRoot, options: yield* Settings.options(stateRoot, bundledRoot) }
  })

/** `plugins discover` */
export const discover = (o: LoaderInput) =>
  runLoaderVerb(
    "plugins discover",
    o.json,
    Effect.gen(function*() {
      yield* Arguments.existingRoot.pipe(Effect.provide(stateLayer(Opt.resolveRoot(o.root, yield* Invocation))))
      const { options } = yield* setUp(o.root, o.bundled)
      const found = yield* discoverRoots(options.roots)
      const enabled = { has: (name: string) => options.enabled === "all" || new Set(options.enabled).has(name) }
      const licence = new Set(options.licensed)
      const rows = found.map((d) => {
        // The licence gate as the loader applies it: instance root only (docs/plugin-loader.md,
        // "`plugins.json`, the licence gate and the enabled set"); `null` for the bundled root.
        const licensed = d.root === "bundled" ? null : licence.has(d.name)
        return {
          name: d.name,
          root: d.root,
          folder: d.folder,
          version: d._tag === "Valid" ? d.manifest.version : null,
          description: d._tag === "Valid" ? d.manifest.description : null,
          status: d._tag === "Valid" ? "valid" as const : "invalid" as const,
          enabled: enabled.has(d.name),
          licensed,
          // Why `list` would not load it: the manifest's reason, else the licence's (its skip's words).
          reason: d._tag === "Invalid"
            ? d.error.message
            : licensed === false
            ? new PluginLoadError({ reason: "NotLicensed", plugin: d.name }).message
            : null
        }
      })
      if (o.json) {
        return yield* Out.printDocument("plugins discover", {
          ok: true,
          roots: options.roots,
          plugins: rows,
          // Each issue of each refused manifest (docs/cli.md, "`--json` fields").
          invalid: found.flatMap((d) =>
            d._tag === "Valid" ? [] : (d.error.issues ?? []).map((i) => ({
              kind: d.error.name,
              file: d.error.file ?? "",
              field: i.field,
              rule: i.rule,
              message: d.error.message
            }))
          )
        })
      }
      yield* Console.log(Out.safe`roots: ${options.roots.map((r) => `${r.kind} ${r.path}`).join(", ")}`)
      yield* Console.log(
        rows.length === 0
          ? "no plugin folders"
          : Out.table(
            ["NAME", "ROOT", "VERSION", "MANIFEST", "ENABLED", "LICENSED", "REASON"],
            rows.flatMap((r) => {
              // A refused manifest's reason is a line per fault (ManifestInvalid).
              const [first = "", ...more] = r.status === "invalid"
                ? (r.reason ?? "").split("\n")
                : [r.licensed === false ? `unlicensed: ${r.reason}` : r.reason ?? ""]
              return [
                [
                  r.name,
                  r.root,
                  r.version ?? "",
                  r.status,
                  r.enabled ? "yes" : "no",
                  r.licensed === null ? "not gated" : r.licensed ? "yes" : "no",
                  first
                ],
                // A refused manifest's other faults, a row each under its plugin.
                ...more.map((line) => [r.name, "", "", "", "", "", line])
              ]
            })
          )
      )
    })
  )

/**
 * A loaded plugin as listed: its status, and for a worker-isolated one its worker's heap (known in
 * the City this verb runs; a daemon's published generation carries none: `city status --url` and
 * the status page show the daemon's, live).
 */
type Listed = LoadReport["loaded"][number] & { readonly status: string; readonly heapUsed?: number | undefined }

/** A heap in MiB, one decimal; empty when unknown or not isolated. */
const heapText = (bytes: number | undefined) => (bytes === undefined ? "" : `${(bytes / 2 ** 20).toFixed(1)} MiB`)

/** A skip's reason as rows of a table: a refused manifest's reason is a line per fault (ManifestInvalid). */
const reasonLines = (skip: { readonly kind: string; readonly reason: string }): ReadonlyArray<string> =>
  skip.kind === "ManifestInvalid" ? skip.reason.split("\n") : [skip.reason]

/**
 * The tables of a generation's report: loaded (with what provides dropped), skipped, not enabled,
 * missing, notices. `heaps`: the City is this verb's own, whose workers' heaps it knows; a daemon's
 * are on its status page, so the column is left out and the page named.
 */
const printReport = (report: LoadReport, loaded: ReadonlyArray<Listed>, heaps: boolean) =>
  Effect.gen(function*() {
    yield* Console.log(
      loaded.length === 0
        ? "no plugins loaded"
        : heaps
        ? Out.table(
          ["NAME", "ROOT", "VERSION", "STATUS", "ISOLATION", "HEAP", "FOLDER"],
          loaded.map((p) => [p.name, p.root, p.version, p.status, p.isolation, heapText(p.heapUsed), p.folder])
        )
        : Out.table(
          ["NAME", "ROOT", "VERSION", "STATUS", "ISOLATION", "FOLDER"],
          loaded.map((p) => [p.name, p.root, p.version, p.status, p.isolation, p.folder])
        )
    )
    if (!heaps && loaded.some((p) => p.isolation !== "none")) {
      yield* Console.log("\nthe isolated plugins' heaps, live: the daemon's status page (city status --url)")
    }
    const dropped = report.loaded.flatMap((p) => p.dropped.map((d) => [p.name, d.kind, d.name, `provides.${d.key}`]))
    if (dropped.length > 0) {
      yield* Console.log("")
      yield* Console.log(Out.table(["DROPPED FROM", "KIND", "NAME", "NOT COVERED BY"], dropped))
    }
    if (report.skipped.length > 0) {
      yield* Console.log("")
      yield* Console.log(
        Out.table(
          ["SKIPPED", "ROOT", "REASON"],
          report.skipped.flatMap((s) =>
            s.kind === "NotLicensed"
              ? [[s.name, s.root, "unlicensed: not included in this licence"]]
              : reasonLines(s).map((line) => [s.name, s.root, line])
          )
        )
      )
    }
    if (report.notEnabled.length > 0) {
      yield* Console.log(Out.safe`\nnot enabled (not in plugins.json's "enabled"): ${report.notEnabled.map((p) => `${p.name} (${p.root})`).join(", ")}`)
    }
    if (report.missing.length > 0) yield* Console.log(Out.safe`\nenabled but provided by no root: ${report.missing.join(", ")}`)
    for (const notice of report.notices) yield* Console.log(Out.safe`\n${notice}`)
  })

/**
 * The plugin set of a `plugins list` document in the glossary's words; `invalid` holds the
 * folders skipped for their manifest (the report keeps its reason, not its field).
 */
const setJson = (report: LoadReport, loaded: ReadonlyArray<Listed>) => ({
  loaded: loaded.map((p) => ({
    name: p.name,
    version: p.version,
    root: p.root,
    folder: p.folder,
    status: p.status,
    isolation: p.isolation,
    heap_used_bytes: p.heapUsed ?? null,
    dropped: p.dropped,
    warnings: p.warnings,
    config_unset: p.configUnset
  })),
  skipped: report.skipped,
  not_enabled: report.notEnabled,
  missing: report.missing,
  notices: report.notices,
  invalid: report.skipped.filter((s) => s.kind === "ManifestInvalid").map((s) => ({
    kind: s.kind,
    file: join(s.folder, manifestFile),
    field: "",
    rule: s.reason,
    message: s.reason
  }))
})

/** `city plugins list` when a daemon serves a generation: what it published. */
const listRunning = (json: boolean, pid: number, running: RunningGeneration) =>
  Effect.gen(function*() {
    const { report } = running
    // Each plugin's status as the daemon last published it (ready unless it says otherwise).
    const unwell = new Map((running.unwell ?? []).map((p) => [p.name, p.status] as const))
    const loaded = report.loaded.map((p) => ({ ...p, status: unwell.get(p.name) ?? "ready" }))
    if (json) {
      return yield* Out.printDocument("plugins list", {
        ok: true,
        source: "daemon",
        daemon: { running: true, pid },
        generation: running.generation,
        started_at: running.started_at,
        ...setJson(report, loaded),
        ...(report.disposeFailures === undefined ? {} : { dispose_failures: report.disposeFailures })
      })
    }
    yield* Console.log(Out.safe`generation ${running.generation} of the city daemon (pid ${pid}), serving since ${running.started_at}`)
    yield* printReport(report, loaded, false)
  })

/**
 * The plugin set loaded the way a City starts it, in a throwaway City on the state root that the
 * caller's Scope closes (every plugin disposed): what `plugins list` and `plugins call` run when no
 * daemon runs. The plugins' code runs on this thread, so the watchdog bounds a spin in it (blocked
 * past `--freeze-limit`, the verb ends with exit 1 and one line naming the plugin; docs/plugin-loader.md,
 * "The host's own thread"); quarantined plugins load in worker threads, as in the daemon.
 */
export const throwawayCity = (
  verb: string,
  o: { readonly root: Option.Option<string>; readonly bundled: Option.Option<string>; readonly freezeLimit: number }
) =>
  Effect.gen(function*() {
    const stateRoot = Opt.resolveRoot(o.root, yield* Invocation)
    const freezeLimit = yield* Opt.checkFreezeLimit(o.freezeLimit)
    const { options: settings } = yield* setUp(o.root, o.bundled)
    const quarantine = yield* Quarantine.quarantined.pipe(Effect.provide(stateLayer(stateRoot)))
    const options = { ...settings, isolation: yield* Quarantine.isolation(settings, quarantine) }
    yield* HostWatchdog.start({
      limit: Duration.seconds(freezeLimit),
      // One line, at the limit: a verb's error is its last word.
      report: Duration.seconds(freezeLimit),
      exitCode: 1,
      who: `city: error: ${verb}`,
      ending: "ended (exit 1)",
      format: "plain",
      roots: settings.roots
    })
    return yield* Layer.build(LoaderCore.withCore({ root: stateRoot }, options))
  })

/** `plugins list` */
export const list = (o: LoaderInput & { readonly freezeLimit: number }) =>
  runLoaderVerb(
    "plugins list",
    o.json,
    Effect.scoped(Effect.gen(function*() {
      const stateRoot = Opt.resolveRoot(o.root, yield* Invocation)
      const daemon = yield* Effect.zipRight(Arguments.existingRoot, runningGeneration).pipe(Effect.provide(stateLayer(stateRoot)))
      if (Option.isSome(daemon.pid) && Option.isSome(daemon.generation)) {
        return yield* listRunning(o.json, daemon.pid.value, daemon.generation.value)
      }
      if (!o.json) {
        yield* Console.log(
          Option.isSome(daemon.pid)
            ? `the city daemon (pid ${daemon.pid.value}) has published no plugin generation yet: loading a throwaway City instead`
            : "no city daemon runs on this root: loading the plugin set in a throwaway City (closed again at the end)"
        )
      }
      const context = yield* throwawayCity("plugins list", o)
      const report = yield* Context.get(context, Generations).current
      const snapshots = yield* Context.get(context, PluginRegistry).snapshots
      const alerts = yield* Context.get(context, PluginLoader).alerts
      const statusOf = (name: string) => snapshots.find((s) => s.name === name)?.status ?? "gone"
      const heaps = yield* Context.get(context, Workers).heaps
      const heapOf = (name: string) =>
        Option.getOrUndefined(Option.map(Option.flatten(Option.fromNullable(heaps.find((h) => h.plugin === name)?.heap)), (h) => h.used))
      const loaded = report.loaded.map((p) => ({ ...p, status: statusOf(p.name), heapUsed: heapOf(p.name) }))
      if (o.json) {
        return yield* Out.printDocument("plugins list", {
          ok: true,
          source: "throwaway",
          daemon: { running: Option.isSome(daemon.pid), pid: Option.getOrNull(daemon.pid) },
          generation: report.generation,
          ...setJson(report, loaded),
          alerts
        })
      }
      yield* printReport(report, loaded, true)
    }))
  )

/**
 * `plugins clear-quarantine <name>`: takes a plugin out of the quarantine (watchdog/Quarantine.ts);
 * the next `city daemon` start loads it where `plugins.json` and its manifest say. Exit 0 whether
 * or not it was quarantined (it says which); a name that breaks the plugin-name rule is refused
 * (exit 2).
 */
export const clearQuarantine = (o: Opt.ReadInput & { readonly name: string }) =>
  runLoaderVerb(
    "plugins clear-quarantine",
    o.json,
    Effect.gen(function*() {
      const invalid = PluginNameRule.check(o.name)
      if (invalid !== undefined) return yield* new Opt.UsageError({ message: invalid.message })
      const stateRoot = Opt.resolveRoot(o.root, yield* Invocation)
      const cleared = yield* Effect.zipRight(Arguments.existingRoot, Quarantine.clear(o.name)).pipe(
        Effect.provide(stateLayer(stateRoot))
      )
      if (o.json) return yield* Out.printDocument("plugins clear-quarantine", { ok: true, plugin: o.name, cleared })
      yield* Console.log(
        cleared
          ? Out.safe`${o.name}: out of quarantine; the next city daemon start loads it where plugins.json and its manifest say`
          : Out.safe`${o.name}: not quarantined`
      )
    })
  )

/** How long `reload --wait` waits, and how often it looks. */
const waitFor = Duration.seconds(60)
const waitEvery = Duration.millis(100)

type Waited =
  | { readonly _tag: "Applied"; readonly generation: number | null }
  | { readonly _tag: "Failed"; readonly reason: string }
  | { readonly _tag: "Pending"; readonly why: string }

/** `city plugins reload`: records the request, then waits for it with `--wait` (see the module comment). */
const requestRestart = (o: { readonly json: boolean; readonly reason: string; readonly wait: boolean }) =>
  Effect.gen(function*() {
    const requests = yield* RestartRequests.RestartRequests
    const record = yield* requests.request(o.reason)
    const target = record.requested
    const daemon = yield* DaemonLock.running
    const pid = Option.getOrNull(Option.map(daemon, (d) => d.pid))
    const sentence = pid === null
      ? "no city daemon is running on this root: the request is recorded, and the next `city daemon` start builds its generation from disk"
      : `the city daemon (pid ${pid}) restarts at its next poll, pausing running Turns first`

    const awaitApplied = Effect.gen(function*() {
      const deadline = Date.now() + Duration.toMillis(waitFor)
      for (;;) {
        const now = Option.getOrUndefined(yield* requests.get)
        if (now !== undefined && now.applied >= target) {
          const published = pid === null ? Option.none() : yield* RestartRequests.published(pid)
          return { _tag: "Applied", generation: Option.getOrNull(Option.map(published, (g) => g.generation)) } satisfies Waited
        }
        if (now?.last_error !== undefined && now.last_error.target >= target) {
          return { _tag: "Failed", reason: now.last_error.reason } satisfies Waited
        }
        if (Option.isNone(yield* DaemonLock.running)) {
          return { _tag: "Pending", why: "the city daemon stopped before applying it; the next start does" } satisfies Waited
        }
        if (Date.now() > deadline) {
          return { _tag: "Pending", why: `not applied within ${Duration.format(waitFor)}` } satisfies Waited
        }
        yield* Effect.sleep(waitEvery)
      }
    })
    const waited: Waited = o.wait && pid !== null ? yield* awaitApplied : { _tag: "Pending", why: sentence }
    const status = waited._tag === "Applied" ? "applied" : waited._tag === "Failed" ? "failed" : "pending"
    const daemonJson = { running: pid !== null, pid }
    if (o.json) {
      yield* Out.printDocument("plugins reload", {
        ok: waited._tag !== "Failed",
        status,
        requested: target,
        ...(waited._tag === "Applied" ? { generation: waited.generation } : {}),
        ...(waited._tag === "Failed" ? { reason: waited.reason } : {}),
        daemon: daemonJson
      })
    } else if (waited._tag === "Applied") {
      yield* Console.log(`applied: generation ${waited.generation ?? "?"}`)
    } else if (waited._tag === "Failed") {
      yield* Console.log(Out.safe`failed: ${waited.reason}`)
    } else {
      yield* Console.log("pending")
      yield* Console.log(waited.why)
    }
    // Waiting that ended without the restart: exit 1; a request recorded without waiting: 0.
    yield* Out.setExitCode(waited._tag === "Failed" || (o.wait && pid !== null && waited._tag === "Pending") ? 1 : 0)
  })

/** `plugins reload [--reason <text>] [--wait]` */
export const reload = (o: Opt.ReadInput & { readonly reason: string; readonly wait: boolean }) =>
  runLoaderVerb(
    "plugins reload",
    o.json,
    Effect.flatMap(Invocation, (invocation) =>
      requestRestart(o).pipe(
        Effect.provide(Layer.provideMerge(RestartRequests.layer, stateLayer(Opt.resolveRoot(o.root, invocation))))
      ))
  )
