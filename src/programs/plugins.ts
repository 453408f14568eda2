/**
 * `city plugins list|discover`: the loader's observability (issue 9, "Observability").
 *
 * - `discover` reads the manifests of both roots and prints every plugin folder with its root,
 *   version and whether its manifest is valid (with the reason when not). It imports nothing.
 * - `list` loads the plugin set the way a City starts it (a throwaway City on the state root:
 *   import, initialize, publish), prints the loaded plugins with root, version and status, the
 *   skipped ones with their reasons and the enabled names no root provides, then closes that
 *   City (every plugin is disposed). It runs plugin code; `discover` never does.
 *
 * Roots: `--bundled <dir>` (else `bundledRoot` in `$CITY_ROOT/plugins.json`, else none) and the
 * instance root `$CITY_ROOT/plugins`. Enabled and licensed names come from `plugins.json`
 * (schema/LoaderSettings.ts). Both verbs exit 0 when they could report, 2 when `plugins.json` is
 * refused, 1 when a root cannot be read. Warnings (each skip) go to stderr through the CLI's
 * logger, so `--json` output stays parseable.
 * @since 0.1.0
 */
import * as Options from "@effect/cli/Options"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Loader from "../layers/Loader.ts"
import type { CityClosed } from "../schema/Errors.ts"
import type { PluginRootUnreadable } from "../schema/LoaderErrors.ts"
import type { InvalidLoaderSettings } from "../schema/LoaderSettings.ts"
import { PluginRegistry } from "../services/city/PluginRegistry.ts"
import { discover as discoverRoots } from "../services/loader/Discovery.ts"
import { Generations } from "../services/loader/Generations.ts"
import { PluginLoader } from "../services/loader/PluginLoader.ts"
import * as Settings from "../services/loader/Settings.ts"
import { Invocation } from "./invocation.ts"
import * as Opt from "./options.ts"
import * as Out from "./output.ts"
import { group, verb } from "./verbs.ts"

const bundled = Opt.described(
  Options.text("bundled").pipe(
    Options.withPseudoName("dir"),
    Options.withDescription("The bundled plugin root, scanned before the instance root"),
    Options.optional
  ),
  {
    kind: "flag",
    usage: "--bundled <dir>",
    description: "The bundled plugin root, scanned before the instance root",
    default: "plugins.json's bundledRoot, else none"
  }
)

const verbOptions = { ...Opt.readOptions, bundled }

/** The loader's failures a verb reports: the settings file refused (exit 2), a root or the City (exit 1). */
type LoaderVerbError = InvalidLoaderSettings | PluginRootUnreadable | CityClosed

/**
 * Runs a verb as `output.runVerb` does for capability errors: one `city: error:` line on stderr,
 * the `{ ok: false, verb, error }` envelope on stdout with `--json`, and the exit code.
 */
const runLoaderVerb = <R>(name: string, json: boolean, body: Effect.Effect<void, LoaderVerbError, R>) =>
  body.pipe(
    Effect.catchAll((error) =>
      Effect.gen(function*() {
        yield* Console.error(`city: error: ${Out.oneLine(error.message, 2000)}`)
        if (json) yield* Out.printJson({ ok: false, verb: name, error: { _tag: error._tag, message: error.message } })
        yield* Out.setExitCode(error._tag === "InvalidLoaderSettings" ? 2 : 1)
      })
    )
  )

/** The state root and the loader options of an invocation (relative paths from its directory). */
const setUp = (root: Option.Option<string>, bundledFlag: Option.Option<string>) =>
  Effect.gen(function*() {
    const invocation = yield* Invocation
    const stateRoot = Opt.resolveRoot(root, invocation)
    const bundledRoot = Option.getOrUndefined(Option.map(bundledFlag, (b) => Opt.resolveRoot(Option.some(b), invocation)))
    return { stateRoot, options: yield* Settings.options(stateRoot, bundledRoot) }
  })

export const discover = verb(
  "discover",
  "List the plugin folders of both roots by reading their manifests (never runs plugin code)",
  verbOptions,
  (o) =>
    runLoaderVerb(
      "plugins discover",
      o.json,
      Effect.gen(function*() {
        const { options } = yield* setUp(o.root, o.bundled)
        const found = yield* discoverRoots(options.roots)
        const enabled = new Set(options.enabled)
        const rows = found.map((d) => ({
          name: d.name,
          root: d.root,
          folder: d.folder,
          version: d._tag === "Valid" ? d.manifest.version : null,
          description: d._tag === "Valid" ? d.manifest.description : null,
          status: d._tag === "Valid" ? "valid" : "invalid",
          enabled: enabled.has(d.name),
          reason: d._tag === "Invalid" ? d.error.message : null
        }))
        if (o.json) return yield* Out.printJson({ ok: true, verb: "plugins discover", roots: options.roots, plugins: rows })
        yield* Console.log(`roots: ${options.roots.map((r) => `${r.kind} ${r.path}`).join(", ")}`)
        yield* Console.log(
          rows.length === 0
            ? "no plugin folders"
            : Out.table(
              ["NAME", "ROOT", "VERSION", "MANIFEST", "ENABLED", "REASON"],
              rows.map((r) => [r.name, r.root, r.version ?? "", r.status, r.enabled ? "yes" : "no", r.reason ?? ""])
            )
        )
      })
    ),
  ["city plugins discover --json", "city plugins discover --bundled /opt/app/plugins"]
)

export const list = verb(
  "list",
  "Load the plugin set as a City starts it and list the loaded and the skipped plugins",
  verbOptions,
  (o) =>
    runLoaderVerb(
      "plugins list",
      o.json,
      Effect.scoped(Effect.gen(function*() {
        const { options, stateRoot } = yield* setUp(o.root, o.bundled)
        const context = yield* Layer.build(Loader.withCore({ root: stateRoot }, options))
        const report = yield* Context.get(context, Generations).current
        const snapshots = yield* Context.get(context, PluginRegistry).snapshots
        const alerts = yield* Context.get(context, PluginLoader).alerts
        const statusOf = (name: string) => snapshots.find((s) => s.name === name)?.status ?? "gone"
        const loaded = report.loaded.map((p) => ({ ...p, status: statusOf(p.name) }))
        if (o.json) {
          return yield* Out.printJson({
            ok: true,
            verb: "plugins list",
            generation: report.generation,
            loaded,
            skipped: report.skipped,
            missing: report.missing,
            alerts
          })
        }
        yield* Console.log(
          loaded.length === 0
            ? "no plugins loaded"
            : Out.table(
              ["NAME", "ROOT", "VERSION", "STATUS", "FOLDER"],
              loaded.map((p) => [p.name, p.root, p.version, p.status, p.folder])
            )
        )
        if (report.skipped.length > 0) {
          yield* Console.log("")
          yield* Console.log(Out.table(["SKIPPED", "ROOT", "REASON"], report.skipped.map((s) => [s.name, s.root, s.reason])))
        }
        if (report.missing.length > 0) yield* Console.log(`\nenabled but provided by no root: ${report.missing.join(", ")}`)
      }))
    ),
  ["city plugins list", "city plugins list --json --bundled /opt/app/plugins"]
)

export const plugins = group("plugins", "Plugin folders: what the roots hold and what loads", [list, discover])
