/**
 * A small measuring harness for the benchmarks: warm up, run rounds, keep the median. Each
 * benchmark measures our code and its baseline in the same process, one after the other, and
 * prints the ratio (machines here are noisy; absolute times do not compare across runs).
 */
import { performance } from "node:perf_hooks"

export interface Measurement {
  readonly label: string
  /** Median nanoseconds per operation. */
  readonly nsPerOp: number
}

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

/** Runs `round` (which performs `ops` operations) `rounds` times after `warmup` rounds. */
export const measure = async (
  label: string,
  ops: number,
  round: () => Promise<void>,
  options: { readonly rounds?: number; readonly warmup?: number } = {}
): Promise<Measurement> => {
  const rounds = options.rounds ?? 15
  const warmup = options.warmup ?? 3
  for (let i = 0; i < warmup; i++) await round()
  const samples: Array<number> = []
  for (let i = 0; i < rounds; i++) {
    const start = performance.now()
    await round()
    samples.push(((performance.now() - start) * 1e6) / ops)
  }
  return { label, nsPerOp: median(samples) }
}

export const formatNs = (ns: number) =>
  ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : ns >= 1e3 ? `${(ns / 1e3).toFixed(2)} µs` : `${ns.toFixed(0)} ns`

export const line = (m: Measurement, baseline?: Measurement) =>
  `${m.label.padEnd(58)} ${formatNs(m.nsPerOp).padStart(10)}/op` +
  (baseline === undefined ? "" : `   ratio ${(m.nsPerOp / baseline.nsPerOp).toFixed(2)}x vs ${baseline.label}`)
