/**
 * The chaos history (test/chaos/history.ts) read as what happened: the commands that ran on each
 * endpoint (a `start` line paired with its `end`), the edits of launch-read files, the sweeps, the
 * `city fleet` reads, and the intervals during which a host's daemon was dead or stopped. Pure:
 * the checker (test/chaos/checker.ts) works on these.
 */
import { type Line, parse } from "./history.ts"

export interface Command {
  readonly kind: string
  readonly pid: string
  readonly endpoint: string
  readonly start: Line
  /** Its `end` line; none when it never wrote one. */
  readonly end: Line | undefined
  /** It ran to its end (`status=0`), not ended by a signal. */
  readonly completed: boolean
  /** A reload: the version of the launch-read file it read as it started. */
  readonly version: number | undefined
  /** A provisioning call: its capability and occasion. */
  readonly capability: string | undefined
  readonly occasion: string | undefined
}

export interface Edit {
  readonly line: Line
  readonly endpoint: string
  readonly version: number
}

export interface Sweep {
  readonly id: string
  readonly verb: string
  readonly capability: string
  readonly begin: Line
  readonly end: Line | undefined
}

export interface Poll {
  readonly line: Line
  /** When the read began (ms, the history's clock); it ended at `line.t`. */
  readonly from: number
  readonly up: ReadonlyArray<string>
  readonly down: ReadonlyArray<string>
  readonly error: string | undefined
}

/** A host's daemon dead (killed, or exited by itself) or stopped, from `begin` until `end` (none: never back). */
export interface Outage {
  readonly host: string
  readonly kind: "killed" | "exited" | "stopped"
  readonly begin: Line
  readonly end: Line | undefined
}

export interface Events {
  readonly lines: ReadonlyArray<Line>
  readonly commands: ReadonlyArray<Command>
  readonly edits: ReadonlyArray<Edit>
  readonly sweeps: ReadonlyArray<Sweep>
  readonly polls: ReadonlyArray<Poll>
  readonly outages: ReadonlyArray<Outage>
  /** `test` lines by event (`kill`, `exit`, `pg-restart`, ...). */
  readonly tests: (event: string) => ReadonlyArray<Line>
}

const list = (text: string | undefined) => text === undefined || text === "" ? [] : text.split(",")

/** Reads the history. */
export const read = (log: string): Events => {
  const lines = parse(log)
  const commands: Array<Command> = []
  const open = new Map<string, number>() // pid → index in commands of its start without an end
  for (const line of lines) {
    const pid = line.fields["pid"] ?? ""
    if (line.tag === "start") {
      const version = line.fields["v"]
      open.set(pid, commands.length)
      commands.push({
        kind: line.event,
        pid,
        endpoint: line.fields["endpoint"] ?? "",
        start: line,
        end: undefined,
        completed: false,
        version: version === undefined || version === "" ? undefined : Number(version),
        capability: line.fields["capability"],
        occasion: line.fields["occasion"]
      })
    } else if (line.tag === "end") {
      const at = open.get(pid)
      if (at === undefined) continue
      open.delete(pid)
      commands[at] = { ...commands[at]!, end: line, completed: line.fields["status"] === "0" }
    }
  }
  const tests = lines.filter((l) => l.tag === "test")
  const byEvent = (event: string) => tests.filter((l) => l.event === event)
  const edits = byEvent("edit").map((line) => ({ line, endpoint: line.fields["endpoint"] ?? "", version: Number(line.fields["v"]) }))
  const ends = new Map(byEvent("sweep-end").map((l) => [l.fields["id"], l]))
  const sweeps = byEvent("sweep-begin").map((begin): Sweep => ({
    id: begin.fields["id"] ?? "",
    verb: begin.fields["verb"] ?? "",
    capability: begin.fields["capability"] ?? "",
    begin,
    end: ends.get(begin.fields["id"])
  }))
  const polls = byEvent("poll").map((line): Poll => ({
    line,
    from: Number(line.fields["from"]) * 1000,
    up: list(line.fields["up"]),
    down: list(line.fields["down"]),
    error: line.fields["error"]
  }))
  const outages: Array<Outage> = []
  const current = new Map<string, number>() // host → index of its open outage
  for (const line of tests) {
    const host = line.fields["host"] ?? ""
    const opens = line.event === "kill" ? "killed" : line.event === "stop" ? "stopped" : line.event === "exit" && line.fields["expected"] === "false" ? "exited" : undefined
    if (opens !== undefined && !current.has(host)) {
      current.set(host, outages.length)
      outages.push({ host, kind: opens, begin: line, end: undefined })
    } else if (line.event === "start" || line.event === "cont") {
      const at = current.get(host)
      if (at === undefined) continue
      const outage = outages[at]!
      if ((outage.kind === "stopped") !== (line.event === "cont")) continue
      current.delete(host)
      outages[at] = { ...outage, end: line }
    }
  }
  return { lines, commands, edits, sweeps, polls, outages, tests: byEvent }
}

/** The host of `<host>/<runtime>/<personality>`. */
export const hostOf = (endpoint: string) => endpoint.split("/")[0] ?? ""
