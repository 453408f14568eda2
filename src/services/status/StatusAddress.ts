/**
 * Where the running daemon serves its status page: `$CITY_ROOT/state/status-page.json` (0600),
 * `{ schema, pid, url }`, written once the server listens and removed when the daemon stops, for
 * `city status --url` (docs/status-page.md). A file left by a daemon that is gone (killed) names a
 * pid that is not the running daemon's, and is not believed.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { StateRoot } from "../root/StateRoot.ts"
import * as DaemonLock from "../live/DaemonLock.ts"
import { layout } from "../root/CityRoot.ts"

/**
 * The file, relative to the root.
 * @since 0.1.0
 * @category constants
 */
export const addressFile = layout.statusPage

const StatusAddress = Schema.Struct({ schema: Schema.Literal(1), pid: Schema.Int, url: Schema.String })
const decode = Schema.decodeUnknownEither(Schema.parseJson(StatusAddress))

/**
 * Records the page's URL for this process; removes it when the caller's Scope closes.
 * @since 0.1.0
 * @category constructors
 */
export const publish = (url: string) =>
  Effect.flatMap(StateRoot, (state) =>
    Effect.acquireRelease(
      state.writeJson(addressFile, { schema: 1, pid: process.pid, url }),
      () => Effect.ignore(state.remove(addressFile))
    ))

/**
 * The URL of the status page the running daemon serves, if it serves one.
 * @since 0.1.0
 * @category getters
 */
export const current = Effect.gen(function*() {
  const state = yield* StateRoot
  const daemon = yield* DaemonLock.running
  if (Option.isNone(daemon)) return Option.none<string>()
  const text = yield* state.readText(addressFile)
  const record = Option.flatMap(text, (t) => Either.getRight(decode(t)))
  return Option.isSome(record) && record.value.pid === daemon.value.pid ? Option.some(record.value.url) : Option.none<string>()
})
