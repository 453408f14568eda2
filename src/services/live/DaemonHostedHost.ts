/**
 * Endpoints the `city daemon` hosts as City Sessions (runtime profile `"host": "city"`), seen from
 * another process (a `city` verb). The daemon publishes each hosted endpoint's state in
 * `$CITY_ROOT/state/hosted/<identity>.json` (`{ pid, state }`, written at launch, at each Turn's
 * start and end, at retirement); this host reads it:
 * - `status`: the published state while the daemon that wrote it is alive, else `asleep` (no
 *   daemon: nothing hosts the endpoint; its next launch reads the current surfaces);
 * - `reload`: the daemon applies owed reloads (it claims them at its Sessions' Turn boundaries), so
 *   this host never claims: it wakes nobody, and waits up to `applyWait` (default 10 s) for the
 *   daemon to apply the record that is owed; the caller then reports `applied`, or `pending` if
 *   the daemon has not applied it yet;
 * - `retire` waits likewise for the daemon to carry out an owed removal (a forced one is a kill
 *   there); `kill` itself is not possible from another process (`EndpointHostFailed`): callers owe a
 *   forced removal instead (Applier.remove).
 * Decision: cross-process control goes through the owed-work records only (plain files, durable);
 * there is no socket. The price is latency up to the daemon's poll interval.
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { EndpointError, EndpointState } from "../../schema/Live.ts"
import * as ProcessIdentity from "../capabilities/ProcessIdentity.ts"
import { StateRoot } from "../root/StateRoot.ts"
import type { EndpointHostShape, EndpointRef } from "./EndpointHost.ts"
import { isOwed, Reloads } from "../owed/Reloads.ts"
import { layout } from "../root/CityRoot.ts"

/**
 * The folder of the published states, relative to the root.
 * @since 0.1.0
 * @category constants
 */
export const hostedDir = layout.hosted

const Published = Schema.Struct({
  pid: Schema.Int,
  /** The daemon's start (capabilities/ProcessIdentity.ts): a file whose pid was reused is stale. Absent in older files. */
  start: Schema.optional(Schema.NullOr(Schema.String)),
  state: EndpointState,
  at: Schema.String
})
const decode = Schema.decodeUnknownEither(Schema.parseJson(Published))

/**
 * Publishes a hosted endpoint's state (the daemon's side).
 * @since 0.1.0
 * @category constructors
 */
export const publish = (ref: EndpointRef, state: EndpointState) =>
  Effect.flatMap(StateRoot, (root) =>
    state === "asleep"
      ? root.remove(`${hostedDir}/${ref.identity}.json`)
      : Effect.flatMap(ProcessIdentity.identify(process.pid), (self) =>
        root.writeJson(`${hostedDir}/${ref.identity}.json`, {
          pid: self.pid,
          start: self.start,
          state,
          at: new Date().toISOString()
        })))

/**
 * Builds the host that sees daemon-hosted endpoints from another process.
 * @since 0.1.0
 * @category constructors
 */
export const make = (config: { readonly applyWait?: Duration.DurationInput; readonly poll?: Duration.DurationInput } = {}) =>
  Effect.gen(function*() {
    const root = yield* StateRoot
    const fs = yield* FileSystem.FileSystem
    const reloads = yield* Reloads
    const wait = Duration.toMillis(Duration.decode(config.applyWait ?? Duration.seconds(10)))
    const poll = Duration.decode(config.poll ?? Duration.millis(50))

    // The publishing daemon is named by pid and start: a file it left behind whose pid now
    // belongs to another process says nothing (asleep).
    const status = (ref: EndpointRef) =>
      Effect.flatMap(root.readText(`${hostedDir}/${ref.identity}.json`), (text): Effect.Effect<EndpointState> =>
        Option.match(Option.flatMap(text, (t) => Either.getRight(decode(t))), {
          onNone: () => Effect.succeed("asleep"),
          onSome: (p) =>
            Effect.map(
              ProcessIdentity.running({ pid: p.pid, start: p.start ?? null }).pipe(Effect.provideService(FileSystem.FileSystem, fs)),
              (alive): EndpointState => alive === false ? "asleep" : p.state
            )
        })).pipe(
        Effect.mapError((e) => new EndpointError({ reason: "EndpointHostFailed", identity: ref.identity, operation: "status", detail: e.message }))
      )

    /** Waits (bounded) until `done` holds. */
    const until = (done: Effect.Effect<boolean, unknown>) =>
      Effect.gen(function*() {
        const deadline = Date.now() + wait
        while (Date.now() < deadline) {
          if (yield* Effect.orElseSucceed(done, () => false)) return
          yield* Effect.sleep(poll)
        }
      })

    const settled = (ref: EndpointRef, removal: boolean) =>
      Effect.map(reloads.get(ref), (r) => Option.isNone(r) || (!removal && !isOwed(r.value)))

    const host: EndpointHostShape = {
      status,
      reload: <A, E>(ref: EndpointRef, _claim: Effect.Effect<Option.Option<A>, E>) =>
        Effect.as(until(settled(ref, false)), Option.none<A>()),
      retire: (ref) => until(settled(ref, true)),
      kill: (ref) =>
        Effect.fail(
          new EndpointError({
            reason: "EndpointHostFailed",
            identity: ref.identity,
            operation: "kill",
            detail: "the endpoint is hosted by the city daemon; it cannot be killed from another process"
          })
        ),
      appliedElsewhere: () => true
    }
    return host
  })
