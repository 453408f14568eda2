/**
 * The resolve hook behind host-provided modules (../HostModules.ts has the decisions): its
 * registration, once per process, the admission of a plugin folder, and the warnings for the
 * copies a folder ships and the host does not use.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as nodeModule from "node:module"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { MessageChannel } from "node:worker_threads"
import * as TextFile from "../../files/TextFile.ts"
import { HostModules, isProvided, providedPackages } from "../HostModules.ts"

/**
 * The hook, run by Node on its module-customization thread. It is given as a `data:` URL, so the
 * same text serves the sources, the compiled package and the bundled binary.
 */
const hookSource = `
const folders = []
let resolveFrom
let plugin
const provided = ${isProvided.toString()}
export async function initialize(data) {
  resolveFrom = data.resolveFrom
  plugin = data.plugin
  data.port.on("message", (message) => {
    for (const folder of message.folders) if (!folders.includes(folder)) folders.push(folder)
    data.port.postMessage(message.id)
  })
  data.port.unref()
}
export async function resolve(specifier, context, next) {
  const parent = context.parentURL
  if (parent !== undefined && provided(specifier) && folders.some((folder) => parent.startsWith(folder))) {
    return next(specifier === "effect-city/plugin" ? plugin : specifier, { ...context, parentURL: resolveFrom })
  }
  return next(specifier, context)
}
`

interface Registration {
  readonly admit: (folders: ReadonlyArray<string>) => Promise<void>
}

// The hooks are the process's, so their registration is too: one per process, made on first use.
let registration: Registration | undefined

const register = (host: HostModules["Type"]): Registration | undefined => {
  if (registration !== undefined) return registration
  if (typeof nodeModule.register !== "function") return undefined
  const { port1, port2 } = new MessageChannel()
  nodeModule.register(`data:text/javascript,${encodeURIComponent(hookSource)}`, {
    data: { port: port2, resolveFrom: host.resolveFrom, plugin: host.plugin },
    transferList: [port2]
  })
  port1.unref()
  let next = 0
  const waiting = new Map<number, () => void>()
  port1.on("message", (id: number) => {
    waiting.get(id)?.()
    waiting.delete(id)
  })
  registration = {
    admit: (folders) =>
      new Promise<void>((resolve) => {
        const id = ++next
        waiting.set(id, resolve)
        // Held while an admission waits, so the process does not end under it.
        port1.ref()
        port1.postMessage({ id, folders })
      }).finally(() => {
        if (waiting.size === 0) port1.unref()
      })
  }
  return registration
}

/**
 * Admits a plugin folder: imports from files inside it (by its path or its real path) get the
 * host's copies of the provided modules. Registers the hook on first use.
 * @since 0.1.0
 * @category utils
 */
export const admit = (folder: string): Effect.Effect<void, never, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const host = yield* HostModules
    const hooks = register(host)
    if (hooks === undefined) return
    const fs = yield* FileSystem.FileSystem
    const real = yield* Effect.orElseSucceed(fs.realPath(folder), () => folder)
    const prefixes = [...new Set([folder, real])].map((f) => pathToFileURL(path.resolve(f)).href + "/")
    yield* Effect.promise(() => hooks.admit(prefixes))
  })

/**
 * One warning per provided package the folder ships in its own `node_modules` (the host's copy
 * is used instead), naming the copy and its version when its `package.json` says one.
 * @since 0.1.0
 * @category utils
 */
export const shadowedCopies = (folder: string): Effect.Effect<ReadonlyArray<string>, never, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const warnings: Array<string> = []
    for (const name of providedPackages) {
      const dir = path.join(folder, "node_modules", name)
      const exists = yield* Effect.orElseSucceed(fs.exists(dir), () => false)
      if (!exists) continue
      const text = yield* Effect.option(TextFile.read(path.join(dir, "package.json"), TextFile.kinds.manifest))
      const version = Option.flatMap(Option.flatten(text), versionOf)
      warnings.push(
        `ships node_modules/${name}${Option.match(version, { onNone: () => "", onSome: (v) => ` ${v}` })}, which is not used: ` +
          `the plugin gets the host's ${name} (one copy in the process)`
      )
    }
    return warnings
  })

const versionOf = (text: string): Option.Option<string> => {
  try {
    const json: unknown = JSON.parse(text)
    const version = typeof json === "object" && json !== null ? Reflect.get(json, "version") : undefined
    return typeof version === "string" && /^[0-9A-Za-z.+-]{1,64}$/.test(version) ? Option.some(version) : Option.none()
  } catch {
    return Option.none()
  }
}
