/**
 * The state root and the paths under it (docs/design.md, "State and durability"; docs/cli.md):
 * the one rule that finds the root, and every absolute path the City, the loader and the state
 * root service derive from it. Every path under the root is named once, in `layout`; the documents
 * under `state/` and `logs/` are named relative to the root and reach it through `StateRoot.resolve`.
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
 * The layout of the state root, each path relative to it (docs/cli.md, "State root"):
 *
 * | path | what |
 * |---|---|
 * | `capabilities/<name>.json` | stored declarations |
 * | `peers/<personality>.json` | the peer files |
 * | `host.json` | optional host configuration (runtimes and their profiles) |
 * | `state/opencode/<personality>/` | a core-owned private directory (named by `host.json`'s profiles) |
 * | `state/endpoints/<capability>.json` | the last provisioning call per endpoint |
 * | `state/reloads/<runtime>-<p>.json` | owed reloads and removals |
 * | `state/fingerprints/<runtime>-<p>.json` | what the endpoint's last launch read |
 * | `state/hosted/`, `state/turns/` | the daemon's City-session endpoints and their Turns |
 * | `state/plugins/restart.json`, `state/plugins/generation.json` | restart requests and the generation served |
 * | `state/processes/<pid>-<start>.jsonl` | one journal per running `city` process |
 * | `state/status-page.json` | the address of the running status page |
 * | `state/control.json`, `state/control.sock` | where the running daemon's control channel listens, and its socket |
 * | `daemon.pid` | the running `city daemon` |
 * | `daemon.lock` | the daemon lock, held by the running `city daemon` |
 * | `daemon.freeze.json` | the daemon's host thread is (or was, when it ended) blocked: by which plugin, where, since when |
 * | `state/plugins/quarantine.json` | plugins that froze the daemon's thread: loaded in worker threads until cleared |
 * | `logs/lifecycle.log` | one logfmt line per call, rotated |
 * | `.lock` | the cross-process root lock |
 * | `plugins.json`, `plugins/`, `data/<plugin>/` | the loader's settings, the instance plugin root, plugin storage |
 * @since 0.1.0
 * @category constants
 */
export const layout = {
  /** Stored declarations, `capabilities/<name>.json`. */
  capabilities: "capabilities",
  /** Peer files, `peers/<personality>.json`. */
  peers: "peers",
  /** Peer files imported into a fleet, moved here by the daemon's start (docs/cluster.md). */
  importedPeers: "state/imported-peers",
  /** The optional host configuration. */
  host: "host.json",
  /** The last provisioning call per endpoint, `state/endpoints/<capability>.json`. */
  endpoints: "state/endpoints",
  /** Owed reloads and removals, `state/reloads/<runtime>-<p>.json`. */
  reloads: "state/reloads",
  /** What each endpoint's last launch read, `state/fingerprints/<runtime>-<p>.json`. */
  fingerprints: "state/fingerprints",
  /** The daemon's City-session endpoints. */
  hosted: "state/hosted",
  /** Turn requests and results of the daemon's City-session endpoints. */
  turns: "state/turns",
  /** Restart requests to the daemon. */
  restart: "state/plugins/restart.json",
  /** The plugin generation the daemon serves. */
  generation: "state/plugins/generation.json",
  /** One journal per running `city` process, `state/processes/<pid>-<start>.jsonl`. */
  processes: "state/processes",
  /** The address of the running status page. */
  statusPage: "state/status-page.json",
  /** Where the running daemon's control channel listens (services/control/ControlAddress.ts). */
  controlRecord: "state/control.json",
  /** The control channel's socket, when its absolute path fits a socket address. */
  controlSocket: "state/control.sock",
  /** The running `city daemon`: its pid and start. */
  daemonPid: "daemon.pid",
  /** The daemon lock's folder, held (refreshed every 2 s) while a `city daemon` runs. */
  daemonLock: "daemon.lock",
  /** The freeze record, written by the daemon's watchdog thread (watchdog/HostWatchdog.ts). */
  daemonFreeze: "daemon.freeze.json",
  /** The plugins quarantined after a freeze (watchdog/Quarantine.ts). */
  quarantine: "state/plugins/quarantine.json",
  /** The lifecycle log (its rotations beside it). */
  lifecycleLog: "logs/lifecycle.log",
  /** The cross-process root lock's folder. */
  lock: ".lock",
  /** The loader's settings file. */
  settings: "plugins.json",
  /** The instance plugin root. */
  plugins: "plugins",
  /** Plugin storage folders, `data/<plugin>/`. */
  data: "data"
} as const

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
export const dataFolder = (root: string, plugin: string): string => path.join(root, layout.data, plugin)

/**
 * The loader's settings file: `<root>/plugins.json`.
 * @since 0.1.0
 * @category utils
 */
export const settingsFile = (root: string): string => path.join(root, layout.settings)

/**
 * The instance plugin root: `<root>/plugins`.
 * @since 0.1.0
 * @category utils
 */
export const instanceRoot = (root: string): string => path.resolve(root, layout.plugins)

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
export const lockFolder = (root: string): string => path.join(root, layout.lock)
