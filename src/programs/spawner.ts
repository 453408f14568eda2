/**
 * The spawner process: a bare Node process that runs provisioning commands for
 * `SpawnerRunner` (started by it, once per runner, with this file as its only
 * program). It reads `ToSpawner` lines on stdin and writes `FromSpawner` lines
 * on stdout (`services/capabilities/SpawnerProtocol.ts`); each command runs through `runChild.ts`, the same
 * code as the in-process runner (`services/capabilities/runChild.ts`).
 *
 * Why a process: `spawn` forks the calling process, and a fork costs more the
 * bigger the heap (the `city` process with the library loaded vs a bare `node`:
 * ~6.5 vs ~5.2 ms a call in a profile); here the forks also leave the owner's
 * event loop free for its own work (logging, records, progress).
 *
 * Lanes: a `run` in a lane waits here while the lane has its limit of commands
 * running, and starts as soon as one of them has ended (a cancelled one: once
 * its group is terminated), so a joint's next call never waits for a round
 * trip to the owner. A cancelled call that is still waiting never starts.
 *
 * Its life: SIGINT is ignored (a Ctrl-C in a terminal reaches the whole
 * foreground group; the owner decides what a Ctrl-C cancels and tells the
 * spawner). On `close` (the owner's scope closed; its calls were interrupted,
 * so cancelled, before) the groups left behind by finished commands get SIGKILL,
 * the owner is told `closed`, and the process exits. When stdin ends without `close` (the owner died) the
 * process exits and leaves the commands alone, as the owner's own children were
 * left when it ran them itself: a crash of the daemon mid-reload leaves that
 * reload's process, and its recovery after restart handles it.
 * @since 0.1.0
 */
import { makeChildRunner, type ChildRunner, type RunningChild } from "../services/capabilities/runChild.ts"
import {
  batchedWriter,
  decodeToSpawner,
  type FromSpawner,
  lineReader,
  type ToSpawner
} from "../services/capabilities/SpawnerProtocol.ts"

type Run = Extract<ToSpawner, { readonly t: "run" }>

/** A lane's calls in this process: how many run, and those waiting for a free place, in order. */
interface Lane {
  readonly id: number
  readonly limit: number
  running: number
  readonly waiting: Array<Run>
}

const privateDirVariable = "CITY_PRIVATE_DIR"

process.on("SIGINT", () => {})

const send = batchedWriter((chunk) => {
  process.stdout.write(chunk)
})
let runner: ChildRunner | undefined
let baseEnv: Readonly<Record<string, string>> = {}
/** The calls started and not over, with their lane. */
const running = new Map<number, { readonly child: RunningChild; readonly lane: Lane | undefined }>()
const lanes = new Map<number, Lane>()
/** The lane of each call that is waiting. */
const waitingIn = new Map<number, Lane>()

/** A place in `lane` is free: its next waiting call starts, or the lane is forgotten once idle. */
const freed = (lane: Lane) => {
  lane.running--
  const next = lane.waiting.shift()
  if (next !== undefined) {
    waitingIn.delete(next.id)
    start(next, lane)
  } else if (lane.running === 0) lanes.delete(lane.id)
}

const start = (message: Run, lane: Lane | undefined) => {
  if (lane !== undefined) lane.running++
  if (runner === undefined) {
    send({ t: "done", id: message.id, outcome: { state: "failed", ms: 0, detail: "spawner: run before config" } })
    if (lane !== undefined) freed(lane)
    return
  }
  const { id } = message
  const env = message.privateDir === null ? baseEnv : { ...baseEnv, [privateDirVariable]: message.privateDir }
  // A spawn refused at once (a bad cwd) reports before `run` returns: then there is nothing to keep.
  let over = false
  const call = runner.run(
    { command: message.command, args: message.args, cwd: message.cwd, env, timeoutMs: message.timeoutMs },
    (outcome) => {
      over = true
      running.delete(id)
      send({ t: "done", id, outcome })
      if (lane !== undefined) freed(lane)
    },
    (pid) => send({ t: "spawned", id, pid })
  )
  if (!over) running.set(id, { child: call, lane })
}

const cancel = (id: number) => {
  const lane = waitingIn.get(id)
  if (lane !== undefined) {
    // Still waiting: it never starts.
    waitingIn.delete(id)
    lane.waiting.splice(lane.waiting.findIndex((message) => message.id === id), 1)
    return send({ t: "cancelled", id })
  }
  const call = running.get(id)
  if (call === undefined) return send({ t: "cancelled", id })
  // Cancelled: `done` is never sent for it, only `cancelled`; its place in a lane is free once it is terminated.
  running.delete(id)
  call.child.cancel(() => {
    send({ t: "cancelled", id })
    if (call.lane !== undefined) freed(call.lane)
  })
}

const onLine = (line: string) => {
  const message = decodeToSpawner(line)
  if (message === undefined) {
    process.stderr.write(`spawner: ignored an invalid message: ${line.slice(0, 200)}\n`)
    return
  }
  if (message.t === "config") {
    runner = makeChildRunner(message.settings)
    baseEnv = message.env
    return
  }
  if (message.t === "close") {
    runner?.killLeftovers()
    // The owner need not wait for this process's exit, only for this line.
    process.stdout.write(`${JSON.stringify({ t: "closed" } satisfies FromSpawner)}\n`, () => process.exit(0))
    return
  }
  if (message.t === "cancel") return cancel(message.id)
  if (message.lane === undefined) return start(message, undefined)
  let lane = lanes.get(message.lane.id)
  if (lane === undefined) {
    lane = { id: message.lane.id, limit: message.lane.limit, running: 0, waiting: [] }
    lanes.set(lane.id, lane)
  }
  if (lane.running < lane.limit) return start(message, lane)
  lane.waiting.push(message)
  waitingIn.set(message.id, lane)
}

process.stdin.on("data", lineReader(onLine))
process.stdin.on("end", () => process.exit(0))
