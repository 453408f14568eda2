/**
 * The watchdog thread's program (docs/plugin-loader.md, "The host's own thread"): plain
 * CommonJS, run with `new Worker(source, { eval: true })`. Why a string: the thread must start the
 * same way from the sources (tsx, vitest), from the compiled package and from the `city` binary's
 * single bundle, and a self-contained script needs no file of its own beside any of them (the
 * isolation worker's main is a built file, WorkerScript.ts, which this one does not need: it
 * imports only Node's own modules).
 *
 * What it does, every `tickMs`:
 * - reads the heartbeat the host's thread stores (`Atomics.store` of `Date.now()`) in the
 *   SharedArrayBuffer; the thread is blocked when the heartbeat is older than `staleMs`; a tick
 *   of its own that comes more than `staleMs` late means the whole process was stopped (SIGSTOP),
 *   and the heartbeat's age then counts from the resume;
 * - once blocked for `reportMs`: connects to the host's thread (`inspector.Session
 *   .connectToMainThread()`), `Debugger.enable` (each `Debugger.scriptParsed` maps a scriptId to a
 *   URL), `Debugger.pause`, and takes the blocking frame from `Debugger.paused`: the first frame
 *   inside a plugin folder (its plugin named), else the first frame outside Node's own code; then
 *   `Debugger.resume` and disconnects. It writes one log line and, with `recordFile`, the freeze
 *   record (temp file + rename);
 * - when the heartbeat is fresh again after a report: removes the record and logs one line;
 * - once blocked for `limitMs`: captures the frame again, writes its last line and the record
 *   (`ended: true`), then ends the process from the host's thread itself: `Runtime.evaluate` of
 *   `process.exit(<exitCode>)` while that thread is paused in the debugger (a worker's own
 *   `process.exit` ends only the worker, and signals other than SIGKILL wait for the blocked
 *   thread's event loop). When the thread cannot be paused within `exitGraceMs` (blocked outside
 *   JavaScript, in a native call), it says so and sends the process SIGKILL at once (exit status
 *   137); also when `process.exit` has not ended the process `exitGraceMs` after it was asked.
 *
 * It writes with `fs.writeSync` only: a worker's `console` goes through the host's thread, which
 * is the one that is blocked.
 * @internal
 */
export const source = String.raw`"use strict"
const { workerData } = require("node:worker_threads")
const inspector = require("node:inspector")
const fs = require("node:fs")
const d = workerData
const beat = new BigInt64Array(d.heartbeat)
let reported = null
let ending = false
let busy = false

// A plugin folder known at the start, else the first folder under a plugin root.
const pluginOf = (url) => {
  const clean = url.split("?")[0]
  for (const p of d.plugins) if (clean.startsWith(p.prefix)) return p.name
  for (const root of d.roots) {
    if (!clean.startsWith(root)) continue
    const name = clean.slice(root.length).split("/")[0]
    if (name !== "" && clean.length > root.length + name.length) return decodeURIComponent(name)
  }
  return null
}

const blameOf = (frames, urls) => {
  const located = frames.map((f) => ({
    fn: f.functionName === "" ? "<anonymous>" : f.functionName,
    url: (urls.get(f.location.scriptId) || f.url || "").split("?")[0],
    line: f.location.lineNumber + 1,
    plugin: pluginOf(urls.get(f.location.scriptId) || f.url || "")
  }))
  return located.find((f) => f.plugin !== null) ||
    located.find((f) => f.url !== "" && !f.url.startsWith("node:")) || located[0] || null
}

const describe = (blame) => {
  if (blame === null) return { plugin: null, location: null, text: "code outside JavaScript (no frame could be taken)" }
  const location = blame.url + ":" + blame.line + " in " + blame.fn
  return { plugin: blame.plugin, location, text: blame.plugin === null ? location + ", no plugin's code" : "plugin " + blame.plugin + " (" + location + ")" }
}

const secs = (ms) => String(Math.floor(ms / 1000))

const write = (level, message, fields) => {
  const now = new Date().toISOString()
  let text = message
  if (d.format === "json") {
    text = JSON.stringify({ message, logLevel: level, timestamp: now, annotations: fields, spans: {}, fiberId: "watchdog" })
  } else if (d.format === "logfmt") {
    const value = (v) => /^[^\s"=]*$/.test(v) ? v : JSON.stringify(v)
    text = "timestamp=" + now + " level=" + level + " fiber=watchdog message=" + value(message) +
      Object.keys(fields).map((k) => " " + k + "=" + value(String(fields[k]))).join("")
  }
  try { fs.writeSync(2, text + "\n") } catch {}
}

const record = (since, where, ended) => {
  if (d.recordFile === null) return
  const value = {
    schema: 1, pid: d.pid, plugin: where.plugin, location: where.location,
    since: new Date(since).toISOString(), blocked_ms: Date.now() - since, limit_ms: d.limitMs, ended
  }
  const temp = d.recordFile + "." + d.pid + ".tmp"
  try {
    fs.writeFileSync(temp, JSON.stringify(value) + "\n", { mode: 0o600 })
    fs.renameSync(temp, d.recordFile)
  } catch {}
}

const unrecord = () => {
  if (d.recordFile === null) return
  try { fs.unlinkSync(d.recordFile) } catch {}
}

// Pauses the host's thread and gives the session and the blocking frame (null when no pause came).
const capture = (done) => {
  const session = new inspector.Session()
  const urls = new Map()
  let finished = false
  const finish = (blame, paused) => {
    if (finished) return
    finished = true
    clearTimeout(timer)
    done(session, blame, paused)
  }
  const timer = setTimeout(() => finish(null, false), d.pauseMs)
  try {
    session.connectToMainThread()
    session.on("Debugger.scriptParsed", (m) => urls.set(m.params.scriptId, m.params.url))
    session.on("Debugger.paused", (m) => {
      if (finished && !ending) session.post("Debugger.resume")
      else finish(blameOf(m.params.callFrames, urls), true)
    })
    session.post("Debugger.enable", () => session.post("Debugger.pause"))
  } catch {
    finish(null, false)
  }
}

const release = (session, paused) => {
  const close = () => { try { session.disconnect() } catch {} }
  if (paused) session.post("Debugger.resume", close)
  else close()
}

const end = (since) => {
  ending = true
  capture((session, blame, paused) => {
    const where = blame === null && reported !== null ? reported.where : describe(blame)
    const blocked = Date.now() - since
    write("ERROR", d.who + ": the host's thread was blocked for " + secs(blocked) + " s in " + where.text +
      ", past the freeze limit of " + secs(d.limitMs) + " s: " +
      (paused ? d.ending : "killing the process with SIGKILL (exit status 137): its thread is blocked outside JavaScript"),
      { plugin: where.plugin === null ? "" : where.plugin, location: where.location === null ? "" : where.location, code: "host.frozen_ended" })
    record(since, where, true)
    if (paused) {
      session.post("Runtime.evaluate", { expression: "process.exit(" + d.exitCode + ")" })
      setTimeout(() => process.kill(d.pid, "SIGKILL"), d.exitGraceMs)
    } else {
      process.kill(d.pid, "SIGKILL")
    }
  })
}

// The whole process stopped (SIGSTOP, a suspended machine) stops this thread too: a tick that
// comes far later than asked says so, and the host's thread is then measured from the resume, not
// blamed for the stop.
let previousTick = performance.now()
let resumedAt = 0
setInterval(() => {
  const tick = performance.now()
  const gap = tick - previousTick
  previousTick = tick
  if (gap > d.tickMs + d.staleMs) resumedAt = Date.now()
  if (ending || busy) return
  const last = Math.max(Number(Atomics.load(beat, 0)), resumedAt)
  const age = Date.now() - last
  if (age < d.staleMs) {
    if (reported !== null) {
      unrecord()
      write("INFO", d.who + ": the host's thread is free again after " + secs(Date.now() - reported.since) + " s (" + reported.where.text + ")",
        { plugin: reported.where.plugin === null ? "" : reported.where.plugin, code: "host.unfrozen" })
      reported = null
    }
    return
  }
  if (age >= d.limitMs) return end(last)
  if (reported === null && age >= d.reportMs && d.reportMs < d.limitMs) {
    busy = true
    capture((session, blame, paused) => {
      const where = describe(blame)
      reported = { since: last, where }
      record(last, where, false)
      write("WARN", d.who + ": the host's thread is blocked for " + secs(Date.now() - last) + " s in " + where.text,
        { plugin: where.plugin === null ? "" : where.plugin, location: where.location === null ? "" : where.location, code: "host.frozen" })
      release(session, paused)
      busy = false
    })
  }
}, d.tickMs)
`
