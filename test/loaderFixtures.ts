/**
 * Fixtures for the loader tests: real plugin folders written into temp roots (real ESM `.mjs`
 * entries), a City core with the loader on top, and a logger that records messages with their
 * annotations.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as fs from "node:fs"
import * as path from "node:path"
import type * as City from "../src/City.ts"
import * as LoaderCore from "../src/layers/internal/loaderCore.ts"
import { CityConfig } from "../src/services/city/CityConfig.ts"
import { makeCalls } from "../src/services/city/CityService.ts"
import { ExecutionLeases } from "../src/services/city/internal/executionLeases.ts"
import { LeaseTable } from "../src/services/city/internal/leaseTable.ts"
import { PluginRegistry } from "../src/services/city/internal/pluginRegistry.ts"
import { Sessions } from "../src/services/city/Sessions.ts"
import { Workspaces } from "../src/services/city/Workspaces.ts"
import { Generations } from "../src/services/loader/Generations.ts"
import { PluginLoader, type LoaderOptions } from "../src/services/loader/PluginLoader.ts"

/** A manifest for `name` with the usual fields; `extra` overrides or adds. */
export const manifest = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  version: "1.0.0",
  apiVersion: "1",
  description: `the ${name} plugin`,
  entry: "index.mjs",
  ...extra
})

export interface FolderSpec {
  /** The manifest: an object (written as JSON), a raw string, or `null` for no manifest at all. */
  readonly manifest: unknown
  /** Other files, relative to the folder (e.g. `index.mjs`, `prompt/a.md`). */
  readonly files?: Record<string, string>
}

/** Writes a plugin folder `root/folder` (synchronously: setup, not the subject). */
export const writePlugin = (root: string, folder: string, spec: FolderSpec) => {
  const dir = path.join(root, folder)
  fs.mkdirSync(dir, { recursive: true })
  if (spec.manifest !== null) {
    const text = typeof spec.manifest === "string" ? spec.manifest : JSON.stringify(spec.manifest, null, 2)
    fs.writeFileSync(path.join(dir, "city-plugin.json"), text)
  }
  for (const [file, content] of Object.entries(spec.files ?? {})) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true })
    fs.writeFileSync(path.join(dir, file), content)
  }
  return dir
}

/** Top-level code that records that the module ran, under `key` (see {@link runs}). */
export const marker = (key: string) => `(globalThis.__cityLoaderRuns ??= []).push(${JSON.stringify(key)})\n`

/** Every marker recorded so far in this process. */
export const runs = (): ReadonlyArray<string> => {
  const recorded: unknown = Reflect.get(globalThis, "__cityLoaderRuns")
  return Array.isArray(recorded) ? recorded.map(String) : []
}

/** Records `entry` beside the markers (from test code). */
export const record = (entry: string) => {
  const recorded: unknown = Reflect.get(globalThis, "__cityLoaderRuns")
  if (Array.isArray(recorded)) recorded.push(entry)
  else Reflect.set(globalThis, "__cityLoaderRuns", [entry])
}

/** A unique prefix per test, so markers of different tests never mix. */
let counter = 0
export const unique = (label: string) => `${label}-${process.pid}-${++counter}`

/** A `register(ctx)` entry whose body is `body` (it runs inside `async function register(ctx)`). */
export const registerEntry = (key: string, body = "") =>
  `${marker(key)}export async function register(ctx) {\n${body}\n}\n`

/** An Effect-style entry importing `effect-city/plugin` as a real plugin does. */
export const effectEntry = (key: string, name: string, body = "return {}") =>
  [
    `import * as Effect from "effect/Effect"`,
    `import { Plugin } from "effect-city/plugin"`,
    marker(key),
    `export default Plugin.make({ name: ${JSON.stringify(name)}, initialize: Effect.gen(function*() { ${body} }) })`,
    ""
  ].join("\n")

export interface LogLine {
  readonly level: string
  readonly message: string
  readonly annotations: Record<string, unknown>
}

/** Runs `body` with a logger that records every line (and prints nothing). */
export const withLogs = <A, E, R>(body: (logs: Array<LogLine>) => Effect.Effect<A, E, R>) => {
  const logs: Array<LogLine> = []
  const logger = Logger.make(({ annotations, logLevel, message }) => {
    const text = Array.isArray(message) ? message.map(String).join(" ") : String(message)
    logs.push({ level: logLevel.label, message: text, annotations: Object.fromEntries(HashMap.toEntries(annotations)) })
  })
  return Effect.provide(body(logs), Logger.replace(Logger.defaultLogger, logger))
}

/** Temp roots: the City root (instance root `root/plugins`) and a bundled root. */
export const makeRoots = Effect.gen(function*() {
  const fileSystem = yield* FileSystem.FileSystem
  const root = yield* fileSystem.makeTempDirectoryScoped({ prefix: "city-loader-" })
  const bundled = path.join(root, "bundled")
  const instance = path.join(root, "plugins")
  fs.mkdirSync(bundled, { recursive: true })
  fs.mkdirSync(instance, { recursive: true })
  return { root, bundled, instance }
})

/**
 * The operator's trust in every instance-root plugin whose manifest does not ask for isolation:
 * the loader's own semantics are tested on the host's thread, where the spec describes them; the
 * default (instance-root plugins isolated) is tested in test/isolation with `isolation: {}`.
 */
const trustedByDefault = (instance: string): Record<string, "none"> => {
  const trusted: Record<string, "none"> = {}
  const names = fs.existsSync(instance) ? fs.readdirSync(instance) : []
  for (const name of names) {
    try {
      // Only a small regular file is read: the tests put FIFOs, device links and huge files there.
      const file = path.join(instance, name, "city-plugin.json")
      const stat = fs.statSync(file)
      if (!stat.isFile() || stat.size > 1_000_000) continue
      const manifest = JSON.parse(fs.readFileSync(file, "utf8").replace(/^\uFEFF/, "")) as { name?: unknown; isolation?: unknown }
      if (typeof manifest.name === "string" && manifest.isolation === undefined) trusted[manifest.name] = "none"
    } catch {
      // Not a plugin folder, or one whose manifest the loader will refuse: nothing to trust.
    }
  }
  return trusted
}

/** The City core with the loader on top, built in the test's Scope (generation 1 loads now). */
export const startLoader = (
  root: string,
  options: LoaderOptions,
  city: Omit<City.CityLayerOptions, "root" | "plugins"> = {}
) =>
  Effect.gen(function*() {
    const given = options.isolation === undefined
      ? { ...options, isolation: trustedByDefault(options.instanceRoot ?? path.join(root, "plugins")) }
      : options
    const context = yield* Layer.build(LoaderCore.withCore({ root, ...city }, given))
    const registry = Context.get(context, PluginRegistry)
    return {
      /** Calls outside a Session, as `city.calls` makes them. */
      calls: makeCalls(registry, Context.get(context, ExecutionLeases)),
      loader: Context.get(context, PluginLoader),
      generations: Context.get(context, Generations),
      registry,
      views: Context.get(context, LeaseTable),
      sessions: Context.get(context, Sessions),
      workspaces: Context.get(context, Workspaces),
      config: Context.get(context, CityConfig)
    }
  })
