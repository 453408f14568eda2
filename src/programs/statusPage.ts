/**
 * The daemon's status page (docs/status-page.md): the board over the daemon's City and state root,
 * served on the listen address, its address published for `city status --url`. `city daemon`
 * imports this module only when `--http` (or `host.json`'s `daemon.http`) asks for a page, so no
 * other start of `city` loads the HTTP server's code.
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as StatusHttp from "../layers/StatusHttp.ts"
import { DaemonError } from "../schema/Live.ts"
import * as StatusAddress from "../services/status/StatusAddress.ts"
import * as StatusBoard from "../services/status/StatusBoard.ts"
import { StateRoot } from "../services/root/StateRoot.ts"
import { layout } from "../services/root/CityRoot.ts"
import * as FolderRead from "../services/files/FolderRead.ts"
import { version } from "./version.ts"

/**
 * Serves the page for the caller's Scope: refreshed every `interval`, `sessions` counting the
 * hosted endpoints and the busy ones; fails with `StatusListenFailed` when the address cannot be
 * listened on. The endpoints' declarations, peers and records are read again only when their
 * folders may have changed, and at least every `reread` (files/FolderRead.ts): with thousands of
 * peers, reading every peer file at each refresh was most of an idle daemon's work. On a host of
 * a fleet, `fleet` reads the fleet's hosts for the page (docs/cluster.md, "The fleet's status").
 * @since 0.1.0
 */
export const serve = (
  options: StatusHttp.StatusHttpOptions,
  interval: Duration.Duration,
  sessions: () => { readonly count: number; readonly busy: number },
  reread: Duration.DurationInput = Duration.minutes(5),
  fleet?: StatusBoard.FleetSource
) =>
  Effect.gen(function*() {
    const sources = yield* StatusBoard.fromServices
    const state = yield* StateRoot
    const folders = [layout.capabilities, layout.peers, layout.endpoints].map((folder) => state.resolve(folder))
    const capabilities = yield* FolderRead.make(sources.capabilities, folders, reread)
    const board = yield* StatusBoard.make(
      { version: yield* version, pollInterval: interval, sessions: Effect.sync(sessions), ...(fleet === undefined ? {} : { fleet }) },
      { ...sources, capabilities }
    )
    yield* board.run
    const address = `${options.listen.host}:${options.listen.port}`
    const url = yield* StatusHttp.serve(board, options).pipe(
      Effect.mapError((e) => new DaemonError({ reason: "StatusListenFailed", address, detail: e.cause instanceof Error ? e.cause.message : String(e.cause ?? e.message) }))
    )
    yield* StatusAddress.publish(url)
    yield* Effect.logInfo(`status page at ${url}`)
  })
