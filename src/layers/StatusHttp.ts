/**
 * The status page's server on Node (docs/status-page.md): `StatusServer.app` served by
 * `@effect/platform-node`'s `NodeHttpServer` on the listen address, in the caller's Scope. When
 * the Scope closes, the event streams end first, then the server closes (a close waits for its
 * open connections, and a browser on `/api/events` would otherwise hold it until the daemon's
 * deadline).
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as HttpServer from "@effect/platform/HttpServer"
import type { ServeError } from "@effect/platform/HttpServerError"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { createServer } from "node:http"
import * as HttpListen from "../schema/HttpListen.ts"
import type { StatusBoard } from "../services/status/StatusBoard.ts"
import * as StatusServer from "../services/status/StatusServer.ts"

/**
 * Where and how the page is served.
 * @since 0.1.0
 * @category models
 */
export interface StatusHttpOptions {
  readonly listen: HttpListen.HttpListen
  /** The bearer token every route but `/healthz` needs, when one is set. */
  readonly token: Option.Option<string>
}

/**
 * Serves the board's routes; succeeds with the page's URL once the server listens (port 0 gives
 * the port the system chose).
 * @since 0.1.0
 * @category constructors
 */
export const serve = (
  board: StatusBoard,
  options: StatusHttpOptions
): Effect.Effect<string, ServeError, Scope.Scope | FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const server = yield* NodeHttpServer.make(() => createServer(), { host: options.listen.host, port: options.listen.port })
    // Registered after the server, so it runs before the server's close: the event streams end
    // first, and the close does not wait for browsers that stay connected.
    const stopping = yield* Deferred.make<void>()
    yield* Effect.addFinalizer(() => Deferred.succeed(stopping, undefined))
    const port = server.address._tag === "TcpAddress" ? server.address.port : options.listen.port
    const app = StatusServer.app(board, {
      allowHost: HttpListen.allowHost(options.listen.host, port),
      token: options.token,
      stopping: Deferred.await(stopping)
    })
    yield* HttpServer.serveEffect()(app).pipe(Effect.provideService(HttpServer.HttpServer, server))
    return HttpListen.url(options.listen.host, port)
  })
