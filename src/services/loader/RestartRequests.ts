/**
 * Restart requests to the `city daemon`, durable, and the generation it publishes
 * (docs/plugin-loader-lifecycle.md: "Every daemon start builds the registry generation from disk,
 * and a plugin change is applied by restarting, never by swapping the plugin in place"; "A plugin
 * change of any kind other than a skill set costs one daemon restart, which pauses running turns
 * first").
 *
 * The request record, `$CITY_ROOT/state/plugins/restart.json`, is read-modify-written under the
 * root lock, atomically, private (0600 in a 0700 folder). In sequence numbers, like an owed reload:
 * - `request(reason)` (`city plugins reload`) raises `requested` by one;
 * - the daemon, at each poll, takes `target = requested` when `requested > applied`, restarts by
 *   generation (`Generations.restart`: Turns pause, the old generation is disposed, the new one
 *   loads), publishes it, then records `applied = max(applied, target)`. A request that arrives
 *   during the restart has a number above `target`: the record stays owed and exactly one more
 *   restart follows, never consumed silently;
 * - a daemon start builds generation 1 from disk, which satisfies every request made before it:
 *   the `requested` read before generation 1 loads is marked applied once it is ready;
 * - a crash at any point leaves `requested > applied` if anything was owed.
 *
 * The published generation, `$CITY_ROOT/state/plugins/generation.json` (0600): `{ schema, pid,
 * generation, started_at, report }`, the report encoded with the `LoadReport` Schema. The daemon
 * writes it after generation 1 and after every restart (its own, and one a plugin asked for, seen
 * at the next poll), and removes it when it stops. Readers trust it only while the pid in it is the
 * running daemon's (`daemon.pid`): a file left by a killed daemon is not a running generation.
 *
 * Decisions where the spec is silent:
 * - a settled record is kept (not deleted, unlike owed reloads), so `city plugins reload --wait`
 *   can compare `applied` with its own number;
 * - a failed restart (ReloadRejected: a root cannot be read, the City is closing) leaves the old
 *   generation serving, records `last_error` with its target, and stays owed: the daemon tries
 *   again at its next poll;
 * - a record that cannot be decoded counts as one owed request (a restart too many rather than one
 *   lost) and is replaced by the next write;
 * - the generation file has one writer (the daemon holding `daemon.pid`) and is written without the
 *   root lock, each write a complete atomic document; `started_at` of a restart a plugin asked for
 *   is when the daemon saw it (at most one poll late).
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Pretty from "effect/Pretty"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type { StateRootError } from "../../schema/CapabilityErrors.ts"
import { LoadReport } from "../../schema/LoadReport.ts"
import { RestartRecord, RunningGeneration } from "../../schema/PluginGeneration.ts"
import { StateRoot } from "../root/StateRoot.ts"
import { PluginRegistry } from "../city/internal/pluginRegistry.ts"
import { Generations } from "./Generations.ts"
import { layout } from "../root/CityRoot.ts"

/**
 * The request record, relative to the root.
 * @since 0.1.0
 * @category constants
 */
export const restartFile = layout.restart

/**
 * The published generation, relative to the root.
 * @since 0.1.0
 * @category constants
 */
export const generationFile = layout.generation

/**
 * Is a restart owed by this record?
 * @since 0.1.0
 * @category guards
 */
export const isOwed = (record: RestartRecord): boolean => record.requested > record.applied

type Errors = StateRootError

/**
 * The durable restart requests of a state root.
 * @since 0.1.0
 * @category tags
 */
export class RestartRequests extends Context.Tag("effect-city/RestartRequests")<
  RestartRequests,
  {
    /** Records one more request (`requested + 1`); returns the record as written. */
    readonly request: (reason: string) => Effect.Effect<RestartRecord, Errors>
    /** The record, if any (an undecodable one reads as one owed request). */
    readonly get: Effect.Effect<Option.Option<RestartRecord>, StateRootError>
    /** Every request up to `target` is applied (`applied = max(applied, target)`); clears `last_error`. */
    readonly complete: (target: number) => Effect.Effect<void, Errors>
    /** The restart for `target` failed: recorded, still owed. */
    readonly fail: (target: number, reason: string) => Effect.Effect<void, Errors>
  }
>() {}

const decode = Schema.decodeUnknownEither(Schema.parseJson(RestartRecord))
const now = Effect.map(DateTime.now, DateTime.formatIso)

/**
 * Builds the request store on the state root.
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<RestartRequests["Type"], never, StateRoot> = Effect.gen(function*() {
  const state = yield* StateRoot
  // The root lock is not re-entrant: one holder per process at a time.
  const mutex = yield* Effect.makeSemaphore(1)

  const get = Effect.map(state.readText(restartFile), (text) =>
    Option.map(text, (t) =>
      Either.getOrElse(decode(t), (error): RestartRecord => ({
        schema: 1,
        requested: 1,
        applied: 0,
        reason: `the request record could not be read: ${error.message.split("\n")[0]}`,
        requested_at: "",
        updated_at: ""
      }))))

  const update = (change: (record: RestartRecord, at: string) => RestartRecord) =>
    mutex.withPermits(1)(Effect.scoped(Effect.gen(function*() {
      yield* state.lock
      const at = yield* now
      const current = Option.getOrElse(yield* get, (): RestartRecord => ({
        schema: 1,
        requested: 0,
        applied: 0,
        reason: "",
        requested_at: at,
        updated_at: at
      }))
      const next = change(current, at)
      yield* state.writeJson(restartFile, next)
      return next
    })))

  return RestartRequests.of({
    request: (reason) =>
      update((r, at) => ({ ...r, requested: r.requested + 1, reason, requested_at: at, updated_at: at })),
    get,
    complete: (target) =>
      Effect.asVoid(update(({ last_error: _error, ...r }, at) => ({ ...r, applied: Math.max(r.applied, target), updated_at: at }))),
    fail: (target, reason) => Effect.asVoid(update((r, at) => ({ ...r, last_error: { target, reason, at }, updated_at: at })))
  })
})

/**
 * The request store as a Layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(RestartRequests, make)

const encodeGeneration = Schema.encode(RunningGeneration)
const decodeGeneration = Schema.decodeUnknownEither(Schema.parseJson(RunningGeneration))

/**
 * Publishes `report` as the generation of the daemon (this process), serving since `startedAt`.
 * @since 0.1.0
 * @category constructors
 */
export const publish = (report: LoadReport, startedAt: string, unwell: RunningGeneration["unwell"] = []) =>
  Effect.gen(function*() {
    const state = yield* StateRoot
    const encoded = yield* encodeGeneration({
      schema: 1,
      pid: process.pid,
      generation: report.generation,
      started_at: startedAt,
      report,
      unwell
    }).pipe(Effect.orDie)
    yield* state.writeJson(generationFile, encoded)
  })

/**
 * Removes the published generation (the daemon stops).
 * @since 0.1.0
 * @category constructors
 */
export const unpublish = Effect.flatMap(StateRoot, (state) => state.remove(generationFile))

/**
 * The published generation of the daemon with pid `daemonPid`; none when there is no file, it
 * cannot be decoded, or another process wrote it (a killed daemon's file).
 * @since 0.1.0
 * @category constructors
 */
export const published = (daemonPid: number) =>
  Effect.gen(function*() {
    const state = yield* StateRoot
    const text = yield* state.readText(generationFile)
    return Option.filter(Option.flatMap(text, (t) => Either.getRight(decodeGeneration(t))), (g) => g.pid === daemonPid)
  })

const readyLine = (report: LoadReport, why: string) =>
  Effect.logInfo(`plugin ${Pretty.make(LoadReport)(report)}${why}`).pipe(Effect.annotateLogs({ generation: report.generation }))

/**
 * The daemon's side, in the caller's Scope: with generation 1 built (by the loader's Layer) and
 * `before` the record as it was before it loaded, marks those requests applied, publishes
 * generation 1 and logs `plugin generation 1 ready: N loaded, M skipped`; then, every `interval`,
 * carries out an owed request with `Generations.restart` and publishes each new generation.
 * @since 0.1.0
 * @category constructors
 */
export const serve = (before: Option.Option<RestartRecord>, interval: Duration.DurationInput) =>
  Effect.gen(function*() {
    const generations = yield* Generations
    const requests = yield* RestartRequests
    const first = yield* generations.current
    let shown = first.generation
    let servingSince = yield* now
    yield* publish(first, servingSince)
    if (Option.isSome(before) && isOwed(before.value)) {
      yield* requests.complete(before.value.requested)
      yield* Effect.logInfo(`restart request(s) up to ${before.value.requested} made before this start: satisfied by generation 1`)
    }
    yield* readyLine(first, "")

    const pass = Effect.gen(function*() {
      // A restart a plugin asked for (requestReload({ mode: "restart" })): published here.
      const serving = yield* generations.current
      if (serving.generation !== shown) {
        shown = serving.generation
        servingSince = yield* now
        yield* publish(serving, servingSince)
        yield* readyLine(serving, " (requested by a plugin)")
      }
      const record = yield* requests.get
      if (Option.isNone(record) || !isOwed(record.value)) return
      const { reason, requested: target } = record.value
      const restarted = yield* Effect.either(generations.restart(reason, "city plugins reload"))
      if (Either.isLeft(restarted)) {
        yield* Effect.logError(`plugin restart request ${target} failed: ${restarted.left.message}`).pipe(
          Effect.annotateLogs({ code: "plugin.restart_failed" })
        )
        return yield* requests.fail(target, restarted.left.message)
      }
      shown = restarted.right.generation
      servingSince = yield* now
      yield* publish(restarted.right, servingSince)
      yield* requests.complete(target)
      yield* readyLine(restarted.right, ` (restart request ${target}: ${reason})`)
    }).pipe(Effect.catchAll((error) => Effect.logError(`plugin restart requests: ${error.message}`)))

    yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Effect.sleep(interval), pass)))

    // A loaded plugin's status between generations (unresponsive, ended, starting again): the
    // serving generation is republished with the plugins not ready, so that `city status` and
    // `city plugins list` say it.
    const registry = yield* PluginRegistry
    const republish = Effect.gen(function*() {
      const serving = yield* generations.current
      const loaded = new Set(serving.loaded.map((p) => p.name))
      const unwell = (yield* registry.snapshots)
        .filter((s) => loaded.has(s.name) && s.status !== "ready")
        .map((s) => ({ name: s.name, status: s.status, ...(s.last_error === undefined ? {} : { last_error: s.last_error }) }))
      yield* publish(serving, servingSince, unwell)
    }).pipe(Effect.catchAll((error) => Effect.logError(`plugin statuses: ${error.message}`)))
    yield* registry.changes.pipe(
      Stream.debounce(Duration.millis(100)),
      Stream.runForEach(() => republish),
      Effect.forkScoped
    )
  })
