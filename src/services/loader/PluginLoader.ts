/**
 * The loader (docs/plugin-loader-lifecycle.md, "Lifecycle and layout"): one pass over the plugin
 * roots that adds the enabled plugins to the City's registry.
 *
 * - Roots: bundled first (none unless the host passes one), instance second (default
 *   `<city root>/plugins`). Within a root, folders are imported and added in code-unit name
 *   order, one at a time, so registration order never depends on the file system. What is only
 *   read (manifests, then the entry's stat and the prompt files of the folders that will be
 *   staged) is read first, sixteen folders at a time: a daemon start waits for one round trip to
 *   the file system per batch rather than several per plugin.
 * - The manifest's `provides` is enforced on what initialize contributes, and on a skills reload
 *   (Provides.ts); its settings are decoded against `configSchema` and given as `ctx.config`
 *   (docs/plugin-loader.md).
 * - A name loads from the first root whose copy loads; a copy that fails is skipped (logged,
 *   reported, alerted) and the next root's copy is tried. A folder without `city-plugin.json` is
 *   not a plugin and is passed over without a word.
 * - Per copy: manifest (Discovery) → licence (instance root only, before anything is imported)
 *   → entry on disk → prompt files → import (URL with version and mtime) → Plugin or
 *   `register(ctx)` → `registry.add`, whose initialize stages the contributions and publishes
 *   them only on success (Staging).
 * - Every skip logs `plugin skipped: <name>: <reason>` (a refused manifest: a line per fault) with the annotation
 *   `code=plugin.load_failed` (and `root`, `folder`); the enabled names no root provides are
 *   logged once at the end with `code=plugin.enabled_missing`, sorted.
 *
 * Decisions where the spec is silent:
 * - a name that loaded from the bundled root is not looked at in the instance root (its
 *   instance copy is neither loaded nor reported);
 * - a name already in the registry (added by code) is a skip with PluginAlreadyRegistered;
 * - a folder that is not enabled is not imported; it is listed in the report's `notEnabled`;
 * - an instance root holding plugin folders while the licence set is empty is said once, as a
 *   notice (`code=plugin.none_licensed`), beside each folder's own skip.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Layer from "effect/Layer"
import type * as Stream from "effect/Stream"
import * as path from "node:path"
import { printedTag } from "../../schema/ErrorFamily.ts"
import type { CityClosed } from "../../schema/Errors.ts"
import { PluginLoadError, type SkipReason } from "../../schema/LoaderErrors.ts"
import type { LoadedPlugin, LoadReport, RootKind, SkippedPlugin } from "../../schema/LoadReport.ts"
import { decodeSettings, type PluginSettings } from "../../schema/ConfigField.ts"
import type { Manifest } from "../../schema/Manifest.ts"
import { oneLine } from "../../schema/OneLine.ts"
import type { Contributions } from "../Contributions.ts"
import type { PluginSnapshot } from "../../schema/PluginSnapshot.ts"
import { CityConfig } from "../city/CityConfig.ts"
import * as CityRoot from "../root/CityRoot.ts"
import { StateRoot } from "../root/StateRoot.ts"
import { ExecutionLeases } from "../city/internal/executionLeases.ts"
import { makeCalls } from "../city/CityService.ts"
import { PluginRegistry, type PluginRegistryShape } from "../city/internal/pluginRegistry.ts"
import { make as makePlugin, type Plugin } from "../Plugin.ts"
import { requirements } from "../internal/pluginCallbacks.ts"
import * as Dependencies from "../city/internal/dependencies.ts"
import { PluginContext } from "../PluginContext.ts"
import type { PluginLifecycleContext, PluginLifecycleContextShape } from "../PluginLifecycleContext.ts"
import { Siblings, type SiblingsShape, type SiblingViews } from "../Siblings.ts"
import { discover, type DiscoveredPlugin, listRoot, type PluginRoot, readFolder } from "./Discovery.ts"
import * as HostModules from "../entry/internal/resolveHook.ts"
import * as WorkerPlugin from "../isolation/WorkerPlugin.ts"
import { Workers } from "../isolation/Workers.ts"
import type { IsolationMode } from "../../schema/Isolation.ts"
import { importEntry, importUrl, readPrompts, shapeOf, statEntry } from "../entry/Entry.ts"
import * as LoadAlerts from "./LoadAlerts.ts"
import * as Provides from "./Provides.ts"
import { fromRegister, type SiblingInvoke, withExtras } from "../entry/Staging.ts"

/** How many isolated plugins start at once (their module loading is CPU-bound: a few per core). */
const isolatedStarts = 4

/** How many folders are read at once before a load pass stages them. */
const prefetchConcurrency = 16

/**
 * What the host tells the loader.
 * @since 0.1.0
 * @category models
 */
export interface LoaderOptions {
  /** The bundled root, scanned first and never licence-gated. Default: none. */
  readonly bundledRoot?: string | undefined
  /** The instance root, scanned second. Default: `<city root>/plugins`. */
  readonly instanceRoot?: string | undefined
  /** The names that load; every other folder is passed over. `"all"`: every plugin folder found. */
  readonly enabled: Iterable<string> | "all"
  /** The instance-root names this licence includes; others are refused before import. */
  readonly licensed: Iterable<string>
  /**
   * Each plugin's stored settings (`plugins.json`'s `config`), decoded against its manifest's
   * `configSchema` and given to it as `ctx.config`. Default: none.
   */
  readonly config?: Readonly<Record<string, Readonly<Record<string, unknown>>>> | undefined
  /** The settings file the config comes from, for messages. Default: `<city root>/plugins.json`. */
  readonly settingsFile?: string | undefined
  /**
   * Where plugins run: one mode for every plugin, or a mode per name; it overrides the
   * manifest's `isolation`. Default: a bundled plugin's manifest's, else `"none"`; an
   * instance-root plugin isolated, `"worker"` unless its manifest asks for another isolated mode
   * (docs/plugin-loader.md, "Isolation").
   */
  readonly isolation?: IsolationMode | Readonly<Record<string, IsolationMode>> | undefined
  /** The limits of each isolated plugin (worker or process); a limit not given keeps `WorkerPlugin.defaultLimits`. */
  readonly workerLimits?: Partial<WorkerPlugin.Limits> | undefined
}

/**
 * Builds the `requestReload` a loaded plugin gets, bound to its name.
 * @since 0.1.0
 * @category models
 */
export type RequestReloadFor = (name: string) => PluginLifecycleContextShape["requestReload"]

/**
 * What the loader offers: its roots, discovery, one load pass, the load alert.
 * @since 0.1.0
 * @category models
 */
export interface PluginLoaderShape {
  /** The roots, in scan order. */
  readonly roots: ReadonlyArray<PluginRoot>
  /** Every plugin folder of the roots, parsing manifests only. */
  readonly discover: Effect.Effect<ReadonlyArray<DiscoveredPlugin>, PluginLoadError>
  /** One load pass into the registry. */
  readonly load: (options: {
    readonly generation: number
    readonly requestReload: RequestReloadFor
  }) => Effect.Effect<LoadReport, PluginLoadError | CityClosed>
  /** The current load failures (see LoadAlerts). */
  readonly alerts: Effect.Effect<ReadonlyArray<PluginSnapshot>>
  /** The current load failures, now and after every change. */
  readonly alertChanges: Stream.Stream<ReadonlyArray<PluginSnapshot>>
}

/**
 * The PluginLoader service.
 * @since 0.1.0
 * @category tags
 */
export class PluginLoader extends Context.Tag("effect-city/PluginLoader")<PluginLoader, PluginLoaderShape>() {}

/**
 * The source a loaded plugin's snapshot carries: the root's kind and the folder.
 * @since 0.1.0
 * @category models
 */
export const sourceOf = (root: RootKind, folder: string) => `${root}:${folder}`

/** What one loader works with, fixed when it is built. */
interface Loading {
  readonly options: LoaderOptions
  readonly registry: PluginRegistryShape
  readonly alerts: LoadAlerts.LoadAlertsShape
  readonly roots: ReadonlyArray<PluginRoot>
  /** The names `enabled` lists (none when it is `"all"`). */
  readonly enabledNames: ReadonlySet<string>
  readonly enabled: (name: string) => boolean
  readonly licensed: ReadonlySet<string>
  readonly settingsFile: string
  readonly invoke: SiblingInvoke
  readonly siblings: SiblingsShape
  readonly workers: Workers["Type"]
  readonly workerLimits: WorkerPlugin.Limits
}

/**
 * Builds the loader over the City core's registry, leases and configuration.
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: LoaderOptions) =>
  Effect.gen(function*() {
    const registry = yield* PluginRegistry
    const leases = yield* ExecutionLeases
    const config = yield* CityConfig
    const { root } = yield* StateRoot
    const fs = yield* FileSystem.FileSystem
    // Sibling access at the time of use: every call leases the view current *then*.
    const calls = makeCalls(registry, leases)
    const invoke: SiblingInvoke = (base, plugin, action, input) => calls(base).invoke(plugin, action, input)
    const enabledNames = new Set(options.enabled === "all" ? [] : options.enabled)
    const loading: Loading = {
      options,
      registry,
      alerts: yield* LoadAlerts.make,
      roots: CityRoot.pluginRoots(options.bundledRoot, options.instanceRoot ?? CityRoot.instanceRoot(root)),
      enabledNames,
      enabled: (name) => options.enabled === "all" || enabledNames.has(name),
      licensed: new Set(options.licensed),
      settingsFile: options.settingsFile ?? CityRoot.settingsFile(root),
      invoke,
      siblings: { invoke: (plugin, action, input) => Effect.flatMap(PluginContext, (ctx) => invoke(ctx, plugin, action, input)) },
      workers: yield* Workers,
      workerLimits: { ...WorkerPlugin.defaultLimits, disposeTimeout: config.disposeTimeout, ...options.workerLimits }
    }
    const service: PluginLoaderShape = {
      roots: loading.roots,
      discover: Effect.provideService(discover(loading.roots), FileSystem.FileSystem, fs),
      load: (pass) => Effect.provideService(load(loading, pass), FileSystem.FileSystem, fs),
      alerts: loading.alerts.current,
      alertChanges: loading.alerts.changes
    }
    return service
  })

/** What staging one folder gives: the Plugin, its settings, and what its `provides` dropped (filled by initialize). */
interface Staged {
  readonly plugin: Plugin<unknown>
  readonly settings: PluginSettings
  readonly dropped: Array<Provides.Dropped>
  /** Copies of host-provided packages the folder ships and the host does not use. */
  readonly shadowed: ReadonlyArray<string>
  readonly isolation: IsolationMode
}

/** A folder's files, read before its turn comes (see `readRoot`). */
interface Prefetched {
  readonly mtime: Either.Either<number, PluginLoadError>
  readonly prompt: Either.Either<string | undefined, PluginLoadError>
}

/**
 * Where a plugin runs (docs/plugin-loader.md, "Isolation": containment by default): the
 * operator's choice in plugins.json (for all, or for its name) decides. Else a bundled plugin,
 * shipped with the application, runs where its manifest asks, by default on the host's thread;
 * an instance-root plugin, someone else's code, runs isolated: where its manifest asks if that is
 * isolated too, else in a worker. Its manifest cannot put it on the host's thread: that is the
 * operator's trust to give.
 */
const isolationOf = (options: LoaderOptions, manifest: Manifest, root: RootKind): IsolationMode => {
  const chosen = typeof options.isolation === "string" ? options.isolation : options.isolation?.[manifest.name]
  if (chosen !== undefined) return chosen
  if (root === "bundled") return manifest.isolation ?? "none"
  return manifest.isolation === undefined || manifest.isolation === "none" ? "worker" : manifest.isolation
}

/** The manifest's provides, enforced on what initialize contributes (see Provides.ts): what it drops is kept in `dropped` and logged. */
const enforceProvides = (manifest: Manifest, dropped: Array<Provides.Dropped>) => (contributions: Contributions) =>
  Effect.gen(function*() {
    const enforced = Provides.enforce(manifest.provides, contributions)
    dropped.push(...enforced.dropped)
    for (const d of enforced.dropped) {
      yield* Effect.logWarning(Provides.warning(manifest.name, d)).pipe(
        Effect.annotateLogs({ code: "plugin.contribution_dropped", plugin: manifest.name, kind: d.kind, name: d.name })
      )
    }
    return enforced.contributions
  })

/** Builds the Plugin a folder's entry stands for; nothing is added to the City here. */
const stage = (
  loading: Loading,
  found: DiscoveredPlugin & { readonly _tag: "Valid" },
  files: Prefetched | undefined
): Effect.Effect<Staged, SkipReason, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const { folder, manifest } = found
    if (found.root === "instance" && !loading.licensed.has(manifest.name)) {
      return yield* Effect.fail(new PluginLoadError({ reason: "NotLicensed", plugin: manifest.name }))
    }
    const settings = decodeSettings(manifest.configSchema, loading.options.config?.[manifest.name])
    if ("rule" in settings) {
      return yield* Effect.fail(
        new PluginLoadError({ reason: "PluginConfigInvalid", plugin: manifest.name, file: loading.settingsFile, key: settings.key, rule: settings.rule })
      )
    }
    const file = path.resolve(folder, manifest.entry)
    const mtime = yield* (files?.mtime ?? statEntry(file))
    const prompt = yield* (files?.prompt ?? readPrompts(folder))
    const shadowed = yield* HostModules.shadowedCopies(folder)
    const url = importUrl(file, manifest.version, mtime)
    const extras = { prompt, skills: manifest.skills }
    const dropped: Array<Provides.Dropped> = []
    const enforce = enforceProvides(manifest, dropped)
    const isolation = isolationOf(loading.options, manifest, found.root)
    /** The folder's Plugin, under the manifest's name, version and dependencies, with what staging found. */
    const staged = <E>(initialize: Effect.Effect<Contributions, E, Scope.Scope | PluginLifecycleContext | SiblingViews>): Staged => ({
      plugin: makePlugin({ name: manifest.name, version: manifest.version, requires: manifest.dependsOn, initialize }),
      settings,
      dropped,
      shadowed,
      isolation
    })
    if (isolation !== "none") {
      // The entry is imported in the worker only (docs/plugin-loader.md, "Isolation").
      const isolated = WorkerPlugin.make({
        name: manifest.name,
        version: manifest.version,
        url,
        folder,
        isolation,
        limits: loading.workerLimits,
        invoke: loading.invoke
      })
      return staged(isolated.initialize.pipe(
        Effect.provideService(Workers, loading.workers),
        Effect.map((contributions) => withExtras(contributions, extras)),
        Effect.flatMap(enforce)
      ))
    }
    // Host-provided modules (services/entry/HostModules.ts): the folder is admitted before its entry's import.
    yield* HostModules.admit(folder)
    const module = yield* importEntry(file, url)
    const shape = yield* shapeOf(module, manifest.name, file)
    if (shape._tag === "Register") {
      const plugin = fromRegister({ name: manifest.name, version: manifest.version, register: shape.register, extras, invoke: loading.invoke })
      return staged(Effect.flatMap(plugin.initialize, enforce))
    }
    return staged(shape.plugin.initialize.pipe(
      Effect.map((contributions) => withExtras(contributions, extras)),
      Effect.flatMap(enforce),
      Effect.provideService(Siblings, loading.siblings)
    ))
  })

/** A skills reload is held to the manifest's `provides.skills` too; what it drops is logged. */
const guardedReload = (
  name: string,
  provides: Manifest["provides"],
  request: PluginLifecycleContextShape["requestReload"]
): PluginLifecycleContextShape["requestReload"] =>
(change) => {
  if (change.mode !== "reload") return request(change)
  const enforced = Provides.enforceSkills(provides, change.skills)
  return Effect.zipRight(
    Effect.forEach(enforced.dropped, (d) =>
      Effect.logWarning(Provides.warning(name, d)).pipe(
        Effect.annotateLogs({ code: "plugin.contribution_dropped", plugin: name, kind: d.kind, name: d.name })
      ), { discard: true }),
    request({ mode: "reload", skills: enforced.skills })
  )
}

/** What one load pass gathers as it goes. */
interface Pass {
  readonly requestReload: RequestReloadFor
  readonly loaded: Array<LoadedPlugin>
  readonly skipped: Array<SkippedPlugin>
  readonly notEnabled: Array<{ name: string; root: RootKind; folder: string }>
  readonly notices: Array<string>
  /** The enabled names some root has a folder for. */
  readonly provided: Set<string>
  /** The names loaded: a later root's copy is not looked at. */
  readonly done: Set<string>
  /** The plugins skipped in this load, with their reasons (their dependents say them). */
  readonly skippedNow: Map<string, string>
}

/** One load pass into the registry: each root in turn, then the enabled names no root provides. */
const load = (
  loading: Loading,
  { generation, requestReload }: Parameters<PluginLoaderShape["load"]>[0]
): Effect.Effect<LoadReport, PluginLoadError | CityClosed, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const pass: Pass = {
      requestReload,
      loaded: [],
      skipped: [],
      notEnabled: [],
      notices: [],
      provided: new Set(),
      done: new Set(),
      skippedNow: new Map()
    }
    for (const root of loading.roots) yield* loadRoot(loading, pass, root)
    const missing = [...loading.enabledNames].filter((name) => !pass.provided.has(name)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    if (missing.length > 0) {
      yield* Effect.logWarning(`plugins enabled but provided by no root: ${missing.join(", ")}`).pipe(
        Effect.annotateLogs({ code: "plugin.enabled_missing", missing: missing.join(",") })
      )
    }
    const { loaded, notEnabled, notices, skipped } = pass
    return { generation, loaded, skipped, missing, notEnabled, notices }
  })

/**
 * A root's plugin folders not yet loaded from an earlier root, read up front and many at once
 * (manifests, then the entry's stat and the prompt files of those that will be staged), in the
 * order they load. Dependency order (docs/plugin-loader.md, "Dependencies"): within the root, each
 * plugin after those it depends on (name order where the graph leaves a choice); the plugins of a
 * cycle are named by `cycle`.
 */
const readRoot = (loading: Loading, root: PluginRoot, done: ReadonlySet<string>) =>
  Effect.gen(function*() {
    const names = (yield* listRoot(root)).filter((name) => !done.has(name))
    const manifests = yield* Effect.forEach(names, (name) => readFolder(root, name), { concurrency: prefetchConcurrency })
    const staged = manifests.flatMap((m) =>
      Option.isSome(m) && m.value._tag === "Valid" && loading.enabled(m.value.name) &&
        (root.kind === "bundled" || loading.licensed.has(m.value.name))
        ? [m.value]
        : []
    )
    const prefetched = new Map(
      yield* Effect.forEach(staged, (found) =>
        Effect.map(
          Effect.all({
            mtime: Effect.either(statEntry(path.resolve(found.folder, found.manifest.entry))),
            prompt: Effect.either(readPrompts(found.folder))
          }),
          (files): readonly [string, Prefetched] => [found.folder, files]
        ), { concurrency: prefetchConcurrency })
    )
    const graph = new Map(staged.map((found) => [found.name, requirements(found.manifest.dependsOn)] as const))
    const wave = new Map(Dependencies.initializeWaves(graph).flatMap((names, i) => names.map((n) => [n, i] as const)))
    const ordered = manifests
      .map((read, i) => ({ read, i, wave: Option.isSome(read) ? wave.get(read.value.name) ?? 0 : 0 }))
      .sort((a, b) => a.wave - b.wave || a.i - b.i)
      .flatMap((x) => Option.isSome(x.read) ? [{ found: x.read.value, wave: x.wave }] : [])
    return { ordered, prefetched, cycle: Dependencies.findCycle(graph) }
  })

/**
 * Loads a root's folders in order, so registration order never depends on the file system; an
 * instance root with plugin folders and an empty licence set is said once, as a notice.
 *
 * Isolated plugins start concurrently (docs/plugin-loader.md, "Isolation": a worker's start is
 * mostly its own module loading, which runs in its own thread): within one dependency wave, where
 * no plugin needs another, the isolated ones are added {@link isolatedStarts} at a time, then the
 * others one at a time. Views are in name order whatever the order of adds, and the report lists
 * each plugin in folder order.
 */
const loadRoot = (loading: Loading, pass: Pass, root: PluginRoot) =>
  Effect.gen(function*() {
    const { cycle, ordered, prefetched } = yield* readRoot(loading, root, pass.done)
    const instanceFolders = root.kind === "instance" ? ordered.map(({ found }) => found.name) : []
    const isolated = (found: DiscoveredPlugin) =>
      found._tag === "Valid" && loading.enabled(found.name) && isolationOf(loading.options, found.manifest, found.root) !== "none"
    for (let start = 0; start < ordered.length;) {
      const wave = ordered[start]!.wave
      let end = start
      while (end < ordered.length && ordered[end]!.wave === wave) end++
      const members = ordered.slice(start, end).map(({ found }) => found)
      const load = (found: DiscoveredPlugin) => loadFolder(loading, pass, found, prefetched.get(found.folder), cycle)
      yield* Effect.forEach(members.filter(isolated), load, { concurrency: isolatedStarts, discard: true })
      yield* Effect.forEach(members.filter((found) => !isolated(found)), load, { discard: true })
      start = end
    }
    const rank = new Map(ordered.map(({ found }, i) => [found.folder, i] as const))
    const byFolder = (a: { readonly folder: string }, b: { readonly folder: string }) => (rank.get(a.folder) ?? -1) - (rank.get(b.folder) ?? -1)
    pass.loaded.sort(byFolder)
    pass.skipped.sort(byFolder)
    // The operator's explicit trust: instance-root code on the host's thread, said in one line.
    const trusted = root.kind === "instance" ? pass.loaded.filter((p) => p.root === "instance" && p.isolation === "none").map((p) => p.name) : []
    if (trusted.length > 0) {
      const notice = `on the host's thread, trusted by ${loading.settingsFile}: ${trusted.join(", ")}`
      pass.notices.push(notice)
      yield* Effect.logInfo(notice).pipe(Effect.annotateLogs({ code: "plugin.trusted", plugins: trusted.join(",") }))
    }
    if (root.kind === "instance" && loading.licensed.size === 0 && instanceFolders.length > 0) {
      const notice = `${instanceFolders.length} plugin folder${instanceFolders.length === 1 ? "" : "s"} in the instance root, none licensed`
      pass.notices.push(notice)
      yield* Effect.logWarning(`${notice} (add their names to "licensed" in ${loading.settingsFile})`).pipe(
        Effect.annotateLogs({ code: "plugin.none_licensed", root: root.path })
      )
    }
  })

/** Records a skipped copy: logged, reported, alerted; its dependents later in the pass say it. */
const skip = (
  loading: Loading,
  pass: Pass,
  found: DiscoveredPlugin,
  name: string,
  version: string | undefined,
  error: SkipReason | { readonly _tag: string; readonly message: string }
) =>
  Effect.gen(function*() {
    // A refused manifest's reason is a line per fault (at most 20 and a count), each one line.
    const lines = error instanceof PluginLoadError ? error.lines.map((line) => oneLine(line, 1000)) : [oneLine(error.message, 1000)]
    const reason = lines.join("\n")
    pass.skippedNow.set(name, reason)
    pass.skipped.push({ name, root: found.root, folder: found.folder, kind: printedTag(error) ?? error._tag, reason })
    yield* Effect.forEach(lines, (line) =>
      Effect.logWarning(`plugin skipped: ${name}: ${line}`).pipe(
        Effect.annotateLogs({ code: "plugin.load_failed", root: found.root, folder: found.folder })
      ), { discard: true })
    yield* loading.alerts.fail({ name, source: sourceOf(found.root, found.folder), version, reason })
  })

/** One folder: passed over (not enabled), skipped (saying why), or staged and added to the registry. */
const loadFolder = (
  loading: Loading,
  pass: Pass,
  found: DiscoveredPlugin,
  files: Prefetched | undefined,
  cycle: ReadonlyArray<string> | undefined
): Effect.Effect<void, CityClosed, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    if (!loading.enabled(found.name)) {
      pass.notEnabled.push({ name: found.name, root: found.root, folder: found.folder })
      return
    }
    pass.provided.add(found.name)
    if (found._tag === "Invalid") return yield* skip(loading, pass, found, found.name, undefined, found.error)
    const { manifest } = found
    const skipThis = (error: SkipReason | { readonly _tag: string; readonly message: string }) =>
      skip(loading, pass, found, manifest.name, manifest.version, error)
    if (cycle !== undefined && cycle.includes(manifest.name)) {
      return yield* skipThis({ _tag: "DependencyCycle", message: `its dependencies form a cycle: ${cycle.join(" -> ")}` })
    }
    // A dependency skipped in this load: this one is skipped too, saying why.
    const broken = requirements(manifest.dependsOn).find((r) => !r.optional && pass.skippedNow.has(r.name))
    if (broken !== undefined) {
      return yield* skipThis({ _tag: "DependencyFailed", message: `dependency ${broken.name} failed: ${pass.skippedNow.get(broken.name)!}` })
    }
    const staged = yield* Effect.either(stage(loading, found, files))
    if (staged._tag === "Left") return yield* skipThis(staged.left)
    const { dropped, isolation, plugin, settings, shadowed } = staged.right
    const added = yield* Effect.either(
      loading.registry.addWrapped(plugin, {
        source: sourceOf(found.root, found.folder),
        requestReload: guardedReload(manifest.name, manifest.provides, pass.requestReload(manifest.name)),
        config: { values: settings.values, unset: settings.unset }
      })
    )
    if (added._tag === "Left") {
      const error = added.left
      if (error._tag === "CityClosed") return yield* Effect.fail(error)
      return yield* skipThis(
        error._tag === "RegistryError" && error.reason === "PluginInitializeFailed" && error.cause !== undefined
          ? new PluginLoadError({ reason: "RegistrationFailed", plugin: manifest.name, cause: error.cause })
          : error
      )
    }
    const warnings = [...found.warnings, ...shadowed, ...settings.warnings]
    for (const warning of warnings) {
      yield* Effect.logWarning(`plugin ${manifest.name}: ${warning}`).pipe(
        Effect.annotateLogs({ code: "plugin.load_warning", root: found.root, folder: found.folder })
      )
    }
    pass.done.add(manifest.name)
    pass.loaded.push({
      name: manifest.name,
      version: manifest.version,
      root: found.root,
      folder: found.folder,
      dropped: [...dropped],
      warnings,
      configUnset: settings.unset,
      isolation
    })
    yield* loading.alerts.clear(manifest.name)
  })

/**
 * The loader as a Layer over the City core's services.
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: LoaderOptions) => Layer.effect(PluginLoader, make(options))
