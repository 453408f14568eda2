/**
 * A daemon at scale, as whole processes (docs/live-application.md, "Fingerprints"): a state root
 * with 5,000 peers × 2 runtimes (claude, codex: each peer its own cwd with `.mcp.json`,
 * `.claude/settings.json` and `.codex/config.toml`, so every launch-read folder is real; both
 * runtimes on the Commands host, whose `status` prints `idle`, so every endpoint is live and
 * idle), the files written directly. The real `city daemon --http 127.0.0.1:0` (bin/city.mjs, the
 * default `--poll-ms` 3000 and `--fingerprint-poll-ms` 300000), without NODE_EXTRA_CA_CERTS:
 * - start to ready: spawn to its `status page at` line;
 * - settled: after ready, until two 2 s windows in a row use under 25 % of a core (the first
 *   fingerprint pass and the watches are set up by then), at most 180 s;
 * - RSS (VmRSS of /proc/<pid>/status) once settled, and the idle CPU (utime + stime of
 *   /proc/<pid>/stat) over the next `CITY_BENCH_IDLE_S` seconds (default 60);
 * - `GET /api/status`: the median of 20 requests, one at a time;
 * - write → owed: 15 edits of one endpoint's `.mcp.json` (new content each), the time from the
 *   write to the daemon's `surfaces changed: reload owed` line for that endpoint, beside a bare
 *   `fs.watch` on the same folder in this process (write to its callback) in the same edits.
 * Every endpoint's fingerprints are written as a launch records them (so the start is a restart's,
 * not the one-time adoption of every endpoint); a `surfaces changed` line before the edits fails
 * the benchmark. The baseline: the same daemon at 50 peers × 2 runtimes with `--fingerprint-poll-ms 3000` (a stat
 * poll every 3 s, as before the watch), its idle CPU over the same window.
 * Goals: write → owed ≤ 2× the bare fs.watch callback (medians); idle CPU at 10,000 endpoints ≤
 * the idle CPU of the 3 s poll at 100 endpoints. Start and RSS are reported.
 *
 *   node --import tsx bench/scale.bench.ts        (CITY_BENCH_PEERS=5000, CITY_BENCH_IDLE_S=60)
 *
 * For profiling: `CITY_BENCH_CPU_PROF=<folder>` starts the large daemon with `--cpu-prof` into that
 * folder and stops it right after the idle window (the profile's last `CITY_BENCH_IDLE_S` seconds
 * are the idle ones; bench/profile-tail.mjs summarizes them); `CITY_BENCH_BASELINE=0` skips the
 * baseline daemon; `CITY_BENCH_NODE_ARGS` (with `CITY_BENCH_CPU_PROF`) adds Node options to the
 * large daemon's, e.g. `--require <preload>` to count calls. None of them is for the figures.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, watch, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import { ensureBundle } from "../scripts/bundle.mjs"
import { finish, goal, medianOf } from "./harness.ts"

const peers = Number(process.env["CITY_BENCH_PEERS"] ?? 5_000)
const baselinePeers = 50
const idleS = Number(process.env["CITY_BENCH_IDLE_S"] ?? 60)
const cpuProf = process.env["CITY_BENCH_CPU_PROF"]
const nodeArgs = (process.env["CITY_BENCH_NODE_ARGS"] ?? "").split(" ").filter((a) => a !== "")
const runBaseline = process.env["CITY_BENCH_BASELINE"] !== "0"
const edits = 15
const gets = 20
const binary = join(dirname(fileURLToPath(import.meta.url)), "..", "bin", "city.mjs")
const ticksPerSecond = 100 // USER_HZ on Linux

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** A state root with `n` peers, each with claude and codex, every launch-read file written. */
const buildRoot = (base: string, n: number) => {
  const root = join(base, "root")
  const work = join(base, "work")
  mkdirSync(join(root, "peers"), { recursive: true, mode: 0o700 })
  const fingerprints = join(root, "state", "fingerprints")
  mkdirSync(fingerprints, { recursive: true, mode: 0o700 })
  // One script for every verb: `status` prints idle, the others do nothing and succeed.
  const agent = join(base, "agent")
  writeFileSync(agent, `#!/bin/sh\n[ "$1" = status ] && echo idle\nexit 0\n`, { mode: 0o755 })
  const verb = (name: string) => ({ command: agent, args: [name, "{personality}", "{runtime}"] })
  const profile = { commands: { status: verb("status"), reload: verb("reload"), retire: verb("retire"), kill: verb("kill") } }
  writeFileSync(
    join(root, "host.json"),
    JSON.stringify({ schema: 1, agent_runtimes: ["claude", "codex"], channel_runtimes: [], profiles: { claude: profile, codex: profile } })
  )
  for (let i = 0; i < n; i++) {
    const personality = `p${String(i).padStart(5, "0")}`
    const cwd = join(work, personality)
    mkdirSync(join(cwd, ".claude"), { recursive: true })
    mkdirSync(join(cwd, ".codex"))
    writeFileSync(join(cwd, ".mcp.json"), `{"mcpServers":{}}\n`)
    writeFileSync(join(cwd, ".claude", "settings.json"), `{"hooks":{}}\n`)
    writeFileSync(join(cwd, ".codex", "config.toml"), `model = "o4"\n`)
    // The baselines a launch would have recorded (Fingerprints.ts), so the start is a restart's,
    // not the one-time adoption of 10,000 endpoints.
    const print = (file: string) => {
      const info = statSync(file)
      const hash = createHash("sha256").update(readFileSync(file)).digest("hex")
      return [file, { hash, size: info.size, mtimeMs: Math.trunc(info.mtimeMs), ino: info.ino }] as const
    }
    const recorded = (runtime: string, files: ReadonlyArray<readonly [string, unknown]>) =>
      writeFileSync(
        join(fingerprints, `${runtime}-${personality}.json`),
        JSON.stringify({ schema: 1, recorded_at: "2025-01-01T00:00:00.000Z", files: Object.fromEntries(files) }),
        { mode: 0o600 }
      )
    recorded("claude", [print(join(cwd, ".mcp.json")), print(join(cwd, ".claude", "settings.json"))])
    recorded("codex", [print(join(cwd, ".codex", "config.toml")), [join(cwd, ".codex", "hooks.json"), { absent: true }]])
    writeFileSync(
      join(root, "peers", `${personality}.json`),
      JSON.stringify({ schema: 1, personality, cwd, runtimes: ["claude", "codex"], default_runtime: "claude" })
    )
  }
  return { root, cwdOf: (i: number) => join(work, `p${String(i).padStart(5, "0")}`) }
}

/** utime + stime of a process, in seconds. */
const cpuOf = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond
}

const rssMiB = (pid: number) => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmRSS:")) ?? ""
  return Number(line.replace(/\D+/g, "")) / 1024
}

interface Daemon {
  readonly child: ChildProcess
  readonly pid: number
  readonly readyMs: number
  readonly url: string
  /** Resolves at the next log line containing every one of `parts`. */
  readonly next: (parts: ReadonlyArray<string>) => Promise<number>
  readonly stop: () => Promise<void>
  /** The last lines of its log. */
  readonly tail: () => string
  /** How many `surfaces changed` lines it logged so far. */
  readonly surfaces: () => number
}

const startDaemon = (root: string, args: ReadonlyArray<string>, profileDir?: string) =>
  new Promise<Daemon>((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, CITY_ROOT: root }
    delete env["NODE_EXTRA_CA_CERTS"]
    delete env["CITY_PRIVATE_DIR"]
    const started = performance.now()
    const profile = profileDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${profileDir}`, ...nodeArgs]
    const child = spawn(process.execPath, [...profile, binary, "daemon", "--http", "127.0.0.1:0", ...args], {
      env,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let pending = ""
    let tail = ""
    let ready = false
    let surfaces = 0
    const waiters: Array<{ parts: ReadonlyArray<string>; done: (at: number) => void }> = []
    const onData = (chunk: Buffer) => {
      const at = performance.now()
      pending += chunk.toString()
      const lines = pending.split("\n")
      pending = lines.pop() ?? ""
      for (const line of lines) {
        tail = (tail + line + "\n").slice(-4000)
        if (line.includes("surfaces changed")) surfaces++
        if (!ready && line.includes("status page at ")) {
          ready = true
          const url = /status page at (\S+?)"?$/.exec(line)?.[1] ?? ""
          const exited = new Promise<void>((done) => child.once("exit", () => done()))
          resolve({
            child,
            pid: child.pid ?? 0,
            readyMs: at - started,
            url: url.replace(/"$/, ""),
            next: (parts) => new Promise((done) => waiters.push({ parts, done })),
            stop: () => {
              child.kill("SIGTERM")
              return exited
            },
            tail: () => tail,
            surfaces: () => surfaces
          })
        }
        for (let k = waiters.length - 1; k >= 0; k--) {
          const w = waiters[k]!
          if (w.parts.every((p) => line.includes(p))) {
            waiters.splice(k, 1)
            w.done(at)
          }
        }
      }
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    child.once("error", reject)
    child.once("exit", (code, signal) => {
      if (!ready) reject(new Error(`city daemon exited ${code ?? signal} before ready:\n${tail}`))
    })
  })

/** Waits until two 2 s windows in a row use under 25 % of a core (at most 180 s); the seconds waited. */
const settle = async (pid: number) => {
  const started = performance.now()
  let quiet = 0
  while (quiet < 2 && performance.now() - started < 180_000) {
    const before = cpuOf(pid)
    await sleep(2000)
    quiet = cpuOf(pid) - before < 0.5 ? quiet + 1 : 0
  }
  return (performance.now() - started) / 1000
}

/** Idle CPU over `idleS` seconds, as a percentage of one core. */
const idleCpu = async (pid: number) => {
  const before = cpuOf(pid)
  const t0 = performance.now()
  await sleep(idleS * 1000)
  return ((cpuOf(pid) - before) / ((performance.now() - t0) / 1000)) * 100
}

const statusLatency = async (url: string) => {
  const times: Array<number> = []
  for (let i = 0; i < gets + 2; i++) {
    const t0 = performance.now()
    const response = await fetch(new URL("/api/status", url))
    if (!response.ok) throw new Error(`GET /api/status: ${response.status}`)
    await response.text()
    if (i >= 2) times.push(performance.now() - t0)
  }
  return medianOf(times)
}

/** Edits `<cwd>/.mcp.json` `edits` times: the daemon's write → owed and the bare fs.watch callback, ms. */
const writeToOwed = async (daemon: Daemon, cwd: string, identity: string) => {
  const file = join(cwd, ".mcp.json")
  const owed: Array<number> = []
  const bare: Array<number> = []
  let seen: ((at: number) => void) | undefined
  const watcher = watch(cwd, (_event, name) => {
    if (name === ".mcp.json" && seen !== undefined) {
      const done = seen
      seen = undefined
      done(performance.now())
    }
  })
  try {
    for (let i = 0; i < edits + 1; i++) {
      const line = daemon.next(["surfaces changed: reload owed", `endpoint=${identity}`])
      const settled = daemon.next(["owed reload", `endpoint=${identity}`])
      const callback = new Promise<number>((done) => (seen = done))
      const t0 = performance.now()
      writeFileSync(file, `{"mcpServers":{"edit${i}":{"command":"/bin/true","args":[]}}}\n`)
      const [atCallback, atOwed] = await Promise.race([
        Promise.all([callback, line]),
        sleep(30_000).then(() =>
          Promise.reject(new Error(`no "surfaces changed: reload owed" for ${identity} within 30 s; the log's end:\n${daemon.tail()}`))
        )
      ])
      // The applier settles the reload before the next edit (or 5 s pass).
      await Promise.race([settled, sleep(5000)])
      await sleep(200)
      if (i === 0) continue // warm-up
      bare.push(atCallback - t0)
      owed.push(atOwed - t0)
    }
  } finally {
    watcher.close()
  }
  return { owed: medianOf(owed), bare: medianOf(bare), owedMin: Math.min(...owed), bareMin: Math.min(...bare) }
}

const main = async () => {
  await ensureBundle()
  const bases: Array<string> = []
  const daemons: Array<Daemon> = []
  try {
    // The baseline: 100 endpoints, every endpoint polled every 3 s.
    const smallBase = mkdtempSync(join(tmpdir(), "city-scale-bench-"))
    bases.push(smallBase)
    const small = buildRoot(smallBase, baselinePeers)
    let baselineCpu = Number.NaN
    let baselineReadyMs = Number.NaN
    if (runBaseline) {
      const baseline = await startDaemon(small.root, ["--fingerprint-poll-ms", "3000"])
      daemons.push(baseline)
      await settle(baseline.pid)
      baselineCpu = await idleCpu(baseline.pid)
      baselineReadyMs = baseline.readyMs
      console.error(`(progress) baseline idle CPU ${baselineCpu.toFixed(2)} %`)
      await baseline.stop()
    }

    const base = mkdtempSync(join(tmpdir(), "city-scale-bench-"))
    bases.push(base)
    const t0 = performance.now()
    const big = buildRoot(base, peers)
    const buildS = (performance.now() - t0) / 1000
    const endpoints = peers * 2
    const daemon = await startDaemon(big.root, [], cpuProf)
    daemons.push(daemon)
    const settledS = await settle(daemon.pid)
    if (daemon.surfaces() > 0) throw new Error(`nothing was edited, yet the daemon logged ${daemon.surfaces()} "surfaces changed" lines:\n${daemon.tail()}`)
    const rss = rssMiB(daemon.pid)
    console.error(`(progress) ready ${daemon.readyMs.toFixed(0)} ms, settled ${settledS.toFixed(0)} s, RSS ${rss.toFixed(0)} MiB`)
    const cpu = await idleCpu(daemon.pid)
    if (cpuProf !== undefined) {
      console.error(`(progress) idle CPU ${cpu.toFixed(2)} %; profile written to ${cpuProf}`)
      await daemon.stop()
      return
    }
    const api = await statusLatency(daemon.url)
    console.error(`(progress) idle CPU ${cpu.toFixed(2)} %, GET /api/status ${api.toFixed(1)} ms`)
    const latency = await writeToOwed(daemon, big.cwdOf(Math.floor(peers / 2)), `claude-p${String(Math.floor(peers / 2)).padStart(5, "0")}`)
    const stopping = performance.now()
    await daemon.stop()
    const stopMs = performance.now() - stopping

    console.log(
      `city daemon at ${endpoints} endpoints (${peers} peers x claude+codex, Commands host, idle), --http 127.0.0.1:0; ` +
        `root written in ${buildS.toFixed(1)} s`
    )
    console.log(`  start to ready ("status page at"):   ${daemon.readyMs.toFixed(0)} ms; settled ${settledS.toFixed(0)} s after ready`)
    console.log(`  RSS once settled:                    ${rss.toFixed(0)} MiB`)
    console.log(`  idle CPU over ${idleS} s:                ${cpu.toFixed(2)} % of a core`)
    console.log(`  GET /api/status:                     median ${api.toFixed(1)} ms (${gets} requests)`)
    console.log(
      `  write -> reload owed:                median ${latency.owed.toFixed(1)} ms, min ${latency.owedMin.toFixed(1)} ms (${edits} edits); ` +
        `bare fs.watch callback median ${latency.bare.toFixed(2)} ms, min ${latency.bareMin.toFixed(2)} ms`
    )
    console.log(
      `  stop (SIGTERM to exit):              ${stopMs.toFixed(0)} ms, exit code ${daemon.child.exitCode ?? daemon.child.signalCode}`
    )
    if (!runBaseline) console.log("baseline: skipped (CITY_BENCH_BASELINE=0): no idle-CPU goal judged")
    else {
      console.log(
        `baseline: ${baselinePeers * 2} endpoints, --fingerprint-poll-ms 3000: start to ready ${baselineReadyMs.toFixed(0)} ms, ` +
          `idle CPU over ${idleS} s ${baselineCpu.toFixed(2)} % of a core`
      )
    }
    goal(
      `write -> owed <= 2x a bare fs.watch callback on the same file (median)`,
      latency.owed <= 2 * latency.bare,
      `${(latency.owed / latency.bare).toFixed(2)}x (${latency.owed.toFixed(1)} ms vs ${latency.bare.toFixed(2)} ms)`
    )
    if (runBaseline) {
      goal(
        `idle CPU at ${endpoints} endpoints <= idle CPU of the 3 s poll at ${baselinePeers * 2} endpoints`,
        cpu <= baselineCpu,
        `${cpu.toFixed(2)} % vs ${baselineCpu.toFixed(2)} %`
      )
    }
    finish()
  } finally {
    for (const d of daemons) if (d.child.exitCode === null && d.child.signalCode === null) d.child.kill("SIGKILL")
    for (const b of bases) rmSync(b, { recursive: true, force: true })
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
