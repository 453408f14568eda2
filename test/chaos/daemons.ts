/**
 * One host's `city daemon` under the chaos test, as a supervisor runs it: a real process (the
 * `city` binary, its output in a file per start), killed, stopped and continued by the test's
 * signals, and started again by the supervisor after 1 s when it exits on its own (a crash is
 * recorded as such; the run goes on). Every act and every exit is a line of the history
 * (test/chaos/history.ts): `test start|kill|stop|cont host= pid=` and `test exit host= pid= code=
 * signal= expected=`, `expected` being whether the test had sent the signal that ended it.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { openSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { binary } from "../acceptance/cityCli.ts"
import { append, testLine } from "./history.ts"

interface Running {
  readonly child: ChildProcess
  readonly pid: number
  readonly output: string
  readonly exited: Promise<void>
  /** The test sent the signal that ends it. */
  expected: boolean
}

export interface Daemon {
  readonly host: string
  /** The running process's pid; none while it is down. */
  readonly pid: () => number | undefined
  readonly start: () => Promise<void>
  /** SIGKILL, then waits for the exit. */
  readonly kill: () => Promise<void>
  readonly stop: () => void
  readonly cont: () => void
  /** SIGTERM (the end of the run), then waits for the exit; no restart after. */
  readonly close: () => Promise<void>
  /** Each start's output, by pid. */
  readonly outputs: () => Record<string, string>
}

/** The daemon of `host` on `root`, its outputs in `dir`, its acts in the history `log`. */
export const make = (options: {
  readonly host: string
  readonly root: string
  readonly dir: string
  readonly log: string
  readonly args: ReadonlyArray<string>
}): Daemon => {
  const { host, log } = options
  let running: Running | undefined
  let closing = false
  let starts = 0
  const outputs = new Map<number, string>()

  const start = async () => {
    if (running !== undefined || closing) return
    const output = join(options.dir, `${host}-daemon-${++starts}.log`)
    const out = openSync(output, "a")
    const env: Record<string, string | undefined> = { ...process.env, CITY_ROOT: options.root }
    delete env["CITY_PRIVATE_DIR"]
    const child = spawn(process.execPath, [binary, "daemon", ...options.args], { env, stdio: ["ignore", out, out] })
    const pid = child.pid ?? 0
    outputs.set(pid, output)
    let exited!: () => void
    const current: Running = { child, pid, output, exited: new Promise((resolve) => exited = resolve), expected: false }
    running = current
    append(log, testLine("start", { host, pid }))
    child.once("exit", (code, signal) => {
      append(log, testLine("exit", { host, pid, code: String(code), signal: String(signal), expected: current.expected }))
      if (running === current) running = undefined
      exited()
      if (!current.expected && !closing) setTimeout(() => void start(), 1_000)
    })
  }

  const signal = (name: NodeJS.Signals, event: string, expected: boolean) => {
    const current = running
    if (current === undefined) return undefined
    if (expected) current.expected = true
    append(log, testLine(event, { host, pid: current.pid }))
    current.child.kill(name)
    return current
  }

  return {
    host,
    pid: () => running?.pid,
    start,
    kill: async () => {
      await signal("SIGKILL", "kill", true)?.exited
    },
    stop: () => void signal("SIGSTOP", "stop", false),
    cont: () => void signal("SIGCONT", "cont", false),
    close: async () => {
      closing = true
      const current = running
      if (current === undefined) return
      current.expected = true
      current.child.kill("SIGCONT")
      current.child.kill("SIGTERM")
      const bounded = new Promise<void>((resolve) => setTimeout(resolve, 40_000).unref())
      await Promise.race([current.exited, bounded])
      if (running === current) current.child.kill("SIGKILL")
    },
    outputs: () => Object.fromEntries([...outputs].map(([pid, file]) => [String(pid), readFileSync(file, "utf8")]))
  }
}
