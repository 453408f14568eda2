/**
 * A state root for the status page's tests (docs/status-page.md): a plugin that loads (`clock`),
 * one the loader skips (`broken`, whose manifest asks for an apiVersion this core does not
 * support), a peer `alice` whose claude endpoint the Commands host drives (its `status` command
 * prints `<base>/status`, its `reload` appends to `<base>/reloads`), a capability `stamp` for it,
 * and a real `city daemon --http 127.0.0.1:0` whose address is read from the file it publishes.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import { join } from "node:path"
import { city, json, sh, writeJson } from "../acceptance/cityCli.ts"
import { type Daemon, startDaemon } from "./daemonProcess.ts"
import { awaitLog, jsonOf, registerEntry, within, writePlugin, writeSettings } from "./pluginDaemon.ts"
import { capability, world, type World } from "./world.ts"

export interface StatusWorld {
  readonly w: World
  /** Sets what the endpoint's `status` command prints (`busy`, `idle`). */
  readonly setStatus: (status: string) => Effect.Effect<void, unknown>
  /** Registers `stamp`: the claude endpoint of alice is provisioned and its reload requested. */
  readonly register: Effect.Effect<Record<string, unknown>, unknown, any>
}

export const statusWorld = Effect.gen(function*() {
  const files = yield* FileSystem.FileSystem
  const w = yield* world
  const status = yield* sh(join(w.bin, "status"), [`cat '${w.base}/status'`])
  const reload = yield* sh(join(w.bin, "reload"), [`echo "$1" >> '${w.base}/reloads'`])
  const cmd = (command: string, verb: string) => ({ command, args: [verb, "{personality}", "{runtime}"] })
  yield* writeJson(w.root, "host.json", {
    schema: 1,
    agent_runtimes: ["claude", "codex", "opencode"],
    channel_runtimes: [],
    profiles: {
      claude: { commands: { status: cmd(status, "status"), reload: cmd(reload, "reload"), retire: cmd(reload, "retire"), kill: cmd(reload, "kill") } }
    }
  })
  const instance = join(w.root, "plugins")
  writePlugin(instance, "clock", registerEntry(`ctx.registerSystem("the time is <b>now</b>")`))
  const broken = writePlugin(instance, "broken", registerEntry())
  const manifest = JSON.parse(fs.readFileSync(join(broken, "city-plugin.json"), "utf8")) as Record<string, unknown>
  fs.writeFileSync(join(broken, "city-plugin.json"), JSON.stringify({ ...manifest, apiVersion: "9" }))
  writeSettings(w.root, { enabled: ["clock", "broken"], licensed: ["clock", "broken"] })
  const decl = yield* capability(w, "stamp", ["claude"])
  const setStatus = (s: string) =>
    Effect.zipRight(files.writeFileString(join(w.base, "status.tmp"), `${s}\n`), files.rename(join(w.base, "status.tmp"), join(w.base, "status")))
  const register = Effect.map(city(["capability", "register", decl, "--json"], { root: w.root }), json)
  return { w, setStatus, register } satisfies StatusWorld
})

/** `city daemon --poll-ms 100 --http 127.0.0.1:0 ...args` on the world's root, once its page is served: the daemon and the page's URL. */
export const startStatusDaemon = (w: World, name: string, args: ReadonlyArray<string> = []) =>
  Effect.gen(function*() {
    const daemon: Daemon = yield* startDaemon(w.root, w.base, name, ["--http", "127.0.0.1:0", ...args])
    yield* awaitLog(daemon, "status page at")
    const published = join(w.root, "state", "status-page.json")
    yield* within("the daemon publishes its page's address", Effect.map(jsonOf(published), (r) => typeof r?.["url"] === "string"))
    const url = String((yield* jsonOf(published))?.["url"])
    return { daemon, url }
  })
