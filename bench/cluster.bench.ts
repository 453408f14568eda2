/**
 * Owed reloads on a fleet as a user makes them (docs/cluster.md, "Benchmark"): whole `city`
 * processes (bin/city.mjs, without NODE_EXTRA_CA_CERTS) on roots whose `claude` endpoints run
 * through commands (`status` prints `idle`, `reload` appends `<personality>` to a file of its
 * root), a throwaway PostgreSQL server of its own (test/support/postgresServer.ts) and a fresh
 * database per fleet. Owed reloads travel one way (docs/cluster.md, "Owed reloads: one path"):
 * owed in the host's store, applied under the claim; nothing here owes or sends anything from
 * this process.
 * - the daemon's path, N edits: `city daemon --poll-ms 100` per root; a round rewrites every
 *   endpoint's launch-read file (`<cwd>/.mcp.json`), each daemon's watcher owes a reload per edit
 *   in its host's store and its worker applies it; the time from the first edit until N lines:
 *   reloads/s. The baseline is one file-backed daemon with N endpoints; the subjects are a fleet
 *   of 1 host and of 3 hosts (N/3 endpoints each), each host's `host.json` naming the fleet, its
 *   peers imported from its files at its first start;
 * - the verb's path: `city reload <p>` as a process on an idle endpoint (the verb owes the reload
 *   and applies it itself), on the file-backed root and on the 1-host fleet's root, paired rounds
 *   alternating their order: the wall time of each and their ratio;
 * - takeover: a 1-host fleet whose endpoint's reload blocks; its daemon is killed with SIGKILL in
 *   the middle of that reload (the reload owed, its claim a dead process's, the cut command left
 *   blocked), then started again at the same address: once after a pause of 2 s (restart ->
 *   applied: the line of the reload run after the restart), once at once when the kill's exit is
 *   seen (kill -> applied).
 * Every daemon is warmed first (one edit applied before the clock starts, and every endpoint's
 * fingerprint baseline taken: an endpoint without one adopts what it finds and owes nothing);
 * after each throughput round, untimed, the records settle (nothing owed) and the daemons rest
 * 1 s; a reload that neither runs nor stays owed fails the benchmark. Throughput rounds alternate
 * their order (`CITY_BENCH_ROUNDS`, default 3): the median of each side is printed with its
 * rounds. Goal: reloads/s with 3 hosts >= reloads/s of the file-backed daemon (medians).
 *
 *   node --import tsx bench/cluster.bench.ts        (CITY_BENCH_RELOADS=200, CITY_BENCH_ROUNDS=3)
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import { ensureBundle } from "../scripts/bundle.mjs"
import { freshDatabase } from "../test/support/pgDatabase.ts"
import { startPostgres } from "../test/support/postgresServer.ts"
import { finish, goal, medianOf, pairedRounds } from "./harness.ts"
import { freePortNow as freePort } from "../test/support/freePort.ts"

const reloadsN = Number(process.env["CITY_BENCH_RELOADS"] ?? 200)
const rounds = Number(process.env["CITY_BENCH_ROUNDS"] ?? 3)
/** Rounds of `city reload` per side. */
const verbRounds = 7
/** Keeps the temp folder (roots, reload lines, daemon logs) for a look after the run; not for the figures. */
const keep = process.env["CITY_BENCH_KEEP"] === "1"
const binary = join(dirname(fileURLToPath(import.meta.url)), "..", "bin", "city.mjs")

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
const personality = (i: number) => `p${String(i).padStart(4, "0")}`

/** The environment of every `city` process here: the root, and no CA certificates to parse. */
const envOf = (root: string): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env, CITY_ROOT: root }
  delete env["NODE_EXTRA_CA_CERTS"]
  delete env["CITY_PRIVATE_DIR"]
  return env
}

interface Root {
  readonly root: string
  readonly personalities: ReadonlyArray<string>
  /** The lines the reload command appended so far. */
  readonly lines: () => ReadonlyArray<string>
  /** Rewrites the launch-read file of each personality: one owed reload each. */
  readonly edit: (personalities: ReadonlyArray<string>) => void
  /** Whether every endpoint has its fingerprint baseline. */
  readonly baselined: () => boolean
  /** Owed-work records left on the root's files (the file-backed daemon's store). */
  readonly owedFiles: () => number
  /** While the file `block` exists, the first reload of `victim` waits before its line. */
  readonly block: (on: boolean) => void
}

/**
 * A state root whose `claude` endpoints run through commands: `status` prints idle, `reload`
 * appends its personality to `runs` (the first reload of `victim` writes its pid to `started` and
 * waits while `block` exists; each appends `victim <pid>`). Its peers are files; `cluster` names
 * the fleet in host.json (the daemon's first start imports the files).
 */
const buildRoot = (
  base: string,
  name: string,
  personalities: ReadonlyArray<string>,
  cluster?: { readonly url: string; readonly host: string; readonly address: string }
): Root => {
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
      profiles: { claude: { commands: { status: cmd(status), reload: cmd(reload) } } },
      ...(cluster === undefined ? {} : { cluster })
    })
  )
  for (const p of personalities) {
    const cwd = join(work, p)
    mkdirSync(cwd, { recursive: true })
    writeFileSync(
      join(root, "peers", `${p}.json`),
      JSON.stringify({ schema: 1, personality: p, cwd, runtimes: ["claude"], default_runtime: "claude" })
    )
  }
  let edits = 0
  const fingerprints = join(root, "state", "fingerprints")
  const reloads = join(root, "state", "reloads")
  return {
    root,
    personalities,
    lines: () => existsSync(runs) ? readFileSync(runs, "utf8").split("\n").filter((l) => l !== "") : [],
    edit: (ps) => {
      edits++
      for (const p of ps) writeFileSync(join(work, p, ".mcp.json"), JSON.stringify({ mcpServers: {}, edit: edits }))
    },
    baselined: () => existsSync(fingerprints) && readdirSync(fingerprints).filter((f) => f.endsWith(".json")).length >= personalities.length,
    owedFiles: () => existsSync(reloads) ? readdirSync(reloads).filter((f) => f.endsWith(".json")).length : 0,
    block: (on) => on ? writeFileSync(block, "") : rmSync(block, { force: true })
  }
}

interface Daemon {
  readonly child: ChildProcess
  readonly exited: Promise<void>
}

/** `city daemon --poll-ms 100 --http 127.0.0.1:0` on `root`, resolved at its `status page at` line. */
const startDaemon = (root: string) =>
  new Promise<Daemon>((resolve, reject) => {
    const child = spawn(process.execPath, [binary, "daemon", "--poll-ms", "100", "--http", "127.0.0.1:0"], {
      env: envOf(root),
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
        resolve({ child, exited })
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
const daemon = (root: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const d = await startDaemon(root)
      running.push(d)
      return d
    }),
    (d) => Effect.promise(() => stop(d))
  )
const stop = async (d: Daemon) => {
  if (d.child.exitCode === null && d.child.signalCode === null) d.child.kill("SIGTERM")
  await Promise.race([d.exited, sleep(10_000).then(() => void d.child.kill("SIGKILL"))])
}

/** `city ...args` on `root` as a process: its wall time in ms; fails unless it exits 0 printing `expect`. */
const cityRun = (root: string, args: ReadonlyArray<string>, expect: string) =>
  new Promise<number>((resolve, reject) => {
    const started = performance.now()
    execFile(process.execPath, [binary, ...args], { env: envOf(root), encoding: "utf8" }, (error, stdout, stderr) => {
      const elapsed = performance.now() - started
      if (error !== null || !stdout.includes(expect)) reject(new Error(`city ${args.join(" ")}: ${error?.message ?? ""}\n${stdout}${stderr}`))
      else resolve(elapsed)
    })
  })

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

/** One throughput round: `owe` makes `n` owed reloads; done when `count()` grew by n. Reloads/s. */
const throughput = (
  n: number,
  count: () => number,
  owe: () => void,
  what: string,
  owedLeft: Effect.Effect<number>,
  detail: Effect.Effect<string>
) =>
  Effect.gen(function*() {
    const before = count()
    const t0 = performance.now()
    owe()
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

/** A started daemon on `root`, warm: one edit applied, every endpoint's fingerprint baseline taken. */
const warmDaemon = (root: Root, name: string) =>
  Effect.gen(function*() {
    const d = yield* daemon(root.root)
    yield* until(`${name}: every endpoint's fingerprint baseline`, root.baselined)
    root.edit(["warm"])
    yield* until(`${name} warm-up`, () => root.lines().includes("warm"))
    return d
  })

/** The baseline: one file-backed daemon. */
const fileDaemon = (base: string) =>
  Effect.gen(function*() {
    const host = buildRoot(base, "file", ["warm", ...Array.from({ length: reloadsN }, (_, i) => personality(i))])
    yield* warmDaemon(host, "file daemon")
    const round = () =>
      throughput(
        reloadsN,
        () => host.lines().length,
        () => host.edit(host.personalities.slice(1)),
        "file daemon: every reload",
        Effect.sync(() => host.owedFiles()),
        Effect.sync(() => `; ${host.owedFiles()} record(s) still owed`)
      )
    return { round, root: host }
  })

/** A fresh database and this process's client of it (it only reads how much is owed). */
const database = (server: string): Effect.Effect<{ readonly url: string; readonly sql: SqlClient.SqlClient }, never, Scope.Scope> =>
  Effect.gen(function*() {
    const url = yield* freshDatabase(server)
    const context = yield* Layer.build(Layer.orDie(PgClient.layer({ url: Redacted.make(url), maxConnections: 2 })))
    return { url, sql: yield* Effect.provide(SqlClient.SqlClient, context) }
  })

/** How many endpoints of `host` (or of every host) still owe work. */
const owedRows = (sql: SqlClient.SqlClient, host?: string) =>
  Effect.map(
    Effect.orElseSucceed(
      host === undefined
        ? sql<{ readonly n: number }>`SELECT COUNT(*) AS n FROM city_owed_reloads`
        : sql<{ readonly n: number }>`SELECT COUNT(*) AS n FROM city_owed_reloads WHERE host = ${host}`,
      () => [{ n: -1 }]
    ),
    (rows) => Number(rows[0]?.n ?? 0)
  )

/** A fleet of `hosts` hosts with N endpoints spread over them: a round edits N launch-read files. */
const fleetOf = (server: string, base: string, hosts: number) =>
  Effect.gen(function*() {
    const { sql, url } = yield* database(server)
    const members = yield* Effect.forEach(Array.from({ length: hosts }, (_, h) => h), (h) =>
      Effect.gen(function*() {
        const host = `web-0${h + 1}`
        const port = yield* Effect.promise(freePort)
        const root = buildRoot(
          join(base, `fleet${hosts}`),
          host,
          ["warm", ...Array.from({ length: reloadsN }, (_, i) => personality(i)).filter((_, i) => i % hosts === h)],
          { url, host, address: `127.0.0.1:${port}` }
        )
        yield* warmDaemon(root, host)
        return { host, root }
      }))
    const count = () => members.reduce((sum, m) => sum + m.root.lines().length, 0)
    const round = () =>
      throughput(
        reloadsN,
        count,
        () => members.forEach((m) => m.root.edit(m.root.personalities.slice(1))),
        `${hosts}-host fleet: every reload`,
        owedRows(sql),
        // A round that does not finish: how many of each host's endpoints still owe a reload (the
        // rest of the missing ones were neither run nor left owed: lost).
        Effect.map(
          Effect.forEach(members, (m) =>
            Effect.map(owedRows(sql, m.host), (owed) => `; ${m.host}: ${m.root.lines().length} lines in all, ${owed} endpoint(s) still owed`)),
          (parts) => parts.join("")
        )
      )
    return { round, root: members[0]!.root }
  })

/**
 * Takeover: the victim's reload blocks, the daemon is killed with SIGKILL in it, then started again
 * at the same address after `pauseMs`: [restart -> applied, kill -> applied], ms.
 */
const takeover = (server: string, base: string, name: string, pauseMs: number) =>
  Effect.gen(function*() {
    const { url } = yield* database(server)
    const port = yield* Effect.promise(freePort)
    const root = buildRoot(join(base, name), "web-01", ["warm", "victim"], { url, host: "web-01", address: `127.0.0.1:${port}` })
    const first = yield* warmDaemon(root, name)
    root.block(true)
    root.edit(["victim"])
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
    yield* daemon(root.root)
    const appliedAt = yield* until(
      "victim's reload after the restart",
      () => root.lines().some((l) => l.startsWith("victim ") && l !== `victim ${cut}`)
    )
    const cutRan = root.lines().includes(`victim ${cut}`)
    root.block(false)
    return [appliedAt - restartAt, appliedAt - killedAt, cutRan] as const
  })

const main = Effect.gen(function*() {
  yield* Effect.promise(() => ensureBundle())
  const server = yield* Effect.acquireRelease(Effect.promise(() => startPostgres()), (s) => Effect.promise(() => s.stop()))
  const base = mkdtempSync(join(tmpdir(), "city-cluster-bench-"))
  yield* Effect.addFinalizer(() => Effect.sync(() => keep ? console.error(`(kept) ${base}`) : rmSync(base, { recursive: true, force: true })))

  const file = yield* fileDaemon(base)
  const one = yield* fleetOf(server.url, base, 1)
  const sides = [
    { name: "file-backed daemon, 1 host", run: file.round },
    { name: "fleet, 1 host", run: one.round },
    { name: "fleet, 3 hosts", run: (yield* fleetOf(server.url, base, 3)).round }
  ]
  const figures = sides.map(() => [] as Array<number>)
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? [0, 1, 2] : [2, 1, 0]
    for (const i of order) figures[i]!.push(yield* sides[i]!.run())
  }
  const medians = figures.map((f) => medianOf(f))
  console.log(
    `owed reloads by edits of launch-read files: ${reloadsN} endpoints (Commands host: status idle, reload appends a line), ` +
      `city daemon --poll-ms 100, PostgreSQL, ${rounds} rounds, median`
  )
  sides.forEach((side, i) =>
    console.log(
      `  ${side.name.padEnd(28)} ${medians[i]!.toFixed(1).padStart(7)} reloads/s   (rounds: ${figures[i]!.map((x) => x.toFixed(1)).join(", ")})`
    )
  )

  // The verb: `city reload warm` on an idle endpoint, the file-backed root against the fleet's.
  const verb = yield* Effect.promise(() =>
    pairedRounds(
      verbRounds,
      () => cityRun(file.root.root, ["reload", "warm"], "runtime=applied"),
      () => cityRun(one.root.root, ["reload", "warm"], "runtime=applied")
    )
  )
  console.log(`city reload <p> as a process (idle endpoint, applied by the verb), ${verbRounds} paired rounds, median:`)
  console.log(`  file-backed root ${medianOf(verb.baseline).toFixed(0)} ms, fleet host ${medianOf(verb.subject).toFixed(0)} ms: ` +
    `ratio median ${verb.median.toFixed(2)}x min ${verb.min.toFixed(2)}x`)

  const [restartToApplied, , cutA] = yield* Effect.scoped(takeover(server.url, base, "takeover-paused", 2000))
  const [, killToApplied, cutB] = yield* Effect.scoped(takeover(server.url, base, "takeover-immediate", 0))
  console.log(`takeover after SIGKILL mid-reload, restarted at the same address (1 host):`)
  console.log(`  restart (2 s after the kill) -> owed reload applied: ${restartToApplied.toFixed(0)} ms`)
  console.log(`  kill -> applied, restart at once:                    ${killToApplied.toFixed(0)} ms`)
  if (cutA || cutB) console.log(`  note: the command cut by the kill finished (its own line) before the reload after the restart`)
  goal(
    "reloads/s with 3 hosts >= the file-backed daemon's (medians)",
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
