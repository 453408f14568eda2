/**
 * The messages between `SpawnerRunner` and its spawner process: one JSON object
 * per line, both ways, over the spawner's stdin and stdout.
 *
 * - to the spawner: `config` once, first (the children's environment and the
 *   runner's settings), then `run` and `cancel`, and `close` when the owner's
 *   scope closes. A `run` in a lane (`lane`: its id and this spawner's limit)
 *   waits in the spawner while the lane has `limit` commands running, and
 *   starts the moment one of them ends, with no round trip to the owner;
 * - from the spawner: `spawned` (the pid, so the owner can kill the group if the
 *   spawner dies), `done` (the outcome), `cancelled`, and `closed` once it has
 *   killed what was left behind on `close` (it exits right after).
 *
 * Decoding checks every field by hand (no Schema: the spawner loads nothing but
 * Node and this file, to stay a bare process that forks fast).
 * @since 0.1.0
 */
import type { Outcome } from "../../schema/Outcome.ts"
import type { ChildSettings } from "./runChild.ts"

/**
 * What the owner sends.
 * @since 0.1.0
 * @category models
 */
export type ToSpawner =
  | { readonly t: "config"; readonly env: Readonly<Record<string, string>>; readonly settings: ChildSettings }
  | {
    readonly t: "run"
    readonly id: number
    readonly command: string
    readonly args: ReadonlyArray<string>
    readonly cwd: string
    /** `CITY_PRIVATE_DIR` for this call; `null` removes it. */
    readonly privateDir: string | null
    readonly timeoutMs: number
    /** The lane of the call: at most `limit` of its calls run at once in this spawner. */
    readonly lane?: SpawnerLane
  }
  | { readonly t: "cancel"; readonly id: number }
  | { readonly t: "close" }

/**
 * A lane as one spawner sees it: its id, and how many of its calls may run at once there.
 * @since 0.1.0
 * @category models
 */
export interface SpawnerLane {
  readonly id: number
  readonly limit: number
}

/**
 * What the spawner answers.
 * @since 0.1.0
 * @category models
 */
export type FromSpawner =
  | { readonly t: "spawned"; readonly id: number; readonly pid: number }
  | { readonly t: "done"; readonly id: number; readonly outcome: Outcome }
  | { readonly t: "cancelled"; readonly id: number }
  | { readonly t: "closed" }

type Json = Record<string, unknown>

const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)
const isNumber = (u: unknown): u is number => typeof u === "number" && Number.isFinite(u)
const isString = (u: unknown): u is string => typeof u === "string"
const isStringArray = (u: unknown): u is ReadonlyArray<string> => Array.isArray(u) && u.every(isString)
const isStringRecord = (u: unknown): u is Record<string, string> =>
  isObject(u) && Object.values(u).every(isString)

const parse = (line: string): unknown => {
  try {
    return JSON.parse(line)
  } catch {
    return undefined
  }
}

const decodeOutcome = (u: unknown): Outcome | undefined => {
  if (!isObject(u) || !isString(u.state) || !isNumber(u.ms)) return undefined
  const state = u.state
  if (state !== "ok" && state !== "failed" && state !== "timeout" && state !== "not-executable") return undefined
  return {
    state,
    ms: u.ms,
    ...(isNumber(u.exit) ? { exit: u.exit } : {}),
    ...(isString(u.detail) ? { detail: u.detail } : {})
  }
}

/**
 * One line from the owner; `undefined` when it is not a valid message.
 * @since 0.1.0
 * @category decoding
 */
export const decodeToSpawner = (line: string): ToSpawner | undefined => {
  const u = parse(line)
  if (!isObject(u)) return undefined
  if (u.t === "run") {
    const { args, command, cwd, id, privateDir, timeoutMs } = u
    if (!isNumber(id) || !isString(command) || !isStringArray(args) || !isString(cwd) || !isNumber(timeoutMs)) return undefined
    if (privateDir !== null && !isString(privateDir)) return undefined
    if (u.lane === undefined) return { t: "run", id, command, args, cwd, privateDir, timeoutMs }
    const lane = u.lane
    if (!isObject(lane) || !isNumber(lane.id) || !isNumber(lane.limit) || lane.limit < 1) return undefined
    return { t: "run", id, command, args, cwd, privateDir, timeoutMs, lane: { id: lane.id, limit: lane.limit } }
  }
  if (u.t === "cancel") return isNumber(u.id) ? { t: "cancel", id: u.id } : undefined
  if (u.t === "close") return { t: "close" }
  if (u.t === "config") {
    const { env, settings } = u
    if (!isStringRecord(env) || !isObject(settings)) return undefined
    const { killGraceMs, stderrGraceMs, tailBytes } = settings
    if (!isNumber(killGraceMs) || !isNumber(stderrGraceMs) || !isNumber(tailBytes)) return undefined
    return { t: "config", env, settings: { killGraceMs, stderrGraceMs, tailBytes } }
  }
  return undefined
}

/**
 * One line from the spawner; `undefined` when it is not a valid message.
 * @since 0.1.0
 * @category decoding
 */
export const decodeFromSpawner = (line: string): FromSpawner | undefined => {
  const u = parse(line)
  if (!isObject(u)) return undefined
  if (u.t === "closed") return { t: "closed" }
  if (!isNumber(u.id)) return undefined
  const id = u.id
  if (u.t === "spawned") return isNumber(u.pid) ? { t: "spawned", id, pid: u.pid } : undefined
  if (u.t === "cancelled") return { t: "cancelled", id }
  if (u.t === "done") {
    const outcome = decodeOutcome(u.outcome)
    return outcome === undefined ? undefined : { t: "done", id, outcome }
  }
  return undefined
}

/**
 * Splits a stream of chunks into lines; `onLine` gets each complete line.
 * @since 0.1.0
 * @category utils
 */
export const lineReader = (onLine: (line: string) => void) => {
  let pending = ""
  // A multi-byte character split across two chunks is decoded whole.
  const decoder = new TextDecoder()
  return (chunk: Uint8Array) => {
    const text = pending + decoder.decode(chunk, { stream: true })
    let start = 0
    let end = text.indexOf("\n", start)
    while (end !== -1) {
      if (end > start) onLine(text.slice(start, end))
      start = end + 1
      end = text.indexOf("\n", start)
    }
    pending = text.slice(start)
  }
}

/**
 * Collects messages and writes them as one chunk per turn of the event loop.
 * @since 0.1.0
 * @category utils
 */
export const batchedWriter = (write: (chunk: string) => void) => {
  let queued: Array<string> = []
  const flush = () => {
    const lines = queued
    queued = []
    write(`${lines.join("\n")}\n`)
  }
  return (message: ToSpawner | FromSpawner) => {
    if (queued.length === 0) setImmediate(flush)
    queued.push(JSON.stringify(message))
  }
}
