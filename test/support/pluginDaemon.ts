/**
 * Support for the tests (and the benchmark) of a real `city daemon` hosting plugin folders
 * (docs/plugin-loader-lifecycle.md): plugin folders with a `city-plugin.json` in the reference
 * shape, `$CITY_ROOT/plugins.json` naming them, a daemon started and awaited until its
 * `plugin generation 1 ready` line, and bounded waits that fail with a message.
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import { join } from "node:path"
import { type Daemon, startDaemon } from "./daemonProcess.ts"

/**
 * The manifest's `apiVersion`. The reference's is the string "1"; flip it here, in one place,
 * while the manifest schema still takes the integer.
 */
export const apiVersion: string | number = "1"

/** A manifest in the reference shape. */
export const manifest = (name: string, version = "1.0.0") => ({
  name,
  version,
  apiVersion,
  description: `the ${name} plugin`,
  entry: "index.mjs"
})

/** Writes (or rewrites) the plugin folder `root/name`: its manifest and its `index.mjs`. */
export const writePlugin = (root: string, name: string, entry: string, version = "1.0.0") => {
  const dir = join(root, name)
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(join(dir, "city-plugin.json"), `${JSON.stringify(manifest(name, version), null, 2)}\n`)
  fs.writeFileSync(join(dir, "index.mjs"), entry)
  return dir
}

/** A `register(ctx)` entry whose body runs inside `async function register(ctx)`. */
export const registerEntry = (body = "") => `export async function register(ctx) {\n${body}\n}\n`

/** `$CITY_ROOT/plugins.json`. */
export const writeSettings = (root: string, settings: { readonly enabled: ReadonlyArray<string>; readonly licensed: ReadonlyArray<string> }) =>
  fs.writeFileSync(join(root, "plugins.json"), `${JSON.stringify(settings, null, 2)}\n`)

/** Re-checks `condition` every 20 ms; fails with `what` after `timeoutMs` (real time, real files). */
export const within = <E, R>(what: string, condition: Effect.Effect<boolean, E, R>, timeoutMs = 60_000) =>
  Effect.gen(function*() {
    const deadline = Date.now() + timeoutMs
    while (!(yield* condition)) {
      if (Date.now() > deadline) return yield* Effect.dieMessage(`not within ${timeoutMs} ms: ${what}`)
      yield* Effect.sleep(Duration.millis(20))
    }
  })

/** The text of a file, or "" when it does not exist. */
export const textOf = (file: string) =>
  Effect.sync(() => {
    try {
      return fs.readFileSync(file, "utf8")
    } catch {
      return ""
    }
  })

/** A JSON file, parsed, or undefined when it does not exist (or is being replaced). */
export const jsonOf = (file: string) =>
  Effect.map(textOf(file), (text): Record<string, any> | undefined => {
    try {
      return JSON.parse(text) as Record<string, any>
    } catch {
      return undefined
    }
  })

/** The daemon's log lines that contain `text`. */
export const logLines = (daemon: Daemon, text: string) =>
  Effect.map(textOf(daemon.log), (log) => log.split("\n").filter((l) => l.includes(text)))

/** Waits for a line of the daemon's log containing `text`; fails early, with its log, if it exits. */
export const awaitLog = (daemon: Daemon, text: string, timeoutMs = 60_000) =>
  within(
    `the daemon's log shows "${text}"`,
    Effect.gen(function*() {
      if (yield* Deferred.isDone(daemon.exited)) {
        return yield* Effect.dieMessage(`the daemon exited before logging "${text}":\n${yield* textOf(daemon.log)}`)
      }
      return (yield* logLines(daemon, text)).length > 0
    }),
    timeoutMs
  )

/** A real `city daemon` on `root` (poll 100 ms), once it logged `plugin generation 1 ready`. */
export const startPluginDaemon = (root: string, logDir: string, name: string, args: ReadonlyArray<string> = []) =>
  Effect.gen(function*() {
    const daemon = yield* startDaemon(root, logDir, name, args)
    yield* awaitLog(daemon, "plugin generation 1 ready")
    return daemon
  })

/** The published generation and the restart record of a root. */
export const files = (root: string) => ({
  generation: join(root, "state", "plugins", "generation.json"),
  restart: join(root, "state", "plugins", "restart.json")
})
