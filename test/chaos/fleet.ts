/**
 * The chaos test's fleet, set up: a PostgreSQL server of its own (its own data folder, since the
 * test restarts it), three hosts each with a state root whose `host.json` names the fleet, two
 * peers per host (distinct names, so a report without a HOST column still names its host), their
 * `claude` endpoints run by the shared scripts (test/chaos/commands.ts), an operator's root for
 * the capability verbs, and every host's `city daemon --cluster` (test/chaos/daemons.ts), all
 * started at once on the empty database, as an operator's first start would.
 *
 * Layout under one temp folder: `history.log`, `bin/`, `hosts/<host>/root` (the state root: the
 * scripts take the host's name from it), `hosts/<host>/work/<personality>/.mcp.json` (each
 * endpoint's launch-read file, `{"chaos":<version>}`), `operator/root`, `<capability>.json`.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import { join } from "node:path"
import { startPostgres } from "../support/postgresServer.ts"
import { freePort } from "../support/freePort.ts"
import { freshDatabase } from "../support/pgDatabase.ts"
import { tempDir, writeJson } from "../acceptance/cityCli.ts"
import * as Commands from "./commands.ts"
import * as Daemons from "./daemons.ts"

export const hostNames = ["web-01", "web-02", "web-03"] as const
export const peersOf: Record<string, ReadonlyArray<string>> = {
  "web-01": ["alice", "bob"],
  "web-02": ["carol", "dave"],
  "web-03": ["erin", "frank"]
}
export const capabilities = ["alpha", "beta"] as const

export interface Host {
  readonly name: string
  readonly root: string
  readonly work: string
  readonly daemon: Daemons.Daemon
}

/** The launch-read file of an endpoint `<host>/claude/<personality>`. */
export const launchFileOf = (base: string, endpoint: string) => {
  const [host, , personality] = endpoint.split("/")
  return join(base, "hosts", host!, "work", personality!, ".mcp.json")
}

/** Everything set up and every daemon started; the scope closes the daemons, then the server. */
export const make = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const server = yield* Effect.acquireRelease(Effect.promise(() => startPostgres()), (s) => Effect.promise(() => s.stop()))
  const url = yield* freshDatabase(server.url)
  const base = yield* tempDir
  const log = join(base, "history.log")
  yield* fs.writeFileString(log, "")
  const bin = join(base, "bin")
  yield* fs.makeDirectory(bin)
  const scripts = yield* Commands.write(bin, log)
  const files = Object.fromEntries(yield* Effect.forEach(capabilities, (capability) =>
    Effect.map(writeJson(base, `${capability}.json`, Commands.declarationOf(capability, scripts.provisioner)), (file) => [capability, file] as const)))
  const operator = join(base, "operator", "root")
  yield* fs.makeDirectory(operator, { recursive: true })
  yield* writeJson(operator, "host.json", Commands.hostConfig(scripts))
  const endpoints = hostNames.flatMap((host) => peersOf[host]!.map((p) => `${host}/claude/${p}`))
  const hosts = yield* Effect.forEach(hostNames, (name) =>
    Effect.gen(function*() {
      const root = join(base, "hosts", name, "root")
      const work = join(base, "hosts", name, "work")
      yield* fs.makeDirectory(root, { recursive: true })
      for (const p of peersOf[name]!) {
        yield* fs.makeDirectory(join(work, p), { recursive: true })
        yield* fs.writeFileString(join(work, p, ".mcp.json"), Commands.launchFile(0))
      }
      const address = `127.0.0.1:${yield* freePort}`
      yield* writeJson(root, "host.json", Commands.hostConfig(scripts, { url, host: name, address }))
      const daemon = Daemons.make({ host: name, root, dir: join(base, "hosts", name), log, args: ["--poll-ms", "500"] })
      yield* Effect.addFinalizer(() => Effect.promise(daemon.close))
      return { name, root, work, daemon } satisfies Host
    }))
  // All at once on the empty database.
  yield* Effect.promise(() => Promise.all(hosts.map((h) => h.daemon.start())))
  return { server, url, base, log, bin, scripts, files, operator, endpoints, hosts }
})

export type Fleet = Effect.Effect.Success<typeof make>
