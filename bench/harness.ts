/**
 * The measuring harness of the benchmarks. Each benchmark measures our code and its baseline in
 * the same process, alternating baseline and subject round by round (so a slow moment of the
 * machine hits both), and reports the median and the min of the per-round ratio subject/baseline
 * (machines here are noisy; absolute times do not compare across runs). A round whose effect
 * fails fails the benchmark: a measurement of a failing path is not a measurement.
 */
import { performance } from "node:perf_hooks"
import { spawn } from "node:child_process"

export interface Comparison {
  readonly label: string
  readonly baseline: string
  /** Median ns per operation of the subject and of the baseline. */
  readonly subjectNs: number
  readonly baselineNs: number
  /** Median and min of the per-round ratio subject / baseline (wall-clock time). */
  readonly median: number
  readonly min: number
  /** Median per-round ratio of the CPU time this process used (less sensitive to other load). */
  readonly cpuMedian: number
}

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

/** A timed round: `setup` (untimed) prepares, `run` is timed. */
export interface Round {
  readonly setup?: () => Promise<void>
  readonly run: () => Promise<void>
}

const cpuNow = () => {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1000
}

/** Wall-clock and CPU milliseconds of one round's `run`. */
const time = async (round: Round): Promise<readonly [number, number]> => {
  if (round.setup !== undefined) await round.setup()
  const cpu = cpuNow()
  const start = performance.now()
  await round.run()
  return [performance.now() - start, cpuNow() - cpu]
}

/** Runs baseline and subject alternately (`rounds` pairs after `warmup` pairs). */
export const compare = async (options: {
  readonly label: string
  readonly baseline: string
  readonly ops: number
  readonly baselineOps?: number
  readonly subjectRound: Round
  readonly baselineRound: Round
  readonly rounds?: number
  readonly warmup?: number
}): Promise<Comparison> => {
  const rounds = options.rounds ?? 15
  const warmup = options.warmup ?? 3
  const subject: Array<number> = []
  const base: Array<number> = []
  const ratios: Array<number> = []
  const cpuRatios: Array<number> = []
  for (let i = 0; i < warmup + rounds; i++) {
    // Alternate which side goes first, too.
    let bt: readonly [number, number]
    let st: readonly [number, number]
    if (i % 2 === 0) {
      bt = await time(options.baselineRound)
      st = await time(options.subjectRound)
    } else {
      st = await time(options.subjectRound)
      bt = await time(options.baselineRound)
    }
    if (i < warmup) continue
    const sNs = (st[0] * 1e6) / options.ops
    const bNs = (bt[0] * 1e6) / (options.baselineOps ?? options.ops)
    subject.push(sNs)
    base.push(bNs)
    ratios.push(sNs / bNs)
    cpuRatios.push((st[1] / options.ops) / (bt[1] / (options.baselineOps ?? options.ops)))
  }
  return {
    label: options.label,
    baseline: options.baseline,
    subjectNs: median(subject),
    baselineNs: median(base),
    median: median(ratios),
    min: Math.min(...ratios),
    cpuMedian: median(cpuRatios)
  }
}

export const formatNs = (ns: number) =>
  ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : ns >= 1e3 ? `${(ns / 1e3).toFixed(2)} µs` : `${ns.toFixed(0)} ns`

/** One line: the subject, its baseline, and the per-round ratio (median, min). */
export const line = (c: Comparison) =>
  `${c.label.padEnd(52)} ${formatNs(c.subjectNs).padStart(10)}/op   ${c.baseline} ${formatNs(c.baselineNs)}/op   ` +
  `ratio median ${c.median.toFixed(2)}x min ${c.min.toFixed(2)}x (cpu ${c.cpuMedian.toFixed(2)}x)`

let failedGoals = 0

/** Prints one `goal:` line; a FAIL makes the process exit non-zero at the end. */
export const goal = (text: string, pass: boolean, measured: string) => {
  if (!pass) failedGoals++
  console.log(`goal: ${text}: ${measured} ${pass ? "PASS" : "FAIL"}`)
}

/** Exit code for the benchmark process: 1 if a goal failed. */
export const finish = () => {
  process.exitCode = failedGoals > 0 ? 1 : 0
}

/** The per-round ratios of a paired benchmark of whole operations, with their median and minimum. */
export interface Paired {
  readonly baseline: ReadonlyArray<number>
  readonly subject: ReadonlyArray<number>
  /** subject / baseline, per round. */
  readonly ratios: ReadonlyArray<number>
  readonly median: number
  readonly min: number
}

/**
 * Paired rounds of operations that time themselves (milliseconds; a whole process, a whole
 * sweep): baseline and subject each round, the order alternating round by round, the ratio taken
 * per round so a drift of the machine's speed cancels within a pair.
 */
export const pairedRounds = async (
  rounds: number,
  baseline: () => Promise<number>,
  subject: () => Promise<number>
): Promise<Paired> => {
  const b: Array<number> = []
  const s: Array<number> = []
  for (let r = 0; r < rounds; r++) {
    if (r % 2 === 0) {
      b.push(await baseline())
      s.push(await subject())
    } else {
      s.push(await subject())
      b.push(await baseline())
    }
  }
  const ratios = s.map((value, i) => value / (b[i] ?? Number.NaN))
  return { baseline: b, subject: s, ratios, median: median(ratios), min: Math.min(...ratios) }
}

/** `name: median 2.91x, min 2.80x, max 3.10x (15 rounds)`. */
export const ratioLine = (name: string, ratios: ReadonlyArray<number>) =>
  `${name}: median ${median(ratios).toFixed(2)}x, min ${Math.min(...ratios).toFixed(2)}x, ` +
  `max ${Math.max(...ratios).toFixed(2)}x (${ratios.length} rounds)`

/** The median of some numbers. */
export const medianOf = median

/**
 * `env` without `NODE_EXTRA_CA_CERTS`, or `undefined` when it does not set it. Node 20 reads and
 * parses those certificates at every start (`node -e 0`: 60-70 ms with the system's bundle on this
 * machine, 20-30 ms without), so the process benchmarks print their ratios both ways.
 */
export const withoutExtraCaCerts = (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv | undefined => {
  if (env.NODE_EXTRA_CA_CERTS === undefined) return undefined
  const { NODE_EXTRA_CA_CERTS: _certificates, ...rest } = env
  return rest
}

/** Wall milliseconds of one `node` process (`args` after the executable); fails when it does not exit 0. */
export const timeProcess = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = process.env): Promise<number> =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(process.execPath, args, { stdio: ["ignore", "ignore", "pipe"], env })
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    child.once("error", reject)
    child.once("exit", (code) => {
      if (code === 0) resolve(performance.now() - started)
      else reject(new Error(`node ${args.slice(0, 3).join(" ")} exited ${code}: ${stderr.slice(0, 400)}`))
    })
  })

