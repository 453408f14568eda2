/**
 * Owed-reload throughput and takeover of the fleet (docs/cluster.md, "Benchmark"), as whole
 * processes: real `city daemon`s (bin/city.mjs, `--poll-ms 100`, `--http 127.0.0.1:0`, without
 * NODE_EXTRA_CA_CERTS) on roots whose `claude` endpoints run through commands (`status` prints
 * `idle`, `reload` appends `<personality>` to a file of its root), and a throwaway PostgreSQL
 * server of its own (test/support/postgresServer.ts), a fresh database per fleet.
 * - the baseline: one file-backed daemon with N endpoints; N reloads owed through the file store
 *   (`Reloads.make` over the root, in this process), the time from the request until every
 *   reload command ran (N lines): reloads/s;
 * - the fleet: `city daemon --cluster <url> --cluster-host web-0X --cluster-address
 *   127.0.0.1:<port>` on 1 host, then 3 hosts (three roots, N/3 endpoints each, the peers inserted
 *   in `city_peers` once the host announced itself); N reloads owed in each host's SQL store
 *   (`SqlReloads.make(host)`) and sent as `Reload` messages through a client
 *   (`ClusterRunner.clientLayer`, `EndpointEntity.client`, `discard`: the sender does not wait for
 *   the handler); the time from the first request until N lines: reloads/s;
 * - takeover: a 1-host fleet whose endpoint's reload blocks; its daemon is killed with SIGKILL
 *   in the middle of that reload (the reload owed and its message pending; the cut command left blocked), then started again at
 *   the same address: once after a pause of 2 s (restart -> applied: the line of the reload run
 *   after the restart), once at once when the kill's exit is seen (kill -> applied).
 * Every daemon and every fleet is warmed first (one reload per host, requested, sent and applied
 * before the clock starts); after each round, untimed, its records settle (nothing owed) and the
 * daemons rest 1 s; a reload that neither runs nor stays owed fails the benchmark. Throughput
 * rounds alternate their order (`CITY_BENCH_ROUNDS`,
 * default 3): the median of each side is printed with its rounds.
 * Goal: reloads/s with 3 runners >= reloads/s of the file-backed daemon (medians).
 *
 *   node --import tsx bench/cluster.bench.ts        (CITY_BENCH_RELOADS=200, CITY_BENCH_ROUNDS=3)
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as SqlClient from "@effect/sql/SqlClient"
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import { ensureBundle } from "../scripts/bundle.mjs"
import * as StateRoot from "../src/services/capabilities/StateRoot.ts"
import * as ClusterRunner from "../src/services/cluster/ClusterRunner.ts"
import { EndpointEntity, entityIdOf } from "../src/services/cluster/EndpointEntity.ts"
import * as SqlReloads from "../src/services/cluster/SqlReloads.ts"
import * as Reloads from "../src/services/live/Reloads.ts"
import { freshDatabase } from "../test/support/pgDatabase.ts"
import { startPostgres } from "../test/support/postgresServer.ts"
import { finish, goal, medianOf } from "./harness.ts"
import { freePortNow as freePort } from "../test/support/freePort.ts"

const reloadsN = Number(process.env["CITY_BENCH_RELOADS"] ?? 200)
const rounds = Number(process.env["CITY_BENCH_ROUNDS"] ?? 3)
/** Keeps the temp folder (roots, reload lines, daemon logs) for a look after the run; not for the figures. */
const keep = process.env["CITY_BENCH_KEEP"] === "1"
const binary = join(dirname(fileURLToPath(import.meta.url)), "..", "bin", "city.mjs")

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
const personality = (i: number) => `p${String(i).padStart(4, "0")}`

interface Root {
  readonly root: string
  readonly personalities: ReadonlyArray<string>
  /** The peer documents, as the file store and `city_peers` hold them. */
  readonly peers: ReadonlyArray<{ readonly personality: string; readonly peer: string }>
  /** The lines the reload command appended so far. */
  readonly lines: () => ReadonlyArray<string>
  /** While the file `block` exists, the first reload of `victim` waits before its line. */
  readonly block: (on: boolean) => void
}

/**
 * A state root whose `claude` endpoints run through commands: `status` prints idle, `reload`
 * appends its personality to `runs` (the first reload of `victim` writes its pid to `started` and
 * waits while `block` exists; each appends `victim <pid>`).
 */
const buildRoot = (base: string, name: string, personalities: ReadonlyArray<string>, peerFiles: boolean): Root => {
  const root = join(base, name, "root")
  const work = join(base, name, "work")
  const runs = join(base, name, "runs")
  const started = join(base, name, "started")
  const block = join(base, name, "block")
  mkdirSync(join(root, "peers"), { recursive: true, mode: 0o700 })
  const status = join(base, name, "status")
  const reload = join(base, name, "reload")
  writeFileSync(status, "#!/bin/sh\necho idle\n", { mode: 0o755 })
  writeFileSync(
    reload,
    [
      "#!/bin/sh",
      `if [ "$1" = victim ]; then`,
      `  if [ ! -f '${started}' ]; then echo "$$" > '${started}'; while [ -f '${block}' ]; do sleep 0.05; done; fi`,
      `  echo "victim $$" >> '${runs}'; exit 0`,
      `fi`,
      `echo "$1" >> '${runs}'`,
      ""
    ].join("\n"),
    { mode: 0o755 }
  )
  const cmd = (command: string) => ({ command, args: ["{personality}", "{runtime}"] })
  writeFileSync(
    join(root, "host.json"),
    JSON.stringify({
      schema: 1,
      agent_runtimes: ["claude"],
      channel_runtimes: [],
      profiles: { claude: { commands: { status: cmd(status), reload: cmd(reload) } } }
    })
  )
  const peers = personalities.map((p) => {
    const cwd = join(work, p)
    mkdirSync(cwd, { recursive: true })
    const peer = JSON.stringify({ schema: 1, personality: p, cwd, runtimes: ["claude"], default_runtime: "claude" })
    if (peerFiles) writeFileSync(join(root, "peers", `${p}.json`), peer)
    return { personality: p, peer }
  })
  return {
    root,
    personalities,
    peers,
    lines: () => existsSync(runs) ? readFileSync(runs, "utf8").split("\n").filter((l) => l !== "") : [],
    block: (on) => on ? writeFileSync(block, "") : rmSync(block, { force: true })
  }
}

interface Daemon {
  readonly child: ChildProcess
  readonly readyAt: number
  readonly exited: Promise<void>
  readonly tail: () => string
}

/** `city daemon --poll-ms 100 --http 127.0.0.1:0 ...args`, resolved at its `status page at` line. */
const startDaemon = (root: string, args: ReadonlyArray<string>) =>
  new Promise<Daemon>((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, CITY_ROOT: root }
    delete env["NODE_EXTRA_CA_CERTS"]
    delete env["CITY_PRIVATE_DIR"]
    const child = spawn(process.execPath, [binary, "daemon", "--poll-ms", "100", "--http", "127.0.0.1:0", ...args], {
      env,
      stdio: ["ignore", "pipe", "pipe"]
    })
    const exited = new Promise<void>((done) => child.once("exit", () => done()))
    let tail = ""
    let ready = false
    const logFile = join(root, "..", `daemon-${child.pid}.log`)
    const onData = (chunk: Buffer) => {
      if (keep) writeFileSync(logFile, chunk, { flag: "a" })
      tail = (tail + chunk.toString()).slice(-4000)
      if (!ready && tail.includes("status page at ")) {
        ready = true
        resolve({ child, readyAt: performance.now(), exited, tail: () => tail })
      }
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    child.once("error", reject)
    child.once("exit", (code, signal) => {
      if (!ready) reject(new Error(`city daemon exited ${code ?? signal} before ready:\n${tail}`))
    })
  })

const running: Array<Daemon> = []
const daemon = (root: string, args: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const d = await startDaemon(root, args)
      running.push(d)
      return d
    }),
    (d) => Effect.promise(() => stop(d))
  )
const stop = async (d: Daemon) => {
  if (d.child.exitCode === null && d.child.signalCode === null) d.child.kill("SIGTERM")
  await Promise.race([d.exited, sleep(10_000).then(() => void d.child.kill("SIGKILL"))])
}

/** Resolves with the time at which `done()` first holds (checked every 10 ms), failing after `ms`. */
const until = (what: string, done: () => boolean, ms = 120_000) =>
  Effect.promise(async () => {
    const started = performance.now()
    while (!done()) {
      if (performance.now() - started > ms) throw new Error(`${what}: not within ${ms / 1000} s`)
      await sleep(10)
    }
    return performance.now()
  })

/** The reloads/s of one round: `owe` requests (and sends) `n` reloads; done when `count()` grew by n. */
const throughput = (
  n: number,
  count: () => number,
  owe: Effect.Effect<void, unknown>,
  what: string,
  owedLeft: Effect.Effect<number>,
  detail: Effect.Effect<string> = Effect.succeed("")
) =>
  Effect.gen(function*() {
    const before = count()
    const t0 = performance.now()
    yield* Effect.orDie(owe)
    const t1 = yield* until(what, () => count() >= before + n, 60_000).pipe(
      Effect.catchAllDefect((defect) =>
        Effect.flatMap(detail, (d) => Effect.dieMessage(`${String(defect)} (${count() - before} of ${n} ran${d})`))
      )
    )
    // Untimed: the round's records settle (nothing owed) and the daemons rest 1 s, so the next
    // round starts from an idle fleet.
    yield* Effect.promise(async () => {
      for (let i = 0; i < 600 && (await Effect.runPromise(owedLeft)) > 0; i++) await sleep(50)
    })
    yield* Effect.sleep(1000)
    return n / ((t1 - t0) / 1000)
  })

/** The baseline: one file-backed daemon; its owed reloads through the file store, this process. */
const fileDaemon = (base: string) =>
  Effect.gen(function*() {
    const host = buildRoot(base, "file", ["warm", ...Array.from({ length: reloadsN }, (_, i) => personality(i))], true)
    yield* daemon(host.root, [])
    const reloads = yield* Reloads.make.pipe(
      Effect.provide(StateRoot.layer({ root: host.root })),
      Effect.provide(NodeContext.layer)
    )
    const keys = host.personalities.slice(1).map((p) => ({ runtime: "claude", personality: p }))
    yield* Effect.orDie(reloads.request([{ runtime: "claude", personality: "warm" }], "bench"))
    yield* until("file daemon warm-up", () => host.lines().includes("warm"))
    return (round: number) =>
      throughput(
        reloadsN,
        () => host.lines().length,
        reloads.request(keys, `bench ${round}`),
        "file daemon: every reload",
        Effect.map(Effect.orElseSucceed(reloads.list, () => []), (owed) => owed.length)
      )
  })

interface Fleet {
  readonly url: string
  readonly sql: SqlClient.SqlClient
  readonly context: Context.Context<never>
  readonly send: (host: string, personality: string, id: string) => Effect.Effect<void, unknown>
  readonly reloadsOf: (host: string) => Effect.Effect<Reloads.Reloads["Type"]>
}

/** A fresh database and a client of it (this process's side of the fleet). */
const fleet = (server: string): Effect.Effect<Fleet, unknown, Scope.Scope> =>
  Effect.gen(function*() {
    const url = yield* freshDatabase(server)
    const pg = PgClient.layer({ url: Redacted.make(url) })
    const context = yield* Layer.build(Layer.mergeAll(ClusterRunner.clientLayer.pipe(Layer.provideMerge(pg)), NodeContext.layer))
    const sql = Context.get(context, SqlClient.SqlClient)
    const client = yield* Effect.provide(EndpointEntity.client, context)
    return {
      url,
      sql,
      context: context as Context.Context<never>,
      send: (host, p, id) =>
        client(entityIdOf({ host, runtime: "claude", personality: p })).Reload({ id, reason: "bench" }, { discard: true }),
      reloadsOf: (host) => SqlReloads.make(host).pipe(Effect.provide(context))
    }
  })

/** One host of a fleet: its root, its daemon, its peers in `city_peers`, warmed. */
const fleetHost = (f: Fleet, base: string, host: string, personalities: ReadonlyArray<string>, port: number) =>
  Effect.gen(function*() {
    const root = buildRoot(base, host, ["warm", ...personalities], false)
    const args = ["--cluster", f.url, "--cluster-host", host, "--cluster-address", `127.0.0.1:${port}`]
    const started = yield* daemon(root.root, args)
    const announced = Effect.map(
      Effect.orElseSucceed(f.sql<{ readonly host: string }>`SELECT host FROM city_hosts`, () => []),
      (rows) => rows.some((row) => row.host === host)
    )
    while (!(yield* announced)) yield* Effect.sleep(50)
    yield* Effect.forEach(
      root.peers,
      ({ peer, personality: p }) => f.sql`INSERT INTO city_peers (host, personality, peer) VALUES (${host}, ${p}, ${peer})`,
      { concurrency: 8, discard: true }
    )
    const reloads = yield* f.reloadsOf(host)
    yield* Effect.orDie(reloads.request([{ runtime: "claude", personality: "warm" }], "bench"))
    yield* f.send(host, "warm", `warm-${host}`)
    yield* until(`${host} warm-up`, () => root.lines().includes("warm"))
    return { host, root, reloads, args, daemon: started }
  })

/** A fleet of `hosts` hosts with N endpoints spread over them: a round owes and sends N reloads. */
const fleetOf = (server: string, base: string, hosts: number) =>
  Effect.gen(function*() {
    const f = yield* fleet(server)
    const members = yield* Effect.forEach(Array.from({ length: hosts }, (_, h) => h), (h) =>
      Effect.flatMap(Effect.promise(freePort), (port) =>
        fleetHost(
          f,
          join(base, `fleet${hosts}`),
          `web-0${h + 1}`,
          Array.from({ length: reloadsN }, (_, i) => personality(i)).filter((_, i) => i % hosts === h),
          port
        )))
    const count = () => members.reduce((sum, m) => sum + m.root.lines().length, 0)
    return (round: number) =>
      throughput(
        reloadsN,
        count,
        Effect.forEach(members, (m) =>
          Effect.zipRight(
            m.reloads.request(m.root.personalities.slice(1).map((p) => ({ runtime: "claude", personality: p })), `bench ${round}`),
            Effect.forEach(m.root.personalities.slice(1), (p) => f.send(m.host, p, `r${round}-${p}`), { concurrency: 16, discard: true })
          ), { concurrency: "unbounded", discard: true }),
        `${hosts}-host fleet: every reload`,
        Effect.map(
          Effect.forEach(members, (m) => Effect.map(Effect.orElseSucceed(m.reloads.list, () => []), (owed) => owed.length)),
          (counts) => counts.reduce((a, b) => a + b, 0)
        ),
        // A round that does not finish: how many of each host's endpoints still owe a reload (the
        // rest of the missing ones were neither run nor left owed: lost).
        Effect.map(
          Effect.forEach(members, (m) =>
            Effect.map(
              Effect.orElseSucceed(m.reloads.list, () => []),
              (owed) => `; ${m.host}: ${m.root.lines().length} lines in all, ${owed.length} endpoint(s) still owed`
            )),
          (parts) => parts.join("")
        )
      )
  })

/**
 * Takeover: the victim's reload blocks, the daemon is killed with SIGKILL in it, then started again
 * at the same address after `pauseMs`: [restart -> applied, kill -> applied], ms.
 */
const takeover = (server: string, base: string, name: string, pauseMs: number) =>
  Effect.gen(function*() {
    const f = yield* fleet(server)
    const port = yield* Effect.promise(freePort)
    const m = yield* fleetHost(f, join(base, name), "web-01", ["victim"], port)
    const first = running.at(-1)!
    m.root.block(true)
    yield* Effect.orDie(m.reloads.request([{ runtime: "claude", personality: "victim" }], "bench"))
    yield* f.send("web-01", "victim", "takeover")
    const startedFile = join(base, name, "web-01", "started")
    yield* until("victim's reload started", () => existsSync(startedFile) && readFileSync(startedFile, "utf8").trim() !== "")
    const killedAt = performance.now()
    first.child.kill("SIGKILL")
    yield* Effect.promise(() => first.exited)
    const cut = readFileSync(startedFile, "utf8").trim()
    // The cut command stays blocked (the restarted daemon is to end it before its own run); should
    // it finish instead, its line `victim <its pid>` is told apart by its pid.
    if (pauseMs > 0) yield* Effect.sleep(pauseMs)
    const restartAt = performance.now()
    yield* daemon(m.root.root, m.args)
    const appliedAt = yield* until(
      "victim's reload after the restart",
      () => m.root.lines().some((l) => l.startsWith("victim ") && l !== `victim ${cut}`)
    )
    const cutRan = m.root.lines().includes(`victim ${cut}`)
    m.root.block(false)
    return [appliedAt - restartAt, appliedAt - killedAt, cutRan] as const
  })

const main = Effect.gen(function*() {
  yield* Effect.promise(() => ensureBundle())
  const server = yield* Effect.acquireRelease(Effect.promise(() => startPostgres()), (s) => Effect.promise(() => s.stop()))
  const base = mkdtempSync(join(tmpdir(), "city-cluster-bench-"))
  yield* Effect.addFinalizer(() => Effect.sync(() => keep ? console.error(`(kept) ${base}`) : rmSync(base, { recursive: true, force: true })))

  const sides = [
    { name: "file-backed daemon, 1 host", run: yield* fileDaemon(base) },
    { name: "fleet, 1 runner", run: yield* fleetOf(server.url, base, 1) },
    { name: "fleet, 3 runners", run: yield* fleetOf(server.url, base, 3) }
  ]
  const figures = sides.map(() => [] as Array<number>)
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? [0, 1, 2] : [2, 1, 0]
    for (const i of order) figures[i]!.push(yield* sides[i]!.run(r))
  }
  const medians = figures.map((f) => medianOf(f))
  console.log(`owed reloads: ${reloadsN} endpoints (Commands host: status idle, reload appends a line), --poll-ms 100, ${rounds} rounds, median`)
  sides.forEach((side, i) =>
    console.log(
      `  ${side.name.padEnd(28)} ${medians[i]!.toFixed(1).padStart(7)} reloads/s   (rounds: ${figures[i]!.map((x) => x.toFixed(1)).join(", ")})`
    )
  )

  const [restartToApplied, , cutA] = yield* Effect.scoped(takeover(server.url, base, "takeover-paused", 2000))
  const [, killToApplied, cutB] = yield* Effect.scoped(takeover(server.url, base, "takeover-immediate", 0))
  console.log(`takeover after SIGKILL mid-reload, restarted at the same address (1 host):`)
  console.log(`  restart (2 s after the kill) -> owed reload applied: ${restartToApplied.toFixed(0)} ms`)
  console.log(`  kill -> applied, restart at once:                    ${killToApplied.toFixed(0)} ms`)
  if (cutA || cutB) console.log(`  note: the command cut by the kill finished (its own line) before the reload after the restart`)
  goal(
    "reloads/s with 3 runners >= the file-backed daemon's (medians)",
    medians[2]! >= medians[0]!,
    `${medians[2]!.toFixed(1)} vs ${medians[0]!.toFixed(1)} reloads/s (${(medians[2]! / medians[0]!).toFixed(2)}x)`
  )
  finish()
})

Effect.runPromise(Effect.scoped(main)).catch((error: unknown) => {
  for (const d of running) if (d.child.exitCode === null && d.child.signalCode === null) d.child.kill("SIGKILL")
  console.error(error)
  process.exitCode = 1
})
