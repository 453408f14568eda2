/**
 * The chaos checker (test/chaos/checker.ts) on hand-made histories: one that keeps every promise,
 * then, for each property, histories that break it (and the near misses that do not: a reload
 * owed again by an edit seen during the one before, a reload run again after a SIGKILL, an outage
 * shorter than 20 s).
 */
import { describe, expect, it } from "@effect/vitest"
import { type ChaosInput, check, describe as describeVerdict, type Property } from "./checker.ts"
import { read } from "./events.ts"

const alice = "web-01/claude/alice"
const bob = "web-02/claude/bob"

let clock = 0
/** A history line at the next tenth of a second. */
const at = (text: string) => `${text} t=${(clock += 0.1).toFixed(1)}`
const command = (kind: string, pid: number, endpoint: string, extra = "") => [
  at(`start kind=${kind} pid=${pid} endpoint=${endpoint}${extra}`),
  at(`end kind=${kind} pid=${pid} endpoint=${endpoint} status=0`)
]
const provision = (pid: number, endpoint: string) => command("provision", pid, endpoint, " capability=alpha occasion=sweep-on")
const reload = (pid: number, endpoint: string, v: number) => command("reload", pid, endpoint, ` v=${v}`)

/** A history that keeps every promise: a register sweep over both endpoints, an edit applied, web-02 killed 26 s and shown down. */
const good = (): Array<string> => {
  clock = 0
  return [
    at("test start host=web-01 pid=100"),
    at("test start host=web-02 pid=200"),
    at("test sweep-begin id=1 verb=register capability=alpha"),
    ...provision(11, alice),
    ...reload(12, alice, 0),
    ...provision(21, bob),
    ...reload(22, bob, 0),
    at("test sweep-end id=1 code=0"),
    at("test edit endpoint=web-01/claude/alice v=1"),
    ...reload(13, alice, 1),
    at("test kill host=web-02 pid=200"),
    at("test exit host=web-02 pid=200 code=null signal=SIGKILL expected=true"),
    `test poll from=${clock + 21} up=web-01 down=web-02 t=${clock + 21.3}`,
    `test start host=web-02 pid=201 t=${(clock += 26).toFixed(1)}`
  ]
}

const report = (outcomes: ReadonlyArray<Record<string, unknown>>, verdict = "ok") =>
  JSON.stringify({ ok: verdict === "ok", verb: "capability register", verdict, outcomes, invalid: [] })
const ok = (peer: string) => ({ peer, runtime: "claude", state: "ok", occasion: "sweep-on", application: "applied" })
const record = (personality: string) => ({ schema: 1, capability: "alpha", endpoints: { [personality]: { claude: { state: "ok", occasion: "sweep-on", at: "" } } } })

const input = (log: ReadonlyArray<string>, change: Partial<ChaosInput> = {}): ChaosInput => ({
  log: log.join("\n"),
  hosts: ["web-01", "web-02"],
  endpoints: [alice, bob],
  reports: { "1": report([ok("alice"), ok("bob")]) },
  outputs: {},
  final: {
    fleet: JSON.stringify({
      ok: true,
      hosts: [{ host: "web-01", owed_reloads: 0, owed_removals: 0 }, { host: "web-02", owed_reloads: 0, owed_removals: 0 }],
      invalid: []
    }),
    records: { "web-01": { alpha: record("alice") }, "web-02": { alpha: record("bob") } }
  },
  ...change
})

/** The properties a history breaks, each as often as it does. */
const broken = (i: ChaosInput): Array<Property> => check(i).violations.map((v) => v.property)

/** `log` with the lines that contain `marker` replaced by `by`. */
const replace = (log: ReadonlyArray<string>, marker: string, by: ReadonlyArray<string>) =>
  log.flatMap((line) => line.includes(marker) ? by : [line])

describe("the chaos checker", () => {
  it("a history that keeps every promise passes", () => {
    const verdict = check(input(good()))
    expect(verdict.violations).toEqual([])
    expect(describeVerdict(input(good()), verdict, "CITY_CHAOS_SEED=1")).toContain("PASS dead-hosts-down")
  })

  it("reloads-exactly-once: an edit never applied, or applied by a reload that read the old file", () => {
    const never = replace(good(), "pid=13 ", [])
    expect(broken(input(never))).toEqual(["reloads-exactly-once"])
    const stale = good().map((line) => line.includes("pid=13 ") ? line.replace("v=1", "v=0") : line)
    const verdict = check(input(stale))
    // The reload after the edit read v0: v1 never applied, and that reload had no request of its own.
    expect(verdict.violations.map((v) => v.property)).toEqual(["reloads-exactly-once", "reloads-exactly-once"])
    expect(verdict.violations[0]!.message).toContain("the edit to v1 was never applied")
  })

  it("reloads-exactly-once: a reload run again with nothing owed, unless a kill came between", () => {
    const twice = good().flatMap((line) => line.includes("end kind=reload pid=13 ") ? [line, ...reload(14, alice, 1)] : [line])
    const verdict = check(input(twice))
    expect(verdict.violations.map((v) => v.property)).toEqual(["reloads-exactly-once"])
    expect(verdict.violations[0]!.message).toContain("applied twice")
    expect(describeVerdict(input(twice), verdict, "CITY_CHAOS_SEED=1")).toMatch(/start kind=reload pid=14 /)
    // After a SIGKILL of web-01's daemon since the one before: run again, as documented.
    const killed = twice.flatMap((line) =>
      line.includes("end kind=reload pid=13 ") ? [line, at("test kill host=web-01 pid=100"), at("test start host=web-01 pid=101")] : [line]
    )
    expect(broken(input(killed))).toEqual([])
  })

  it("reloads-exactly-once: an edit seen during the reload that read it owes exactly one more (not a violation)", () => {
    // v2 is written just before reload 13 starts (it reads v2), and the daemon sees it during 13:
    // the request comes after 13's claim, so 15 runs once more, also reading v2.
    const during = good().flatMap((line) =>
      line.startsWith("start kind=reload pid=13 ")
        ? [at("test edit endpoint=web-01/claude/alice v=2"), line.replace("v=1", "v=2")]
        : line.includes("end kind=reload pid=13 ")
        ? [line, ...reload(15, alice, 2)]
        : [line]
    )
    expect(broken(input(during))).toEqual([])
    // But not a third one.
    const third = during.flatMap((line) => line.includes("end kind=reload pid=15 ") ? [line, ...reload(16, alice, 2)] : [line])
    expect(broken(input(third))).toEqual(["reloads-exactly-once"])
  })

  it("reloads-exactly-once: a sweep reported a reload applied that never ran", () => {
    const log = replace(good(), "pid=22 ", [])
    expect(broken(input(log))).toEqual(["reloads-exactly-once"])
  })

  it("one-command-at-a-time: a reload started during a provisioning call, or after a command that never ended", () => {
    const overlap = good().flatMap((line) =>
      line.startsWith("end kind=provision pid=11 ") ? [at("start kind=reload pid=30 endpoint=web-01/claude/alice v=0"), line, at("end kind=reload pid=30 endpoint=web-01/claude/alice status=0")] : [line]
    )
    expect(broken(input(overlap))).toContain("one-command-at-a-time")
    const unended = replace(good(), "end kind=provision pid=21 ", [])
    const verdict = check(input(unended))
    expect(verdict.violations.filter((v) => v.property === "one-command-at-a-time")).toHaveLength(1)
    expect(verdict.violations.find((v) => v.property === "one-command-at-a-time")!.message).toContain("never wrote its end line")
  })

  it("sweep-verdicts: a verdict its outcomes contradict, an endpoint missing, an ok without its call, a record that differs, a sweep that never returned", () => {
    const failedButOk = { "1": report([ok("alice"), { ...ok("bob"), state: "failed", exit: 1 }], "ok") }
    expect(broken(input(good(), { reports: failedButOk }))).toEqual(["sweep-verdicts", "sweep-verdicts"]) // the verdict, and exit 1 vs a clean run
    expect(broken(input(good(), { reports: { "1": report([ok("alice")]) } }))).toEqual(["sweep-verdicts"])
    // A failure that is not the call's: the call ran clean, the host reported it failed.
    const notTheCall = { "1": report([ok("alice"), { ...ok("bob"), state: "failed", detail: "cannot read city_peers (web-02, bob): Failed to acquire connection" }], "failed") }
    const code1 = good().map((l) => l.includes("sweep-end") ? l.replace("code=0", "code=1") : l)
    expect(broken(input(code1, { reports: notTheCall }))).toEqual(["sweep-verdicts"])
    // A host that did not answer: its call may run later, the failure is the silence.
    const silent = { "1": report([ok("alice"), { ...ok("bob"), state: "failed", detail: "host web-02 did not answer within 6000 ms" }], "failed") }
    expect(broken(input(code1, { reports: silent }))).toEqual([])
    const noCall = replace(replace(good(), "pid=21 ", []), "pid=22 ", [])
    expect(broken(input(noCall))).toEqual(["sweep-verdicts"])
    const records = { "web-01": { alpha: record("alice") }, "web-02": {} }
    expect(broken(input(good(), { final: { ...input(good()).final, records } }))).toEqual(["sweep-verdicts"])
    expect(broken(input(replace(good(), "sweep-end", [])))).toContain("sweep-verdicts")
    const killed = good().map((line) => line.includes("sweep-end") ? line.replace("code=0", "code=killed bound=60000") : line)
    expect(broken(input(killed))).toContain("sweep-verdicts")
    // A sweep that could not run (the database restarting) is a note, not a broken promise.
    const error = JSON.stringify({ ok: false, verb: "capability register", error: { _tag: "ClusterUnavailable", message: "down" } })
    const noted = check(input(good().map((l) => l.includes("sweep-end") ? l.replace("code=0", "code=1") : l), { reports: { "1": error } }))
    expect(noted.violations.filter((v) => v.property === "sweep-verdicts")).toEqual([])
    expect(noted.notes[0]).toContain("ClusterUnavailable")
  })

  it("nothing-owed: a host that still owes, a host missing, an invalid row, an unreadable fleet", () => {
    const owes = JSON.stringify({ hosts: [{ host: "web-01", owed_reloads: 1, owed_removals: 0 }], invalid: [{ message: "city_owed_reloads (web-02, x): bad" }] })
    expect(broken(input(good(), { final: { ...input(good()).final, fleet: owes } }))).toEqual(["nothing-owed", "nothing-owed", "nothing-owed"])
    expect(broken(input(good(), { final: { ...input(good()).final, fleet: undefined } }))).toEqual(["nothing-owed"])
  })

  it("dead-hosts-down: a host dead for 26 s shown up 21 s after; shown by no read; a 15 s outage needs no down", () => {
    const shownUp = good().map((l) => l.startsWith("test poll") ? l.replace("up=web-01 down=web-02", "up=web-01,web-02 down=") : l)
    const verdict = check(input(shownUp))
    expect(verdict.violations.map((v) => v.property)).toEqual(["dead-hosts-down"])
    expect(verdict.violations[0]!.message).toMatch(/web-02 \(killed for 26\.\d s\): shown up 2\d\.\d s after/)
    expect(broken(input(replace(good(), "test poll", [])))).toEqual(["dead-hosts-down"])
    const stopped = shownUp.map((l) => l.replace("test kill host=web-02", "test stop host=web-02").replace("test start host=web-02 pid=201", "test cont host=web-02 pid=200"))
    expect(broken(input(stopped))).toEqual(["dead-hosts-down"])
    const short = shownUp.map((l) => l.startsWith("test start host=web-02 pid=201") ? l.replace(/t=[\d.]+/, `t=${(clock - 11).toFixed(1)}`) : l)
    expect(broken(input(short))).toEqual([])
  })

  it("daemons-exit-only-when-killed: a daemon that exited by itself, with its output's tail", () => {
    const log = [...good(), at("test exit host=web-01 pid=100 code=1 signal=null expected=false"), at("test start host=web-01 pid=101")]
    const i = input(log, { outputs: { "100": "a line\ncity: error: the cluster cannot be used: Failed to execute statement\n" } })
    const verdict = check(i)
    expect(verdict.violations.map((v) => v.property)).toEqual(["daemons-exit-only-when-killed"])
    expect(describeVerdict(i, verdict, "CITY_CHAOS_SEED=7")).toContain("| city: error: the cluster cannot be used")
  })

  it("reads the outages and polls of a history", () => {
    const events = read(good().join("\n"))
    expect(events.outages.map((o) => [o.host, o.kind, o.end?.event])).toEqual([["web-02", "killed", "start"]])
    expect(events.polls.map((p) => [p.up, p.down])).toEqual([[["web-01"], ["web-02"]]])
    expect(events.commands.filter((c) => c.completed)).toHaveLength(5)
  })
})
