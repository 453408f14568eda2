/**
 * The chaos test's checker (test/chaos/FleetChaos.test.ts): a pure function over the shared
 * history (test/chaos/events.ts), the sweeps' reports, the daemons' outputs and the state once
 * everything settled, which says which of the fleet's promises were broken, each with the lines of
 * the history that show it. The properties (docs/cluster.md, docs/live-application.md,
 * docs/cli.md "Commands and signals"):
 *
 * 1. `reloads-exactly-once`: every owed reload was applied exactly once after its request.
 *    - After its request: every edit of a launch-read file (`test edit v=N`) is followed by a
 *      reload that ran to its end and read version N or later; every endpoint a sweep reports `ok`
 *      with application `applied` or `pending` has a reload that ran to its end after its
 *      provisioning call ended.
 *    - Once: every reload that ran to its end is matched with a request of its own: a cause (an
 *      edit, or a provisioning call that ended `ok`, whose converge owes one) that no other reload
 *      is matched with. A cause can be the request of either of the first two such reloads after
 *      it (for an edit, of those that read its version or later): the first claim after the
 *      request applies it, and a request can land after the claim of a reload that already read the
 *      new file (a request during a reload owes exactly one more), but not after two, because the
 *      daemon owes a reload within a reload's run (0.4 s at least: test/chaos/commands.ts). A
 *      reload after a SIGKILL (or a crash) of its host's daemon since the previous one needs no
 *      cause: a reload cut by the kill, or not yet recorded, runs again (docs/cluster.md, "Exactly
 *      once, here"). A PostgreSQL restart excuses nothing; the lines of one in between are shown.
 * 2. `one-command-at-a-time`: no endpoint ever had two commands (provisioning or reload) running at
 *    once: no command starts between another's `start` and `end` lines on the same endpoint (a
 *    command without an `end` line runs to the end of the history).
 * 3. `sweep-verdicts`: every sweep returned a report whose verdict matches its endpoints' records:
 *    `ok` exactly when every outcome is `ok` and nothing is invalid (exit 0, else 1); one outcome
 *    per endpoint of the fleet; an `ok` outcome had its command (kind and capability) start after
 *    the sweep began and end `status=0` before it returned; an outcome with an exit code other than
 *    0 had no such clean run; and the last sweep of each capability's `ok` outcomes are what each
 *    host's `state/endpoints/<capability>.json` records, unless a later call of that endpoint ran.
 * 4. `nothing-owed`: once settled, `city fleet --json` lists every host with no owed reload, no
 *    owed removal, and no row it could not read.
 * 5. `dead-hosts-down`: a host whose daemon was dead or stopped for longer than 20 s is shown
 *    `down` by every `city fleet` read that began 20 s after its death and ended before it came
 *    back (and at least one such read succeeded).
 * 6. `daemons-exit-only-when-killed`: no daemon exited but by the test's own signal.
 *
 * Notes (not failures): sweeps that returned an error instead of a verdict, and what the test
 * says it could not do (a settle that timed out).
 */
import { type Command, type Events, hostOf, type Outage, read } from "./events.ts"
import type { Line } from "./history.ts"

export const properties = [
  "reloads-exactly-once",
  "one-command-at-a-time",
  "sweep-verdicts",
  "nothing-owed",
  "dead-hosts-down",
  "daemons-exit-only-when-killed"
] as const

export type Property = typeof properties[number]

export interface Violation {
  readonly property: Property
  readonly message: string
  /** The history's lines that show it (their numbers, from 1). */
  readonly lines: ReadonlyArray<number>
}

export interface ChaosInput {
  /** The shared history, as written. */
  readonly log: string
  readonly hosts: ReadonlyArray<string>
  /** Every endpoint of the fleet, `<host>/<runtime>/<personality>`. */
  readonly endpoints: ReadonlyArray<string>
  /** Each sweep's stdout (its `--json` document), by the sweep's id. */
  readonly reports: Readonly<Record<string, string>>
  /** Each daemon's output, by its pid. */
  readonly outputs: Readonly<Record<string, string>>
  readonly final: {
    /** `city fleet --json`'s stdout once settled; none when it could not be read. */
    readonly fleet: string | undefined
    /** Each host's `state/endpoints/<capability>.json`, parsed, by host and capability. */
    readonly records: Readonly<Record<string, Readonly<Record<string, unknown>>>>
  }
}

export interface Verdict {
  readonly violations: ReadonlyArray<Violation>
  readonly notes: ReadonlyArray<string>
}

/** The 20 s of docs/cluster.md's promise that a dead host is shown `down`. */
export const downWithinMs = 20_000

interface Outcome {
  readonly peer?: string
  readonly personality?: string
  readonly runtime?: string
  readonly host?: string
  readonly state?: string
  readonly exit?: number
  readonly occasion?: string
  readonly application?: string
  readonly detail?: string
}

interface Report {
  readonly ok?: boolean
  readonly verdict?: string
  readonly outcomes?: ReadonlyArray<Outcome>
  readonly invalid?: ReadonlyArray<unknown>
  readonly error?: { readonly _tag?: string; readonly message?: string }
}

const kindOf = (verb: string) => verb === "unregister" ? "unprovision" : "provision"

/** Checks every property. */
export const check = (input: ChaosInput): Verdict => {
  const events = read(input.log)
  const notes: Array<string> = []
  const violations = [
    ...reloads(events, input),
    ...oneAtATime(events),
    ...sweepVerdicts(events, input, notes),
    ...nothingOwed(input),
    ...deadHostsDown(events),
    ...exits(events)
  ]
  for (const line of events.tests("note")) notes.push(`${line.fields["what"] ?? line.text} (line ${line.n})`)
  return { violations, notes }
}

/** The endpoint of an outcome: its `host` when the report has one, else the host of its peer. */
const endpointOf = (input: ChaosInput, o: Outcome) => {
  const personality = o.peer ?? o.personality ?? ""
  const runtime = o.runtime ?? ""
  const host = o.host ?? input.endpoints.find((e) => e.endsWith(`/${runtime}/${personality}`))?.split("/")[0] ?? "?"
  return `${host}/${runtime}/${personality}`
}

const parsed = (stdout: string | undefined): Report | undefined => {
  if (stdout === undefined) return undefined
  try {
    return JSON.parse(stdout) as Report
  } catch {
    return undefined
  }
}

const linesOf = (...commands: ReadonlyArray<Command | undefined>) =>
  commands.flatMap((c) => c === undefined ? [] : c.end === undefined ? [c.start.n] : [c.start.n, c.end.n])

/** The faults (kills, exits, stops, PostgreSQL restarts) of `host` between two lines, as context. */
const faultsBetween = (events: Events, host: string | undefined, from: number, to: number) =>
  events.lines.filter((l) =>
    l.tag === "test" && l.n > from && l.n < to &&
    (l.event === "pg-restart" || l.event === "pg-ready" ||
      (["kill", "exit", "stop", "cont", "start"].includes(l.event) && (host === undefined || l.fields["host"] === host)))
  ).map((l) => l.n)

/** The provisioning call a sweep's outcome stands for: the last clean one of its kind in the sweep's window. */
const callOf = (events: Events, sweep: { readonly verb: string; readonly capability: string; readonly begin: Line; readonly end: Line | undefined }, endpoint: string) =>
  events.commands.filter((c) =>
    c.endpoint === endpoint && c.kind === kindOf(sweep.verb) && c.capability === sweep.capability &&
    c.start.n > sweep.begin.n && (sweep.end === undefined || c.start.n < sweep.end.n)
  )

// 1. Every owed reload applied exactly once after its request.
const reloads = (events: Events, input: ChaosInput): Array<Violation> => {
  const out: Array<Violation> = []
  const property = "reloads-exactly-once"
  for (const endpoint of input.endpoints) {
    const host = hostOf(endpoint)
    const completed = events.commands.filter((c) => c.endpoint === endpoint && c.kind === "reload" && c.completed)
    const edits = events.edits.filter((e) => e.endpoint === endpoint)
    // After its request: the edits.
    for (const edit of edits) {
      if (completed.some((r) => r.start.n > edit.line.n && (r.version ?? -1) >= edit.version)) continue
      const after = completed.filter((r) => r.start.n > edit.line.n)
      const last = completed.at(-1)
      out.push({
        property,
        message: `${endpoint}: the edit to v${edit.version} was never applied: no reload that ran to its end after it read v${edit.version} or later` +
          (last === undefined ? " (no reload ran at all)" : ` (the last one read v${last.version ?? "?"})`),
        lines: [edit.line.n, ...linesOf(...after.slice(0, 2), last)]
      })
    }
    // Once: each reload its own cause.
    const causes = [
      ...edits.map((e) => ({ line: e.line, eligible: completed.flatMap((r, i) => r.start.n > e.line.n && (r.version ?? -1) >= e.version ? [i] : []).slice(0, 2) })),
      ...events.commands
        .filter((c) => c.endpoint === endpoint && c.kind !== "reload" && c.completed && c.end !== undefined)
        .map((c) => ({ line: c.end!, eligible: completed.flatMap((r, i) => r.start.n > c.end!.n ? [i] : []).slice(0, 2) }))
    ]
    const used = new Set<number>()
    const deaths = events.lines.filter((l) =>
      l.tag === "test" && l.fields["host"] === host && (l.event === "kill" || (l.event === "exit" && l.fields["expected"] === "false"))
    )
    completed.forEach((reload, i) => {
      const previous = completed[i - 1]
      const since = previous?.start.n ?? 0
      if (deaths.some((d) => d.n > since && d.n < reload.start.n)) return
      let best = -1
      causes.forEach((cause, k) => {
        if (used.has(k) || !cause.eligible.includes(i)) return
        if (best === -1 || cause.eligible.at(-1)! < causes[best]!.eligible.at(-1)! || (cause.eligible.at(-1) === causes[best]!.eligible.at(-1) && cause.line.n < causes[best]!.line.n)) best = k
      })
      if (best !== -1) return void used.add(best)
      out.push({
        property,
        message: `${endpoint}: a reload ran with nothing owed (applied twice): no edit or provisioning call before it that an earlier reload had not already applied` +
          (previous === undefined ? "" : ` (the one before read v${previous.version ?? "?"}, this one v${reload.version ?? "?"})`),
        lines: [...linesOf(previous, reload), ...faultsBetween(events, host, since, reload.start.n)].sort((a, b) => a - b)
      })
    })
  }
  // After its request: the converges a sweep reported.
  for (const sweep of events.sweeps) {
    const report = parsed(input.reports[sweep.id])
    for (const o of report?.outcomes ?? []) {
      if (o.state !== "ok" || (o.application !== "applied" && o.application !== "pending")) continue
      const endpoint = endpointOf(input, o)
      const call = callOf(events, sweep, endpoint).filter((c) => c.completed).at(-1)
      if (call === undefined || call.end === undefined) continue // the sweep property says so
      const reloaded = events.commands.some((r) => r.endpoint === endpoint && r.kind === "reload" && r.completed && r.start.n > call.end!.n)
      if (!reloaded) {
        out.push({
          property,
          message: `${endpoint}: sweep ${sweep.id} (${sweep.verb} ${sweep.capability}) reported its reload ${o.application}, but no reload ran to its end after the call`,
          lines: [sweep.begin.n, ...linesOf(call), ...(sweep.end === undefined ? [] : [sweep.end.n])]
        })
      }
    }
  }
  return out
}

// 2. No endpoint ever had two commands running at once.
const oneAtATime = (events: Events): Array<Violation> => {
  const out: Array<Violation> = []
  for (const command of events.commands) {
    const until = command.end?.n ?? Number.POSITIVE_INFINITY
    const overlapping = events.commands.filter((other) =>
      other !== command && other.endpoint === command.endpoint && other.start.n > command.start.n && other.start.n < until
    )
    // A command without an end line overlaps every later one: its first is enough.
    for (const other of command.end === undefined ? overlapping.slice(0, 1) : overlapping) {
      out.push({
        property: "one-command-at-a-time",
        message: `${command.endpoint}: ${other.kind} (pid ${other.pid}) started while ${command.kind} (pid ${command.pid}) was running` +
          (command.end === undefined ? " (it never wrote its end line)" : ""),
        lines: linesOf(command, other).sort((a, b) => a - b)
      })
    }
  }
  return out
}

// 3. Every sweep's verdict matches its endpoints' records.
const sweepVerdicts = (events: Events, input: ChaosInput, notes: Array<string>): Array<Violation> => {
  const out: Array<Violation> = []
  const property = "sweep-verdicts"
  const last = new Map<string, { readonly sweep: typeof events.sweeps[number]; readonly report: Report }>()
  for (const sweep of events.sweeps) {
    const name = `sweep ${sweep.id} (${sweep.verb} ${sweep.capability})`
    const at = [sweep.begin.n, ...(sweep.end === undefined ? [] : [sweep.end.n])]
    if (sweep.end === undefined) {
      out.push({ property, message: `${name} never returned`, lines: at })
      continue
    }
    const code = sweep.end.fields["code"]
    if (code === "killed") {
      out.push({ property, message: `${name} did not return within its bound (${sweep.end.fields["bound"] ?? "?"} ms) and was killed`, lines: at })
      continue
    }
    const report = parsed(input.reports[sweep.id])
    if (report === undefined) {
      out.push({ property, message: `${name} printed no JSON document (exit ${code})`, lines: at })
      continue
    }
    if (report.verdict === undefined) {
      notes.push(`${name} returned no verdict (exit ${code}): ${report.error?._tag ?? "?"}: ${report.error?.message ?? ""} (line ${sweep.end.n})`)
      continue
    }
    const outcomes = report.outcomes ?? []
    const expected = outcomes.every((o) => o.state === "ok") && (report.invalid ?? []).length === 0 ? "ok" : "failed"
    if (report.verdict !== expected || code !== (expected === "ok" ? "0" : "1")) {
      out.push({ property, message: `${name}: verdict ${report.verdict} with exit ${code}, but its outcomes make it ${expected} (exit ${expected === "ok" ? 0 : 1})`, lines: at })
    }
    const seen = outcomes.map((o) => endpointOf(input, o))
    const missing = input.endpoints.filter((e) => !seen.includes(e))
    const extra = seen.filter((e, i) => !input.endpoints.includes(e) || seen.indexOf(e) !== i)
    if (missing.length > 0 || extra.length > 0) {
      out.push({
        property,
        message: `${name}: its outcomes are not one per endpoint of the fleet` +
          (missing.length > 0 ? `; missing ${missing.join(", ")}` : "") + (extra.length > 0 ? `; unexpected or repeated ${extra.join(", ")}` : ""),
        lines: at
      })
    }
    for (const o of outcomes) {
      const endpoint = endpointOf(input, o)
      const calls = callOf(events, sweep, endpoint)
      const clean = calls.filter((c) => c.completed && c.end !== undefined && c.end.n < sweep.end!.n)
      if (o.state === "ok" && clean.length === 0) {
        out.push({
          property,
          message: `${name}: ${endpoint} reported ok, but no ${kindOf(sweep.verb)} of ${sweep.capability} ran to its end on it during the sweep`,
          lines: [...at, ...linesOf(...calls)].sort((a, b) => a - b)
        })
      }
      // A host that answers reports the call as it recorded it (docs/cluster.md, "Sweeps across
      // hosts"): a failure that is not the host's silence needs a call that did not run clean.
      const silent = /did not answer|unavailable/.test(o.detail ?? "")
      if (o.state !== "ok" && !silent && calls.length > 0 && calls.every((c) => c.completed && c.end !== undefined && c.end.n < sweep.end!.n)) {
        out.push({
          property,
          message: `${name}: ${endpoint} reported ${o.state}${o.exit === undefined ? "" : ` with exit ${o.exit}`} (${(o.detail ?? "").slice(0, 160)}), ` +
            `but its ${kindOf(sweep.verb)} ran to exit 0 during the sweep`,
          lines: [...at, ...linesOf(...calls)].sort((a, b) => a - b)
        })
      }
    }
    last.set(sweep.capability, { sweep, report })
  }
  // The records each host keeps, against the last report of each capability.
  for (const [capability, { report, sweep }] of last) {
    for (const o of report.outcomes ?? []) {
      if (o.state !== "ok") continue
      const endpoint = endpointOf(input, o)
      const call = callOf(events, sweep, endpoint).filter((c) => c.completed).at(-1)
      if (call === undefined) continue
      const later = events.commands.some((c) => c.endpoint === endpoint && c.kind !== "reload" && c.capability === capability && c.start.n > call.start.n)
      if (later) continue
      const [host, runtime, personality] = endpoint.split("/") as [string, string, string]
      const file = input.final.records[host]?.[capability] as { readonly endpoints?: Record<string, Record<string, { readonly state?: string; readonly occasion?: string }>> } | undefined
      const record = file?.endpoints?.[personality]?.[runtime]
      if (record?.state !== "ok" || record.occasion !== o.occasion) {
        out.push({
          property,
          message: `${endpoint}: the last sweep of ${capability} (${sweep.id}, ${sweep.verb}) reported ${o.occasion} ok, but ${host}'s state/endpoints/${capability}.json records ` +
            (record === undefined ? "nothing for it" : `${record.occasion} ${record.state}`),
          lines: [sweep.begin.n, ...linesOf(call), ...(sweep.end === undefined ? [] : [sweep.end.n])]
        })
      }
    }
  }
  return out
}

// 4. Nothing is left owed.
const nothingOwed = (input: ChaosInput): Array<Violation> => {
  const property = "nothing-owed"
  const document = parsed(input.final.fleet) as {
    readonly hosts?: ReadonlyArray<{ readonly host: string; readonly owed_reloads: number; readonly owed_removals: number }>
    readonly invalid?: ReadonlyArray<{ readonly message?: string }>
  } | undefined
  if (document?.hosts === undefined) return [{ property, message: "the fleet could not be read once settled (city fleet --json)", lines: [] }]
  const out: Array<Violation> = []
  for (const host of input.hosts) {
    const row = document.hosts.find((h) => h.host === host)
    if (row === undefined) out.push({ property, message: `${host} is not listed by city fleet`, lines: [] })
    else if (row.owed_reloads !== 0 || row.owed_removals !== 0) {
      out.push({ property, message: `${host} still owes ${row.owed_reloads} reload(s) and ${row.owed_removals} removal(s) once settled`, lines: [] })
    }
  }
  for (const invalid of document.invalid ?? []) out.push({ property, message: `a row could not be read: ${invalid.message ?? JSON.stringify(invalid)}`, lines: [] })
  return out
}

// 5. Every dead host was shown down within 20 s.
const deadHostsDown = (events: Events): Array<Violation> => {
  const out: Array<Violation> = []
  const outageLines = (o: Outage) => [o.begin.n, ...(o.end === undefined ? [] : [o.end.n])]
  for (const outage of events.outages) {
    const back = outage.end?.t ?? Number.POSITIVE_INFINITY
    if (back - outage.begin.t <= downWithinMs) continue
    const due = outage.begin.t + downWithinMs
    const reads = events.polls.filter((p) => p.error === undefined && p.from >= due && p.line.t <= back)
    const up = reads.filter((p) => !p.down.includes(outage.host))
    const what = `${outage.host} (${outage.kind} for ${((back - outage.begin.t) / 1000).toFixed(1)} s)`
    if (reads.length === 0) {
      out.push({ property: "dead-hosts-down", message: `${what}: no city fleet read succeeded between ${downWithinMs / 1000} s after and its return`, lines: outageLines(outage) })
    } else if (up.length > 0) {
      const first = up[0]!
      out.push({
        property: "dead-hosts-down",
        message: `${what}: shown ${first.up.includes(outage.host) ? "up" : "not at all"} ${((first.from - outage.begin.t) / 1000).toFixed(1)} s after, ` +
          `by ${up.length} of the ${reads.length} reads from ${downWithinMs / 1000} s until its return`,
        lines: [...outageLines(outage), first.line.n].sort((a, b) => a - b)
      })
    }
  }
  return out
}

// 6. No daemon exited except when killed.
const exits = (events: Events): Array<Violation> =>
  events.tests("exit").filter((l) => l.fields["expected"] === "false").map((line) => ({
    property: "daemons-exit-only-when-killed" as const,
    message: `${line.fields["host"]}'s daemon (pid ${line.fields["pid"]}) exited by itself: code ${line.fields["code"]}, signal ${line.fields["signal"]}`,
    lines: [line.n]
  }))

/** The verdict for a person: each property passed or failed, each violation with its history lines, the notes. */
export const describe = (input: ChaosInput, verdict: Verdict, replay: string): string => {
  const lines = read(input.log).lines
  const text = (n: number) => lines.find((l) => l.n === n)?.text ?? ""
  const events = read(input.log)
  const count = (kind: string) => events.commands.filter((c) => c.kind === kind).length
  const out = [
    `chaos checker (replay: ${replay}):`,
    `  history: ${lines.length} lines; ${count("provision")} provision, ${count("unprovision")} unprovision and ${count("reload")} reload commands; ` +
    `${events.edits.length} edits; ${events.sweeps.length} sweeps; ${events.polls.length} city fleet reads; ${events.outages.length} outages`
  ]
  for (const property of properties) {
    const found = verdict.violations.filter((v) => v.property === property)
    out.push(`  ${found.length === 0 ? "PASS" : "FAIL"} ${property}${found.length === 0 ? "" : ` (${found.length})`}`)
  }
  for (const v of verdict.violations) {
    out.push(`- ${v.property}: ${v.message}`)
    for (const n of v.lines) out.push(`    ${String(n).padStart(5)}: ${text(n)}`)
    if (v.property === "daemons-exit-only-when-killed") {
      const pid = lines.find((l) => l.n === v.lines[0])?.fields["pid"] ?? ""
      const tail = (input.outputs[pid] ?? "").trim().split("\n").slice(-6)
      for (const l of tail) out.push(`      | ${l.slice(0, 300)}`)
    }
  }
  for (const note of verdict.notes) out.push(`  note: ${note}`)
  return out.join("\n")
}
