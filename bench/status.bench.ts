/**
 * Status page benchmark (docs/status-page.md): `GET /api/status` of a board holding 1,000 plugins
 * and 1,000 endpoints (100 of them owing a reload).
 *
 * - Judged: the work of one request, `board.encoded` (the document as JSON, encoded by its
 *   Schema), against a plain `JSON.stringify` of the same document. Goal: ≤ 3x. Printed beside
 *   it for reference: encoding the whole document by its Schema per request, as `encoded` did
 *   before it kept its rows' JSON.
 * - For reference: the same request over HTTP, our server (`layers/StatusHttp.ts`) against a
 *   plain `node:http` server answering `JSON.stringify` of the same document, both on loopback
 *   with a keep-alive client.
 * - Memory held by 100 connected `/api/events` clients: heap and RSS after a GC, before and after
 *   they connect, per client.
 * Rounds alternate subject and baseline.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as http from "node:http"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import * as StatusHttp from "../src/layers/StatusHttp.ts"
import type { LoadReport } from "../src/schema/LoadReport.ts"
import type { OwedRecord } from "../src/schema/Live.ts"
import type { PluginSnapshot } from "../src/schema/PluginSnapshot.ts"
import { StatusDocument } from "../src/schema/StatusDocument.ts"
import type { CapabilityListing } from "../src/services/capabilities/Listings.ts"
import * as StatusBoard from "../src/services/status/StatusBoard.ts"
import { compare, finish, goal, line } from "./harness.ts"

const PLUGINS = 1_000
const PEERS = 100
const CAPABILITIES = 10
const CLIENTS = 100
const at = "2026-12-01T10:00:00.000Z"

const name = (prefix: string, i: number) => `${prefix}${String(i).padStart(4, "0")}`
const snapshots: ReadonlyArray<PluginSnapshot> = Array.from({ length: PLUGINS }, (_, i) => ({
  name: name("plugin-", i),
  status: i % 50 === 0 ? "error" : "ready",
  ...(i % 50 === 0 ? { last_error: `initialize failed: ENOENT: no such file, open '/srv/plugins/${i}/data.json'` } : {}),
  version: "1.2.3",
  source: "instance",
  attempts: 1,
  updated_at: at
}))
const report: LoadReport = {
  generation: 1,
  loaded: snapshots.map((s) => ({ name: s.name, version: "1.2.3", root: "instance", folder: `/srv/city/plugins/${s.name}`, dropped: [], warnings: [], configUnset: [], isolation: "none" })),
  skipped: [{ name: "broken", root: "instance", folder: "/srv/city/plugins/broken", kind: "ManifestInvalid", reason: "apiVersion: unsupported \"9\"" }],
  missing: [],
  notEnabled: [],
  notices: []
}
const listing: CapabilityListing = {
  capabilities: Array.from({ length: CAPABILITIES }, (_, c) => ({
    declaration: { capability: name("cap-", c) } as CapabilityListing["capabilities"][number]["declaration"],
    endpoints: Array.from({ length: PEERS }, (_, p) => ({
      personality: name("peer-", p),
      runtime: "claude",
      last: Option.some({ state: "ok" as const, occasion: "birth" as const, at, exit: 0 })
    }))
  })),
  invalid: []
}
const owed: ReadonlyArray<OwedRecord> = Array.from({ length: PEERS }, (_, p) => ({
  schema: 1,
  personality: name("peer-", p),
  runtime: "claude",
  requested: 2,
  applied: 1,
  reason: "surface changed",
  updated_at: at
}))
const sources: StatusBoard.StatusSources = {
  snapshots: Effect.succeed(snapshots),
  changes: Stream.never,
  report: Effect.succeed(report),
  capabilities: Effect.succeed(listing),
  owed: Effect.succeed(owed),
  heaps: Effect.succeed([])
}
const options: StatusBoard.StatusBoardOptions = {
  version: "0.1.0",
  pollInterval: "1 hour",
  sessions: Effect.succeed({ count: 0, busy: 0 })
}
const encode = Schema.encode(Schema.parseJson(StatusDocument))

/** `count` sequential GETs of `url` on one keep-alive connection; each body read whole. */
const requests = (agent: http.Agent, url: string, count: number) =>
  new Promise<void>((resolve, reject) => {
    let left = count
    const next = () => {
      if (left-- === 0) return resolve()
      http.get(url, { agent }, (res) => {
        res.on("data", () => {})
        res.on("end", next)
        res.on("error", reject)
      }).on("error", reject)
    }
    next()
  })

setFlagsFromString("--expose-gc")
const gc = runInNewContext("gc") as () => void
const settled = () => {
  for (let i = 0; i < 3; i++) gc()
  return process.memoryUsage()
}

const main = Effect.gen(function*() {
  const scope = yield* Scope.make()
  const board = yield* StatusBoard.make(options, sources).pipe(Scope.extend(scope))
  const document = yield* board.current
  expect(document.plugins.length === PLUGINS && document.endpoints.length === PLUGINS, "the board holds 1,000 plugins and 1,000 endpoints")
  const runtime = yield* Effect.runtime<never>()
  const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(Effect.provide(effect, runtime))

  const PER_ROUND = 20
  const judged = yield* Effect.promise(() =>
    compare({
      label: `/api/status's work (board.encoded: the Schema-encoded document), ${PLUGINS} plugins + ${PLUGINS} endpoints`,
      baseline: "JSON.stringify of the same document",
      ops: PER_ROUND,
      rounds: 21,
      warmup: 5,
      subjectRound: {
        run: () =>
          run(Effect.gen(function*() {
            for (let i = 0; i < PER_ROUND; i++) yield* board.encoded
          }))
      },
      baselineRound: {
        run: async () => {
          for (let i = 0; i < PER_ROUND; i++) JSON.stringify(document)
        }
      }
    })
  )
  console.log(line(judged))
  const whole = yield* Effect.promise(() =>
    compare({
      label: "the whole document Schema-encoded per request (no kept rows)",
      baseline: "JSON.stringify of the same document",
      ops: PER_ROUND,
      rounds: 11,
      warmup: 3,
      subjectRound: {
        run: () =>
          run(Effect.gen(function*() {
            for (let i = 0; i < PER_ROUND; i++) yield* Effect.flatMap(board.current, encode)
          }))
      },
      baselineRound: {
        run: async () => {
          for (let i = 0; i < PER_ROUND; i++) JSON.stringify(document)
        }
      }
    })
  )
  console.log(line(whole))
  goal("GET /api/status with 1,000 plugins and 1,000 endpoints ≤ 3x JSON.stringify of the same data", judged.median <= 3, `median ${judged.median.toFixed(2)}x`)

  // Over HTTP, for reference.
  const url = yield* StatusHttp.serve(board, { listen: { host: "127.0.0.1", port: 0 }, token: Option.none() }).pipe(Scope.extend(scope))
  const plain = http.createServer((_, res) => {
    res.setHeader("content-type", "application/json")
    res.end(JSON.stringify(document))
  })
  yield* Effect.promise(() => new Promise<void>((resolve) => plain.listen(0, "127.0.0.1", resolve)))
  const plainUrl = `http://127.0.0.1:${(plain.address() as { port: number }).port}/api/status`
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  const overHttp = yield* Effect.promise(() =>
    compare({
      label: "GET /api/status over HTTP (our server)",
      baseline: "a plain node:http server answering JSON.stringify",
      ops: PER_ROUND,
      rounds: 15,
      warmup: 3,
      subjectRound: { run: () => requests(agent, new URL("/api/status", url).toString(), PER_ROUND) },
      baselineRound: { run: () => requests(agent, plainUrl, PER_ROUND) }
    })
  )
  console.log(line(overHttp))

  // 100 event clients.
  const before = settled()
  const clients: Array<http.ClientRequest> = []
  yield* Effect.promise(() =>
    Promise.all(Array.from({ length: CLIENTS }, () =>
      new Promise<void>((resolve, reject) => {
        const req = http.get(new URL("/api/events", url), (res) => res.once("data", () => resolve()))
        req.on("error", reject)
        clients.push(req)
      })))
  )
  const after = settled()
  const perClient = (a: number, b: number) => `${((b - a) / CLIENTS / 1024).toFixed(1)} KiB`
  console.log(
    `memory of ${CLIENTS} connected /api/events clients (each sent the whole document): heap ${perClient(before.heapUsed, after.heapUsed)} per client, ` +
      `RSS ${perClient(before.rss, after.rss)} per client (heap ${(before.heapUsed / 1048576).toFixed(1)} → ${(after.heapUsed / 1048576).toFixed(1)} MiB)`
  )
  for (const c of clients) c.destroy()
  agent.destroy()
  plain.close()
  yield* Scope.close(scope, Exit.void)
})

function expect(condition: boolean, what: string) {
  if (!condition) throw new Error(`bench setup: ${what}`)
}

// The page's assets are read from files: the platform's FileSystem.
Effect.runPromise(Effect.provide(main, NodeFileSystem.layer)).then(finish, (error) => {
  console.error(error)
  process.exit(1)
})
