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
 * Its life: SIGINT is ignored (a Ctrl-C in a terminal reaches the whole
 * foreground group; the owner decides what a Ctrl-C cancels and tells the
 * spawner). On `close` (the owner's scope closed; its calls were interrupted,
 * so cancelled, before) the groups left behind by finished commands get SIGKILL
 * and the process exits. When stdin ends without `close` (the owner died) the
 * process exits and leaves the commands alone, as the owner's own children were
 * left when it ran them itself: a crash of the daemon mid-reload leaves that
 * reload's process, and its recovery after restart handles it.
 * @since 0.1.0
 */
import { makeChildRunner, type ChildRunner, type RunningChild } from "../services/capabilities/runChild.ts"
import { batchedWriter, decodeToSpawner, lineReader } from "../services/capabilities/SpawnerProtocol.ts"

const privateDirVariable = "CITY_PRIVATE_DIR"

process.on("SIGINT", () => {})

const send = batchedWriter((chunk) => {
  process.stdout.write(chunk)
})
let runner: ChildRunner | undefined
let baseEnv: Readonly<Record<string, string>> = {}
const running = new Map<number, RunningChild>()

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
    return process.exit(0)
  }
  if (message.t === "cancel") {
    const call = running.get(message.id)
    if (call === undefined) return send({ t: "cancelled", id: message.id })
    // Cancelled: `done` is never sent for it, only `cancelled`.
    running.delete(message.id)
    return call.cancel(() => {
      send({ t: "cancelled", id: message.id })
    })
  }
  if (runner === undefined) {
    return send({ t: "done", id: message.id, outcome: { state: "failed", ms: 0, detail: "spawner: run before config" } })
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
    },
    (pid) => send({ t: "spawned", id, pid })
  )
  if (!over) running.set(id, call)
}

process.stdin.on("data", lineReader(onLine))
process.stdin.on("end", () => process.exit(0))
