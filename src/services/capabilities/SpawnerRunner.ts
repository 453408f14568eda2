/**
 * The command runner of `CapabilitiesLive`: the same semantics as
 * `CommandRunner.make` (no shell, timeouts with SIGTERM → SIGKILL, the exit-0
 * rule, stderr tails; the code is `runChild.ts`), but the commands are spawned
 * by small helper Node processes, the spawners (`programs/spawner.ts`; two by
 * default), started lazily by the first call and kept for the runner's scope.
 *
 * Why (measurements in `bench/sweep.bench.ts`):
 * `spawn` forks the calling process, and a fork of a process with the library
 * loaded costs more than one of a bare `node`; in the spawner the forks also run
 * beside this process's event loop instead of blocking it.
 *
 * Decisions:
 * - The spawner's script is `spawner.cjs` beside the bundle (`dist/city.cjs`),
 *   `programs/spawner.js` in the compiled `dist/`, or the
 *   checkout's `dist/spawner.cjs` (built by `scripts/bundle.mjs`); when none is
 *   there, the runner is the in-process one.
 * - The spawner's own environment is this process's without `NODE_OPTIONS` (a
 *   loader like tsx would make it a big process again) and without
 *   `NODE_EXTRA_CA_CERTS` (Node reads and parses those certificates when it
 *   starts, about 40 ms of a 60 ms start measured with the system's bundle, and
 *   the spawner never opens a TLS connection); the children get this process's
 *   environment unchanged (sent in the first message).
 * - A joint's calls go through a lane (`lane(concurrency)`): its places are
 *   shared among the spawners (4 over 2: 2 each), each spawner is handed up to
 *   twice its share, and it starts a call it holds the moment one of the lane's
 *   ends there, with no round trip to this process. So no more than
 *   `concurrency` commands run at once, and the joint's `forEach` runs `window`
 *   (twice the places) calls at a time. A call cancelled while it is held never
 *   starts. Calls outside a lane (`run`) start at once in the spawner with the
 *   fewest calls.
 * - If the spawner dies (killed, crashed, could not start), every call it was
 *   running is `failed` with the reason and the spawner's stderr, and each of
 *   their process groups gets SIGTERM, then SIGKILL after `killGrace`; the next
 *   call starts a new spawner. Nothing waits forever on a dead spawner.
 * - While no call is running the spawner does not keep this process alive
 *   (unreferenced); when the scope closes it is told to `close`: it SIGKILLs
 *   the groups left behind, says `closed` and exits (the scope waits for that
 *   line, not for the exit), and is SIGKILLed itself if neither comes within
 *   twice the grace. If this process dies, the spawner sees the
 *   end of its stdin and exits, leaving running commands alone (as they were
 *   left when this process ran them itself).
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { Socket } from "node:net"
import { fileURLToPath } from "node:url"
import type { Outcome } from "../../schema/Outcome.ts"
import {
  baseEnvironment,
  childSettings,
  CommandRunner,
  type CommandRunnerConfig,
  type Lane,
  make as makeInProcess,
  type RunRequest
} from "./CommandRunner.ts"
import { signalGroup } from "./runChild.ts"
import { batchedWriter, decodeFromSpawner, lineReader, type SpawnerLane, type ToSpawner } from "./SpawnerProtocol.ts"

/**
 * Where the spawner's script is, if it is there (see the module's decisions).
 * @since 0.1.0
 * @category utils
 */
export const spawnerScript = (): Option.Option<string> => {
  const candidates = ["./spawner.cjs", "../../programs/spawner.js", "../../../dist/spawner.cjs"]
  for (const candidate of candidates) {
    const url = new URL(candidate, import.meta.url)
    if (url.protocol === "file:" && existsSync(url)) return Option.some(fileURLToPath(url))
  }
  return Option.none()
}

/**
 * The spawner's own environment: `env` without `NODE_OPTIONS` and `NODE_EXTRA_CA_CERTS` (see the
 * module's decisions; its children get `env` as it is).
 * @since 0.1.0
 * @category utils
 */
export const spawnerEnvironment = (env: Readonly<Record<string, string>>): Record<string, string> => {
  const own: Record<string, string> = { ...env }
  delete own.NODE_OPTIONS
  delete own.NODE_EXTRA_CA_CERTS
  return own
}

/**
 * Where the spawner's script is and how many spawner processes share the calls.
 * @since 0.1.0
 * @category models
 */
export interface SpawnerOptions {
  /** The script (default: `spawnerScript()`); `None` runs the commands in this process. */
  readonly script?: Option.Option<string>
  /** Spawner processes (default `defaultProcesses`), started on demand. */
  readonly processes?: number
}

/**
 * Spawner processes by default: two, so that forks run on two cores at once.
 * @since 0.1.0
 * @category constants
 */
export const defaultProcesses = 2

interface Call {
  readonly started: number
  readonly resume: (outcome: Outcome) => void
  pid: number
  cancelled: (() => void) | undefined
  /** Runs once when the call is over, however it ended (a lane's count of calls handed over). */
  readonly over: (() => void) | undefined
}

interface Spawner {
  readonly child: ChildProcess
  readonly send: (message: ToSpawner) => void
  readonly calls: Map<number, Call>
  readonly exited: Promise<void>
  /** Resolves when the spawner says it has closed (its leftover groups killed), or has exited. */
  readonly closed: Promise<void>
}

const setReferenced = (child: ChildProcess, referenced: boolean) => {
  for (const stream of [child.stdin, child.stdout, child.stderr]) {
    if (stream instanceof Socket) {
      if (referenced) stream.ref()
      else stream.unref()
    }
  }
  if (referenced) child.ref()
  else child.unref()
}

/**
 * The runner over a spawner process; falls back to the in-process runner when the script is missing.
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  config: CommandRunnerConfig = {},
  options: SpawnerOptions = {}
): Effect.Effect<CommandRunner["Type"], never, Scope.Scope> =>
  Option.match(options.script ?? spawnerScript(), {
    onNone: () => makeInProcess(config),
    onSome: (file) => makeWith(config, file, Math.max(1, Math.floor(options.processes ?? defaultProcesses)))
  })

const makeWith = (
  config: CommandRunnerConfig,
  file: string,
  processes: number
): Effect.Effect<CommandRunner["Type"], never, Scope.Scope> =>
  Effect.gen(function*() {
    const settings = childSettings(config)
    const childEnv = baseEnvironment()
    const ownEnv = spawnerEnvironment(childEnv)
    /** The spawner processes, started on demand; a call goes to the one with the fewest calls. */
    const slots: Array<Spawner | undefined> = Array.from({ length: processes }, () => undefined)
    let nextId = 0

    /** Group of a command whose spawner died: SIGTERM, SIGKILL after the grace. */
    const terminateGroup = (pid: number) => {
      if (pid <= 0 || !signalGroup(pid, "SIGTERM")) return
      setTimeout(() => {
        if (signalGroup(pid, 0)) signalGroup(pid, "SIGKILL")
      }, settings.killGraceMs).unref()
    }

    const start = (slot: number): Spawner => {
      const child = spawn(process.execPath, [file], { stdio: ["pipe", "pipe", "pipe"], env: ownEnv })
      const calls = new Map<number, Call>()
      let stderr = ""
      let over = false
      const died = (reason: string) => {
        if (over) return
        over = true
        if (slots[slot] === spawner) slots[slot] = undefined
        const tail = stderr.trim()
        for (const [id, call] of calls) {
          calls.delete(id)
          call.over?.()
          terminateGroup(call.pid)
          if (call.cancelled !== undefined) call.cancelled()
          else {
            call.resume({
              state: "failed",
              ms: Math.round(performance.now() - call.started),
              detail: `the spawner process ${reason} ${
                call.pid > 0
                  ? "while the command ran; its process group was terminated"
                  : "before it reported the command's start"
              }${tail === "" ? "" : `: ${tail}`}`
            })
          }
        }
      }
      const exited = new Promise<void>((resolve) => {
        child.once("exit", (code, signal) => {
          died(signal === null ? `exited with code ${code}` : `was killed by ${signal}`)
          resolve()
        })
        child.once("error", (error) => {
          died(`could not run (${error.message})`)
          resolve()
        })
      })
      // A write after the spawner died fails with EPIPE: its death is handled by "exit".
      child.stdin?.on("error", () => {})
      child.stderr?.on("data", (chunk: Uint8Array) => {
        stderr = (stderr + Buffer.from(chunk).toString()).slice(-settings.tailBytes)
      })
      let acknowledge = () => {}
      const closed = new Promise<void>((resolve) => {
        acknowledge = resolve
      })
      child.stdout?.on("data", lineReader((line) => {
        const message = decodeFromSpawner(line)
        if (message === undefined) return
        if (message.t === "closed") return acknowledge()
        const call = calls.get(message.id)
        if (call === undefined) return
        if (message.t === "spawned") {
          call.pid = message.pid
          return
        }
        calls.delete(message.id)
        call.over?.()
        if (calls.size === 0) setReferenced(child, false)
        if (call.cancelled !== undefined) call.cancelled()
        else if (message.t === "done") call.resume(message.outcome)
      }))
      const send = batchedWriter((chunk) => {
        if (child.stdin?.writable === true) child.stdin.write(chunk)
      })
      const spawner: Spawner = { child, send, calls, exited, closed: Promise.race([closed, exited]) }
      send({ t: "config", env: childEnv, settings })
      setReferenced(child, false)
      return spawner
    }

    /**
     * Tells one spawner to close; resolves when it says it has closed (its leftover groups are
     * killed by then; its own exit need not be waited for) or has exited. SIGKILLed if neither
     * happens within twice the grace.
     */
    const close = (spawner: Spawner): Promise<void> => {
      const message: ToSpawner = { t: "close" }
      spawner.child.stdin?.end(`${JSON.stringify(message)}\n`)
      setReferenced(spawner.child, true)
      const bound = setTimeout(() => {
        spawner.child.kill("SIGKILL")
        for (const call of spawner.calls.values()) terminateGroup(call.pid)
      }, 2 * settings.killGraceMs + 1000)
      return spawner.closed.then(() => {
        clearTimeout(bound)
        setReferenced(spawner.child, false)
      })
    }

    yield* Effect.addFinalizer(() =>
      Effect.promise(() => {
        const open = slots.flatMap((spawner) => spawner === undefined ? [] : [spawner])
        slots.fill(undefined)
        return Promise.all(open.map(close))
      })
    )

    /** The spawner with the fewest calls running, started if its slot is empty. */
    const pick = (): Spawner => {
      let best = 0
      let fewest = Number.POSITIVE_INFINITY
      for (let i = 0; i < slots.length; i++) {
        const size = slots[i]?.calls.size ?? 0
        if (size < fewest) {
          fewest = size
          best = i
        }
      }
      return slots[best] ?? (slots[best] = start(best))
    }

    /** Where a call goes: the spawner, the lane as that spawner sees it, and what to do when it is over. */
    interface Route {
      readonly spawner: Spawner
      readonly lane?: SpawnerLane
      readonly over?: () => void
    }

    /** Hands one call to the spawner `route` chooses (when the call starts, not before). */
    const submit = (request: RunRequest, route: () => Route): Effect.Effect<Outcome> =>
      Effect.async<Outcome>((resume) => {
        const { lane, over, spawner } = route()
        const id = nextId++
        const call: Call = {
          started: performance.now(),
          resume: (outcome) => resume(Effect.succeed(outcome)),
          pid: 0,
          cancelled: undefined,
          over
        }
        if (spawner.calls.size === 0) setReferenced(spawner.child, true)
        spawner.calls.set(id, call)
        spawner.send({
          t: "run",
          id,
          command: request.command,
          args: request.args,
          cwd: request.cwd,
          privateDir: Option.getOrNull(request.privateDir),
          timeoutMs: Duration.toMillis(Duration.decode(request.timeout)),
          ...(lane === undefined ? {} : { lane })
        })
        // Interrupted: the spawner terminates the group (SIGTERM, SIGKILL after the grace), awaited;
        // a call still waiting in its lane never starts.
        return Effect.async<void>((resumeCancel) => {
          if (!spawner.calls.has(id)) return resumeCancel(Effect.void)
          call.cancelled = () => resumeCancel(Effect.void)
          spawner.send({ t: "cancel", id })
        })
      })

    const run = (request: RunRequest): Effect.Effect<Outcome> => submit(request, () => ({ spawner: pick() }))

    let nextLane = 0
    /**
     * A lane: its places are shared among the spawners (4 over 2: 2 each), and each spawner is
     * handed up to twice its share, so that a call is waiting there whenever one ends.
     */
    const lane = (concurrency: number): Lane => {
      const id = nextLane++
      const places = Math.max(1, Math.floor(concurrency))
      const used = Math.min(processes, places)
      const shares = Array.from({ length: used }, (_, slot) => ({
        slot,
        limit: Math.floor(places / used) + (slot < places % used ? 1 : 0),
        handed: 0
      }))
      const route = (): Route => {
        // The spawner with the fewest calls handed over for its share.
        const share = shares.reduce((a, b) => b.handed * a.limit < a.handed * b.limit ? b : a)
        share.handed++
        return {
          spawner: slots[share.slot] ?? (slots[share.slot] = start(share.slot)),
          lane: { id, limit: share.limit },
          over: () => {
            share.handed--
          }
        }
      }
      return { run: (request) => submit(request, route), window: 2 * places }
    }

    const prepare = Effect.sync(() => {
      for (let i = 0; i < slots.length; i++) slots[i] ??= start(i)
    })

    return CommandRunner.of({ run, prepare, lane })
  })

/**
 * The spawner runner as a Layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = (config: CommandRunnerConfig = {}) => Layer.scoped(CommandRunner, make(config))
