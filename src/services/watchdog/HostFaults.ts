/**
 * Faults of plugin code on the host's thread, named (docs/plugin-loader.md, "The host's own
 * thread"): a plugin trusted on the daemon's thread shares its process, so what would end the
 * process is traced back to the plugin whose folder is on the stack.
 *
 * - **An unhandled rejection** whose stack lies in a plugin's folder ends that plugin: it leaves
 *   the City with an `error` snapshot saying `unhandled rejection: <message>` (the registry's
 *   `crashed`), and the host goes on. One outside every plugin is the host's own: it is rethrown,
 *   and ends the process as an uncaught exception (below), as Node would have.
 * - **An uncaught exception** is recorded with the plugin's name and location in the freeze record
 *   (Quarantine.ts: the next start quarantines the plugin in a worker), and the daemon ends with
 *   one line naming it and the caller's exit code: after an uncaught exception the
 *   process's state is unknown, so it is not carried on.
 * - **`process.exit()` called by plugin code** (its caller's frame in a plugin folder) is refused:
 *   the call throws, and the plugin is ended as for an unhandled rejection (`it called
 *   process.exit(7)`). Calls from anywhere else (the runtime's own exit at the end, the watchdog's)
 *   go through.
 *
 * A frame is the plugin's when its file URL lies in a plugin folder of the roots (the folder under
 * a root, by name), as the watchdog names a blocking frame.
 * @since 0.1.0
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Runtime from "effect/Runtime"
import * as fs from "node:fs"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import type { PluginRoot } from "../loader/Discovery.ts"

/**
 * What a plugin's fault on the host's thread is reported to.
 * @since 0.1.0
 * @category models
 */
export interface FaultOptions {
  /** The plugin roots: a frame in a folder of one names that folder's plugin. */
  readonly roots: ReadonlyArray<PluginRoot>
  /** The front of the last line: `city daemon`. */
  readonly who: string
  /** Where the record the next start quarantines from is written. */
  readonly recordFile: string
  /** The lines' format: the daemon's log format. */
  readonly format: "logfmt" | "json"
  /** The process's exit code after an uncaught exception (the daemon's: as at its freeze limit). */
  readonly exitCode: number
}

/** Where a stack's first frame in a plugin folder is: the plugin and `url:line:column`. */
const pluginFrame = (stack: string, roots: ReadonlyArray<string>): { readonly plugin: string; readonly location: string } | undefined => {
  for (const line of stack.split("\n")) {
    const match = /(file:\/\/[^\s)]+?):(\d+):(\d+)\)?\s*$/.exec(line)
    if (match === null) continue
    const url = match[1]!.split("?")[0]!
    for (const root of roots) {
      if (!url.startsWith(root)) continue
      const name = url.slice(root.length).split("/")[0]
      if (name !== undefined && name !== "" && url.length > root.length + name.length) {
        return { plugin: decodeURIComponent(name), location: `${url}:${match[2]}:${match[3]}` }
      }
    }
  }
  return undefined
}

/** Writes one line on stderr in the daemon's log format (synchronously: the process may end next). */
const writeLine = (format: FaultOptions["format"], level: string, message: string, fields: Record<string, string>) => {
  const now = new Date().toISOString()
  const value = (v: string) => (/^[^\s"=]*$/.test(v) ? v : JSON.stringify(v))
  const text = format === "json"
    ? JSON.stringify({ message, logLevel: level, timestamp: now, annotations: fields, spans: {}, fiberId: "faults" })
    : `timestamp=${now} level=${level} fiber=faults message=${value(message)}` +
      Object.entries(fields).map(([k, v]) => ` ${k}=${value(v)}`).join("")
  try {
    fs.writeSync(2, `${text}\n`)
  } catch {
    // stderr is gone: nothing else can be said.
  }
}

/** The error `process.exit` throws when plugin code calls it. */
class ExitRefused extends Error {}

/**
 * Installs the handlers for the caller's Scope; `attach` gives them the registry's `crashed`
 * once the City is up (a plugin's fault before then waits for it).
 * @since 0.1.0
 * @category constructors
 */
export const start = (options: FaultOptions) =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    const crashed = yield* Deferred.make<(plugin: string, reason: string) => Effect.Effect<void>>()
    const roots = options.roots.flatMap((root) => {
      const real = (() => {
        try {
          return fs.realpathSync(root.path)
        } catch {
          return root.path
        }
      })()
      return [...new Set([root.path, real])].map((folder) => `${pathToFileURL(path.resolve(folder)).href}/`)
    })
    const end = (plugin: string, reason: string) => {
      writeLine(options.format, "WARN", `plugin ${plugin} ended: ${reason}`, { plugin, code: "plugin.host_fault" })
      Runtime.runFork(runtime)(Effect.flatMap(Deferred.await(crashed), (f) => f(plugin, reason)))
    }
    const messageOf = (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}` : String(error))

    const onRejection = (reason: unknown) => {
      const found = reason instanceof Error && typeof reason.stack === "string" ? pluginFrame(reason.stack, roots) : undefined
      if (found !== undefined) return end(found.plugin, `unhandled rejection: ${messageOf(reason)} (at ${found.location})`)
      // The host's own: as Node would, it ends the process, as an uncaught exception.
      setImmediate(() => {
        throw reason
      })
    }
    const onException = (error: unknown) => {
      if (error instanceof ExitRefused) return
      const found = error instanceof Error && typeof error.stack === "string" ? pluginFrame(error.stack, roots) : undefined
      const where = found === undefined ? "outside any plugin" : `in plugin ${found.plugin} (${found.location})`
      if (found !== undefined) {
        const record = { schema: 1, pid: process.pid, plugin: found.plugin, location: found.location, since: new Date().toISOString(), blocked_ms: 0, limit_ms: 0, ended: true, reason: `threw ${messageOf(error)}` }
        try {
          fs.writeFileSync(`${options.recordFile}.${process.pid}.tmp`, `${JSON.stringify(record)}\n`, { mode: 0o600 })
          fs.renameSync(`${options.recordFile}.${process.pid}.tmp`, options.recordFile)
        } catch {
          // The record cannot be written: the line below still names the plugin.
        }
      }
      writeLine(options.format, "ERROR", `${options.who}: uncaught exception ${where}: ${messageOf(error)}; exiting ${options.exitCode}${found === undefined ? "" : " (the next start quarantines the plugin)"}`, {
        plugin: found?.plugin ?? "",
        location: found?.location ?? "",
        code: "host.uncaught_exception"
      })
      exit(options.exitCode)
    }
    const exit = process.exit.bind(process)
    const guardedExit = (code?: string | number | null): never => {
      // Its caller only (the stack's third line, after `Error` and this function): code evaluated
      // while a plugin's frame is on the stack (the watchdog's `process.exit` at the freeze limit)
      // is not the plugin's call.
      const caller = (new Error().stack ?? "").split("\n").slice(2, 3).join("\n")
      const found = pluginFrame(caller, roots)
      if (found === undefined) return exit(code as number | undefined)
      end(found.plugin, `it called process.exit(${code ?? ""}) (at ${found.location}), which is refused on the host's thread`)
      throw new ExitRefused(`process.exit() is refused to plugin ${found.plugin} on the host's thread`)
    }

    yield* Effect.acquireRelease(
      Effect.sync(() => {
        process.on("unhandledRejection", onRejection)
        process.on("uncaughtException", onException)
        process.exit = guardedExit
      }),
      () =>
        Effect.sync(() => {
          process.off("unhandledRejection", onRejection)
          process.off("uncaughtException", onException)
          if (process.exit === guardedExit) process.exit = exit
        })
    )
    return {
      /** Gives the handlers the registry's `crashed`. */
      attach: (f: (plugin: string, reason: string) => Effect.Effect<void>) => Effect.asVoid(Deferred.succeed(crashed, f))
    }
  })
