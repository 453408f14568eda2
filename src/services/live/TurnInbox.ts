/**
 * Turns for the endpoints the `city daemon` hosts as City Sessions, requested through plain files
 * (decision: the daemon has no socket; an operator, a channel or a test drops a request and reads
 * the result):
 * - request: `$CITY_ROOT/state/turns/<identity>/<id>.json`,
 *   `{ "schema": 1, "note"?: "...", "calls": [{ "tool": "<name>", "input"?: "..." }] }`;
 * - the daemon takes it (renames it to `<id>.taken`), runs one Turn (a note, then each call as a
 *   Step, in order; a failed call is recorded and the next one still runs), and writes
 *   `<id>.result.json`: `{ ok, tools, session, results: [{ tool, ok, output | error }] }` (`session`: the number of the
 *   endpoint's Session that ran it, 1 after launch and one more per reload).
 * Each `output` and `error` is stored by the rule of `schema/StoredText.ts` (control characters
 * other than newline and tab escaped, at most 4096 characters, the end kept). A taken request is
 * the daemon's: made 0600 like every file under the root (docs/cli.md, "Files and permissions").
 * A request for an endpoint the daemon does not host gets a result with `ok: false`; a Turn cut
 * short by a kill (`remove-runtime --force`) gets `{ ok: false, error: "interrupted: ..." }`. Turns run in
 * their own fibers: stopping the daemon stops taking requests and waits for running Turns
 * (`awaitRunning`), so a Turn is never cut short by a graceful stop. A Turn cut short by a crash
 * leaves its `.taken` file and no result; it is not run again.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Schema from "effect/Schema"
import { storedText, toolOutputMax } from "../../schema/StoredText.ts"
import { fileMode } from "../root/FileModes.ts"
import { StateRoot } from "../root/StateRoot.ts"
import type { CitySessionsShape } from "./CitySessionsHost.ts"
import type { EndpointRef } from "./EndpointHost.ts"
import { layout } from "../root/CityRoot.ts"

/**
 * The folder of the requests, relative to the root.
 * @since 0.1.0
 * @category constants
 */
export const turnsDir = layout.turns

/**
 * A Turn requested through the inbox: an optional note, then tool calls in order.
 * @since 0.1.0
 * @category models
 */
export const TurnRequest = Schema.Struct({
  schema: Schema.Literal(1),
  note: Schema.optional(Schema.String),
  calls: Schema.Array(Schema.Struct({ tool: Schema.String, input: Schema.optional(Schema.String) }))
})
/**
 * A Turn requested through the inbox: an optional note, then tool calls in order.
 * @since 0.1.0
 * @category models
 */
export type TurnRequest = typeof TurnRequest.Type

const decode = Schema.decodeUnknownEither(Schema.parseJson(TurnRequest))

/**
 * Builds the Turn inbox of the daemon over its City-sessions host.
 * @since 0.1.0
 * @category constructors
 */
export const make = (sessions: CitySessionsShape, hosted: (identity: string) => EndpointRef | undefined) =>
  Effect.gen(function*() {
    const state = yield* StateRoot
    const fs = yield* FileSystem.FileSystem
    const running = new Map<string, Fiber.RuntimeFiber<void>>()

    const runTurn = (ref: EndpointRef, request: TurnRequest) =>
      sessions.turn(ref, (t) =>
        Effect.gen(function*() {
          if (request.note !== undefined) yield* t.note(request.note)
          const results: Array<Record<string, unknown>> = []
          for (const c of request.calls) {
            const r = yield* Effect.either(t.call(c.tool, c.input ?? ""))
            results.push(
              Either.isRight(r)
                ? { tool: c.tool, ok: true, output: storedText(r.right, toolOutputMax) }
                : { tool: c.tool, ok: false, error: storedText(r.left.message) }
            )
          }
          return { tools: t.tools, results }
        }))

    const take = (identity: string, name: string) =>
      Effect.gen(function*() {
        const base = `${turnsDir}/${identity}/${name.slice(0, -5)}`
        const taken = yield* fs.rename(state.resolve(`${base}.json`), state.resolve(`${base}.taken`)).pipe(
          Effect.as(true),
          Effect.orElseSucceed(() => false)
        )
        if (!taken) return
        yield* fs.chmod(state.resolve(`${base}.taken`), fileMode).pipe(
          Effect.catchAll((e) => Effect.logWarning(`turn request not made private: ${e.message}`))
        )
        const text = yield* state.readText(`${base}.taken`)
        const request: Either.Either<TurnRequest, string> = text._tag === "Some"
          ? Either.mapLeft(decode(text.value), (e) => e.message)
          : Either.left("the request file vanished")
        const ref = hosted(identity)
        const work = Effect.gen(function*() {
          const result = Either.isLeft(request)
            ? { ok: false, error: storedText(`invalid turn request: ${request.left}`) }
            : ref === undefined
            ? { ok: false, error: `endpoint ${identity} is not hosted by this daemon` }
            : yield* runTurn(ref, request.right).pipe(
              Effect.map((r) => ({
                ok: r.results.every((x) => x["ok"] === true),
                session: sessions.sessionCount(ref),
                ...r
              })),
              Effect.catchAll((e) => Effect.succeed({ ok: false, error: storedText(e.message) })),
              // Killed (`remove-runtime --force`): the Turn is cut short, and says so.
              Effect.onInterrupt(() =>
                state.writeJson(`${base}.result.json`, { ok: false, error: "interrupted: the endpoint was killed" }).pipe(
                  Effect.ignore
                )
              )
            )
          yield* state.writeJson(`${base}.result.json`, result)
          yield* Effect.logInfo(`turn ${name.slice(0, -5)} done: ok=${String(result.ok)}`)
        }).pipe(
          Effect.catchAll((e) => Effect.logError(`turn result not written: ${e.message}`)),
          Effect.annotateLogs({ endpoint: identity }),
          Effect.ensuring(Effect.sync(() => running.delete(`${identity}/${name}`)))
        )
        // Not tied to the daemon's Scope: a graceful stop waits for it instead of interrupting it.
        running.set(`${identity}/${name}`, yield* Effect.forkDaemon(work))
      })

    /** Takes every waiting request. */
    const pass = Effect.gen(function*() {
      for (const identity of yield* state.list(turnsDir)) {
        for (const name of yield* state.list(`${turnsDir}/${identity}`)) {
          if (name.endsWith(".json") && !name.endsWith(".result.json")) yield* take(identity, name)
        }
      }
    })

    return {
      pass,
      awaitRunning: Effect.suspend(() => Fiber.awaitAll([...running.values()])).pipe(Effect.asVoid),
      inFlight: () => [...running.keys()].map((k) => `turn ${k}`),
      /** The endpoints (identities) running a Turn now. */
      busy: (): ReadonlySet<string> => new Set([...running.keys()].map((k) => k.slice(0, k.lastIndexOf("/"))))
    }
  })
