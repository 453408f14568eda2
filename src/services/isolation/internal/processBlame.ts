/**
 * How a plugin's child process (`"isolation": "process"`) names the code it is running when the
 * host asks (docs/plugin-loader.md, "Liveness"): the host's inspector reaches only its own threads,
 * so the process answers for itself. It keeps a small thread of its own, with its own event loop,
 * listening on a side channel (file descriptor 4, a pipe the host opened beside the IPC channel:
 * the IPC channel is served by the main thread, which is the one that is stuck). On each request
 * line, `{"folder":"file:///…/"}`, the thread connects to the process's main thread
 * (`inspector.Session.connectToMainThread()`), enables the debugger, pauses it and answers one line,
 * `{"location":"fn (url:line:column)"}` (the innermost frame in the plugin's folder; a pause that
 * lands outside it, as a microtask loop's often does, is resumed and taken again, a few times) or
 * `{"location":null}`, then resumes and disconnects.
 *
 * A script run with `new Worker(source, { eval: true })`: the thread needs nothing but Node's own
 * modules, and a string needs no file of its own beside the bundled worker main. It writes only to
 * its socket.
 * @since 0.1.0
 */
import { Worker } from "node:worker_threads"
import * as Isolation from "../../../schema/Isolation.ts"

const { blameFd } = Isolation

const source = String.raw`"use strict"
const net = require("node:net")
const inspector = require("node:inspector")
const maxPauses = 25
const socket = new net.Socket({ fd: ${blameFd}, readable: true, writable: true })
socket.on("error", () => {})
let buffered = ""
socket.on("data", (chunk) => {
  buffered += chunk
  for (let at = buffered.indexOf("\n"); at >= 0; at = buffered.indexOf("\n")) {
    const line = buffered.slice(0, at)
    buffered = buffered.slice(at + 1)
    let folder = ""
    try { folder = String(JSON.parse(line).folder || "") } catch {}
    blame(folder)
  }
})
const blame = (folder) => {
  const session = new inspector.Session()
  const urls = new Map()
  let pauses = 0
  let fallback = null
  let done = false
  const urlOf = (f) => urls.get(f.location.scriptId) || ""
  const describe = (f) => (f.functionName === "" ? "(anonymous)" : f.functionName) + " (" + urlOf(f) + ":" + (f.location.lineNumber + 1) + ":" + (f.location.columnNumber + 1) + ")"
  const answer = (location, paused) => {
    if (done) return
    done = true
    socket.write(JSON.stringify({ location }) + "\n")
    const close = () => { try { session.disconnect() } catch {} }
    if (paused) session.post("Debugger.resume", close)
    else close()
  }
  try {
    session.connectToMainThread()
    session.on("Debugger.scriptParsed", (m) => urls.set(m.params.scriptId, m.params.url))
    session.on("Debugger.paused", (m) => {
      const frames = m.params.callFrames
      const own = frames.find((f) => folder !== "" && urlOf(f).startsWith(folder))
      if (own !== undefined) return answer(describe(own), true)
      const outside = frames.find((f) => urlOf(f) !== "" && !urlOf(f).startsWith("node:"))
      if (fallback === null && outside !== undefined) fallback = describe(outside)
      if (++pauses >= maxPauses) return answer(fallback, true)
      session.post("Debugger.resume", () => setTimeout(() => { if (!done) session.post("Debugger.pause") }, 10))
    })
    session.post("Debugger.enable", () => session.post("Debugger.pause"))
  } catch {
    answer(null, false)
  }
}
`

/**
 * Starts the answering thread in this process, if it is a plugin's process the host gave a side
 * channel (file descriptor `Isolation.blameFd` open); it does not keep the process alive.
 * @since 0.1.0
 * @category internals
 */
export const startProcessBlame = (hasChannel: boolean): void => {
  if (!hasChannel) return
  const thread = new Worker(source, { eval: true })
  thread.unref()
  // Its own failure is not the plugin's: the host then gets no answer, and names the plugin only.
  thread.on("error", () => {})
}
