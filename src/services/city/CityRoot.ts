/**
 * The state root and the paths under it (docs/design.md, "State and durability"; docs/cli.md):
 * the one rule that finds the root, and every absolute path the City, the loader and the state
 * root service derive from it. The documents under `state/` and `logs/` are named relative to the
 * root and reach it through `StateRoot.resolve`.
 *
 * One rule for the state root everywhere (library, CLI, daemon): an explicit root, else
 * `$CITY_ROOT` when it is set and not empty, else `~/.city`; a relative path is read from the
 * working directory.
 * @since 0.1.0
 */
import * as os from "node:os"
import * as path from "node:path"
import type { RootKind } from "../../schema/LoadReport.ts"

/**
 * The state root rule, on explicit inputs: `root`, else `CITY_ROOT` when it is set and not empty,
 * else `<home>/.city`; a relative path is read from `cwd`. The library, the CLI and the daemon all
 * use it.
 * @since 0.1.0
 * @category constructors
 */
export const rootFrom = (options: {
  readonly root?: string | undefined
  readonly env: Readonly<Record<string, string | undefined>>
  readonly home: string
  readonly cwd: string
}): string => {
  const fromEnv = options.env["CITY_ROOT"]
  const chosen = options.root ?? (fromEnv !== undefined && fromEnv !== "" ? fromEnv : path.join(options.home, ".city"))
  return path.resolve(options.cwd, chosen)
}

/**
 * The state root of this process: `rootFrom` on its environment, home and working directory.
 * @since 0.1.0
 * @category constructors
 */
export const resolve = (root?: string | undefined): string =>
  rootFrom({ root, env: process.env, home: os.homedir(), cwd: process.cwd() })

/**
 * A plugin's storage folder, `ctx.storage.path`: `<root>/data/<name>`.
 * @since 0.1.0
 * @category utils
 */
export const dataFolder = (root: string, plugin: string): string => path.join(root, "data", plugin)

/**
 * The loader's settings file: `<root>/plugins.json`.
 * @since 0.1.0
 * @category utils
 */
export const settingsFile = (root: string): string => path.join(root, "plugins.json")

/**
 * The instance plugin root: `<root>/plugins`.
 * @since 0.1.0
 * @category utils
 */
export const instanceRoot = (root: string): string => path.resolve(root, "plugins")

/**
 * The plugin roots in scan order (docs/plugin-loader-lifecycle.md, "Lifecycle and layout"): the
 * bundled root when there is one, then the instance root (`instanceRoot` unless the host names
 * another).
 * @since 0.1.0
 * @category utils
 */
export const pluginRoots = (
  bundled: string | undefined,
  instance: string
): ReadonlyArray<{ readonly kind: RootKind; readonly path: string }> => [
  ...(bundled === undefined ? [] : [{ kind: "bundled" as const, path: path.resolve(bundled) }]),
  { kind: "instance", path: path.resolve(instance) }
]

/**
 * The cross-process root lock's directory: `<root>/.lock`.
 * @since 0.1.0
 * @category utils
 */
export const lockFolder = (root: string): string => path.join(root, ".lock")
