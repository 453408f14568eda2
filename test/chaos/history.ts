/**
 * The chaos test's history: one shared log, appended by every writer (the provisioning and reload
 * commands on every host, and the test itself) with O_APPEND, one line per write, so its order is
 * the order in which the lines were written. A line is a tag and `key=value` fields:
 *
 * - `start kind=<provision|unprovision|reload> pid= endpoint=<host>/<runtime>/<personality> t= ...`
 *   and `end kind= pid= endpoint= t= status=0` (or `signal=TERM` when the command was ended): a
 *   command's first and last act (test/chaos/commands.ts);
 * - `test <event> ... t=`: what the test did or saw (a kill, an edit, a sweep, a `city fleet` read).
 *
 * `t` is seconds on the machine's monotonic clock since boot (`/proc/uptime`, 10 ms), which the
 * shell scripts read without a fork; the test writes the same clock (`now`). A value with a space
 * or a quote is written as a JSON string.
 */
import { appendFileSync, readFileSync } from "node:fs"
import { performance } from "node:perf_hooks"

/** Milliseconds since boot, on the clock of `/proc/uptime` (read once, then followed by `performance.now`). */
const offset = (() => {
  const before = performance.now()
  const uptime = Number(readFileSync("/proc/uptime", "utf8").split(" ")[0]) * 1000
  return uptime - (before + performance.now()) / 2
})()

/** Now, in milliseconds on the history's clock. */
export const now = (): number => offset + performance.now()

/** A value as a field writes it: bare, or a JSON string when it holds a space, a quote or nothing. */
const value = (v: string | number | boolean): string => {
  const text = String(v)
  return text === "" || /[\s"=]/.test(text) ? JSON.stringify(text) : text
}

/** One `test` line: `test <event> k=v ... t=<seconds>`. */
export const testLine = (event: string, fields: Record<string, string | number | boolean> = {}, at = now()): string =>
  ["test", event, ...Object.entries(fields).map(([k, v]) => `${k}=${value(v)}`), `t=${(at / 1000).toFixed(3)}`].join(" ")

/** Appends one line to the log (one write, O_APPEND). */
export const append = (log: string, line: string): void => appendFileSync(log, `${line}\n`)

export interface Line {
  /** Its position in the log, from 1. */
  readonly n: number
  readonly text: string
  /** `start`, `end` or `test`. */
  readonly tag: string
  /** For a `test` line, what happened (`kill`, `edit`, ...); else the command's kind. */
  readonly event: string
  readonly fields: Readonly<Record<string, string>>
  /** Milliseconds on the history's clock. */
  readonly t: number
}

const field = /([A-Za-z_][\w-]*)=("(?:[^"\\]|\\.)*"|\S*)/g

/** The log's lines, parsed (blank lines skipped; a line without `t` has `t: NaN`). */
export const parse = (text: string): ReadonlyArray<Line> =>
  text.split("\n").flatMap((raw, i): Array<Line> => {
    const line = raw.trim()
    if (line === "") return []
    const tag = line.split(" ", 1)[0]!
    const fields: Record<string, string> = {}
    for (const match of line.matchAll(field)) {
      const v = match[2]!
      fields[match[1]!] = v.startsWith("\"") ? String(JSON.parse(v)) : v
    }
    const event = tag === "test" ? line.split(" ")[1] ?? "" : fields["kind"] ?? ""
    return [{ n: i + 1, text: line, tag, event, fields, t: Number(fields["t"]) * 1000 }]
  })
