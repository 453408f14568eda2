/**
 * The chaos test's schedule (test/chaos/FleetChaos.test.ts): a pure function of a seed, so a
 * failure is replayed with `CITY_CHAOS_SEED=<seed>` (and `CITY_CHAOS_ROUNDS=<n>` when it was a
 * longer run). Each round lasts `roundMs` and holds, at random times and on random hosts:
 *
 * - a SIGKILL of a host's daemon restarted 23-26 s later (long enough that the host must be shown
 *   `down`, which docs/cluster.md promises within 20 s, and that a few `city fleet` reads, one a
 *   second, fall between the 20 s and its return);
 * - a SIGSTOP of another host's daemon for 23-26 s, then SIGCONT: longer than the runner's lock
 *   expiry (15 s, which `city daemon` has no flag to shorten: `lockExpiration` is an option of the
 *   library's runner only) and than the 20 s of `down`, shorter than the daemon's watchdog
 *   (`--freeze-limit`, 30 s), which would end it on SIGCONT;
 * - a SIGKILL of the third host's daemon restarted 0.5-3 s later (a takeover at the same address);
 * - a restart of the PostgreSQL server (`pg_ctl restart -m immediate`);
 * - edits of endpoints' launch-read files throughout, each a new version of the file.
 *
 * Beside them, the capability verbs (`sweeps`): for each capability a sequence of steps, run one
 * after another (the capabilities' sequences at once), each waiting its gap, then running its verb
 * on the fleet: `register` when the capability is not registered, else `sync` or `unregister`.
 * The run takes as many steps as fit in the chaos.
 *
 * Times are milliseconds from the start of the chaos.
 */

/** A seeded generator of uniform numbers in [0, 1) (mulberry32). */
export const random = (seed: number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export type Fault =
  | { readonly kind: "kill"; readonly at: number; readonly host: string; readonly downFor: number }
  | { readonly kind: "stop"; readonly at: number; readonly host: string; readonly downFor: number }
  | { readonly kind: "pg-restart"; readonly at: number }

export interface Edit {
  readonly at: number
  /** `<host>/<runtime>/<personality>`. */
  readonly endpoint: string
  /** The file's new version: 1, 2, ... per endpoint. */
  readonly version: number
}

export type SweepVerb = "register" | "sync" | "unregister"

export interface SweepStep {
  /** How long to wait after the previous step's verb returned. */
  readonly gap: number
  readonly verb: SweepVerb
  readonly capability: string
}

export interface Schedule {
  readonly seed: number
  readonly rounds: number
  readonly roundMs: number
  /** How long the chaos lasts: `rounds * roundMs`. */
  readonly chaosMs: number
  readonly faults: ReadonlyArray<Fault>
  readonly edits: ReadonlyArray<Edit>
  readonly sweeps: ReadonlyArray<SweepStep>
}

export interface Topology {
  readonly hosts: ReadonlyArray<string>
  readonly endpoints: ReadonlyArray<string>
  /** The capabilities the sweeps act on; the first is registered before the chaos starts. */
  readonly capabilities: ReadonlyArray<string>
}

/** One round of the CI run: at most 60 s of chaos. */
export const roundMs = 50_000

/** The schedule of `rounds` rounds drawn from `seed`. */
export const make = (seed: number, rounds: number, topology: Topology): Schedule => {
  const next = random(seed)
  const between = (lo: number, hi: number) => Math.round(lo + (hi - lo) * next())
  const pick = <A>(items: ReadonlyArray<A>): A => items[Math.floor(next() * items.length)]!
  const faults: Array<Fault> = []
  const edits: Array<Edit> = []
  const versions = new Map<string, number>()
  for (let round = 0; round < rounds; round++) {
    const base = round * roundMs
    const hosts = [...topology.hosts]
    for (let i = hosts.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1))
      ;[hosts[i], hosts[j]] = [hosts[j]!, hosts[i]!]
    }
    // Each host has at most one fault at a time; the quick kill comes after the two long outages.
    faults.push({ kind: "kill", at: base + between(1_000, 8_000), host: hosts[0]!, downFor: between(23_000, 26_000) })
    faults.push({ kind: "stop", at: base + between(2_000, 12_000), host: hosts[1]!, downFor: between(23_000, 26_000) })
    faults.push({ kind: "kill", at: base + between(28_000, 42_000), host: hosts[2]!, downFor: between(500, 3_000) })
    faults.push({ kind: "pg-restart", at: base + between(14_000, 44_000) })
    for (let at = base + between(300, 1_500); at < base + roundMs - 4_000; at += between(300, 1_500)) {
      const endpoint = pick(topology.endpoints)
      const version = (versions.get(endpoint) ?? 0) + 1
      versions.set(endpoint, version)
      edits.push({ at, endpoint, version })
    }
  }
  faults.sort((a, b) => a.at - b.at)
  // The verbs, one sequence per capability (the two run at once): at most one every 2 s or so (a
  // verb is a process start and a sweep), so these are more than a run can take.
  const sweeps: Array<SweepStep> = []
  topology.capabilities.forEach((capability, i) => {
    let registered = i === 0
    for (let step = 0; step < rounds * 25; step++) {
      const verb: SweepVerb = !registered ? "register" : next() < 0.65 ? "sync" : "unregister"
      registered = verb !== "unregister"
      sweeps.push({ gap: between(300, 2_500), verb, capability })
    }
  })
  return { seed, rounds, roundMs, chaosMs: rounds * roundMs, faults, edits, sweeps }
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`

/** The schedule for a person, in full: the seed and how to replay it first. */
export const describe = (schedule: Schedule): string => {
  const replay = `CITY_CHAOS_SEED=${schedule.seed}${schedule.rounds === 1 ? "" : ` CITY_CHAOS_ROUNDS=${schedule.rounds}`}`
  const faults = schedule.faults.map((f) =>
    f.kind === "pg-restart"
      ? `  +${seconds(f.at)}  pg_ctl restart -m immediate`
      : f.kind === "kill"
      ? `  +${seconds(f.at)}  SIGKILL ${f.host}'s daemon, started again ${seconds(f.downFor)} later`
      : `  +${seconds(f.at)}  SIGSTOP ${f.host}'s daemon, SIGCONT ${seconds(f.downFor)} later`
  )
  const edits = schedule.edits.map((e) => `+${seconds(e.at)} ${e.endpoint} v${e.version}`)
  const capabilities = [...new Set(schedule.sweeps.map((s) => s.capability))]
  return [
    `chaos schedule: seed ${schedule.seed}, ${schedule.rounds} round(s) of ${seconds(schedule.roundMs)} (replay: ${replay} npx vitest run test/chaos/FleetChaos.test.ts)`,
    "faults:",
    ...faults,
    `edits of launch-read files (${edits.length}):`,
    ...chunk(edits, 6).map((line) => `  ${line.join("; ")}`),
    "sweeps, each capability's one after another, each after its pause (as many as the chaos takes):",
    ...capabilities.flatMap((capability) => [
      `  ${capability}:`,
      ...chunk(schedule.sweeps.filter((s) => s.capability === capability).map((s) => `${seconds(s.gap)} ${s.verb}`), 8).map((line) => `    ${line.join("; ")}`)
    ])
  ].join("\n")
}

const chunk = <A>(items: ReadonlyArray<A>, size: number): Array<Array<A>> => {
  const out: Array<Array<A>> = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}
