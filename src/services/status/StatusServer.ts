/**
 * The routes of `city daemon --http` (docs/status-page.md), as an `@effect/platform` `HttpRouter`
 * over the status board; the Node server that serves them is `layers/StatusHttp.ts`.
 *
 * - `GET /`: the page (`StatusPage.page`), rendered from the board's document: it shows everything
 *   without JavaScript; `/assets/status.js` then keeps it live from `/api/events`.
 * - `GET /api/status`: the document, encoded by its Schema (`schema/StatusDocument.ts`).
 * - `GET /api/events`: server-sent events, the board's `events`: the document first, then every
 *   change; a comment line every 15 s keeps proxies and idle timeouts from closing the stream.
 * - `GET /healthz`: `ok`, for supervisors; never needs the token.
 * - `GET /metrics`: the Prometheus text of every Effect `Metric` of the process.
 * Read-only: every other method is `405`, every other path `404`.
 *
 * Security decisions:
 * - **Host header** (DNS rebinding): a request whose `Host` the bind address does not allow is
 *   refused `421` before any route runs (`allowHost`).
 * - **Token**: when set, every route but `/healthz` needs `Authorization: Bearer <token>` or the
 *   `city_token` cookie; a browser opens `/?token=<token>` once, which sets the cookie (HttpOnly,
 *   SameSite=Strict) and redirects to the same path without the query, so the token leaves the
 *   address bar and the page's own requests carry it. Compared in constant time: both sides are
 *   hashed with SHA-256 and the digests compared with `timingSafeEqual`, so neither the content
 *   nor the length leaks through timing. A missing or wrong token is `401`.
 * - **Headers** on every response: a strict `Content-Security-Policy` (same-origin script, style and
 *   connections only, no framing, no forms), `X-Content-Type-Options: nosniff`,
 *   `Referrer-Policy: no-referrer`, `Cache-Control: no-store`. No CORS headers: another origin's
 *   page cannot read any of it.
 * - Every stored string reaches the page HTML-escaped (`StatusPage.escapeHtml`), and JSON and
 *   events are encoded by their Schemas.
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as HttpApp from "@effect/platform/HttpApp"
import type * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { createHash, timingSafeEqual } from "node:crypto"
import * as Observability from "../Observability.ts"
import * as PrometheusText from "./PrometheusText.ts"
import type { EncodedEvent, StatusBoard } from "./StatusBoard.ts"
import * as StatusPage from "./StatusPage.ts"

/**
 * The policy every response carries.
 * @since 0.1.0
 * @category constants
 */
export const contentSecurityPolicy =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/**
 * Event-stream clients connected now.
 * @since 0.1.0
 * @category metrics
 */
export const eventClients = Metric.gauge("city_status_event_clients", { description: "clients connected to /api/events" })

/**
 * What the routes need besides the board.
 * @since 0.1.0
 * @category models
 */
export interface StatusServerOptions {
  /** Whether a request's `Host` header (`name` or `name:port`) names this server (see `allowHost`). */
  readonly allowHost: (host: string) => boolean
  /** The bearer token every route but `/healthz` needs, when one is set. */
  readonly token: Option.Option<string>
  /**
   * Completes when the server is stopping: every event stream then ends, so that closing the
   * server (which waits for its open connections) never waits for a browser that stays connected.
   */
  readonly stopping: Effect.Effect<void>
}

const digest = (text: string): Buffer => createHash("sha256").update(text, "utf8").digest()

/** Whether `given` is the token, in time that depends on neither. */
const sameToken = (token: string, given: string): boolean => timingSafeEqual(digest(token), digest(given))

const bearer = /^Bearer[ ]+(\S+)\s*$/i

const utf8 = new TextEncoder()

/** One event as an SSE frame: its name, its JSON on one `data:` line. */
const frame = (event: EncodedEvent): Uint8Array => utf8.encode(`event: ${event.tag}\ndata: ${event.json}\n\n`)

const keepAlive = utf8.encode(": keep-alive\n\n")

const securityHeaders = {
  "content-security-policy": contentSecurityPolicy,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cache-control": "no-store"
}

const problem = (status: number, message: string) =>
  HttpServerResponse.text(`${message}\n`, { status, contentType: "text/plain; charset=utf-8" })

type Refusal = Option.Option<Effect.Effect<HttpServerResponse.HttpServerResponse>>

const refuse = (response: HttpServerResponse.HttpServerResponse): Refusal => Option.some(Effect.succeed(response))

/** The token's check: the response that refuses (or redirects) the request, or none when it may go on. */
const checkToken = (token: string, request: HttpServerRequest.HttpServerRequest, path: string, query: URLSearchParams): Refusal => {
  const offered = query.get("token")
  if (offered !== null && request.method === "GET") {
    if (!sameToken(token, offered)) return refuse(problem(401, "unauthorized: wrong token"))
    query.delete("token")
    const rest = query.toString()
    const redirect = HttpServerResponse.redirect(rest === "" ? path : `${path}?${rest}`, { status: 303 })
    // The token is visible ASCII (the daemon refuses any other), which a cookie always takes.
    return Option.some(Effect.orDie(HttpServerResponse.setCookie(redirect, "city_token", token, { httpOnly: true, sameSite: "strict", path: "/" })))
  }
  const header = request.headers["authorization"]
  const fromHeader = header === undefined ? undefined : bearer.exec(header)?.[1]
  const given = fromHeader ?? request.cookies["city_token"]
  if (given === undefined) return refuse(problem(401, "unauthorized: this server needs its token (Authorization: Bearer, or open /?token=…)"))
  return sameToken(token, given) ? Option.none() : refuse(problem(401, "unauthorized: wrong token"))
}

/**
 * The City's counters without labels, at 0 until something counts them: a metric exists for
 * Effect's registry only once it is first updated, and a daemon that has run no Step yet still
 * exports `city_steps 0` (docs/library.md lists the metrics).
 */
const untouched = Effect.all([Metric.incrementBy(Observability.steps, 0), Metric.incrementBy(Observability.heldLeases, 0)], { discard: true })

/** The stream, with the client counted in `eventClients` while it is connected. */
const clientCounted = <A>(stream: Stream.Stream<A>): Stream.Stream<A> =>
  Stream.unwrapScoped(
    Effect.as(Effect.acquireRelease(Metric.increment(eventClients), () => Metric.incrementBy(eventClients, -1)), stream)
  )

/** Host, token and method checks before any route, and the security headers after every one. */
const guard = <R>(
  options: StatusServerOptions,
  routes: HttpApp.Default<HttpServerError.RouteNotFound, R>
): HttpApp.Default<never, R> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const host = request.headers["host"] ?? ""
    const url = new URL(request.url, "http://status.invalid")
    const refusal: Refusal = !options.allowHost(host)
      ? refuse(problem(421, `misdirected request: Host ${JSON.stringify(host.slice(0, 200))} is not this server`))
      : request.method !== "GET" && request.method !== "HEAD"
      ? refuse(HttpServerResponse.setHeader(problem(405, "method not allowed: this server is read-only"), "allow", "GET, HEAD"))
      : url.pathname === "/healthz" || Option.isNone(options.token)
      ? Option.none()
      : checkToken(options.token.value, request, url.pathname, url.searchParams)
    const response = Option.isSome(refusal)
      ? yield* refusal.value
      : yield* Effect.catchTag(routes, "RouteNotFound", () => Effect.succeed(problem(404, "not found")))
    return HttpServerResponse.setHeaders(response, securityHeaders)
  })

/**
 * The status routes over `board`, guarded (see the module comment).
 * @since 0.1.0
 * @category constructors
 */
export const app = (board: StatusBoard, options: StatusServerOptions): HttpApp.Default<never, FileSystem.FileSystem> =>
  guard(options, routes(board, options.stopping))

/** An asset's file as it is; a missing or refused file is a `500` that names it. */
const asset = (file: StatusPage.Asset) =>
  StatusPage.read(file).pipe(
    Effect.map(Option.match({
      onNone: () => problem(500, `the status page's asset ${file.file} is missing`),
      onSome: (text) => HttpServerResponse.text(text, { contentType: file.contentType })
    })),
    Effect.catchTag("FileRefused", (e) => Effect.succeed(problem(500, e.message)))
  )

const routes = (board: StatusBoard, stopping: Effect.Effect<void>) =>
  HttpRouter.empty.pipe(
    HttpRouter.get("/healthz", Effect.succeed(HttpServerResponse.text("ok\n"))),
    HttpRouter.get(
      "/api/status",
      Effect.map(board.encoded, (json) => HttpServerResponse.text(json, { contentType: "application/json; charset=utf-8" }))
    ),
    HttpRouter.get(
      "/api/events",
      Effect.succeed(HttpServerResponse.stream(
        Stream.merge(
          Stream.map(board.encodedEvents, frame),
          Stream.as(Stream.fromSchedule(Schedule.spaced("15 seconds")), keepAlive),
          { haltStrategy: "left" }
        ).pipe(Stream.interruptWhen(stopping), clientCounted),
        {
          contentType: "text/event-stream; charset=utf-8",
          headers: { "x-accel-buffering": "no" }
        }
      ))
    ),
    HttpRouter.get(
      "/metrics",
      Effect.zipRight(
        untouched,
        Effect.map(PrometheusText.snapshot, (text) => HttpServerResponse.text(text, { contentType: "text/plain; version=0.0.4; charset=utf-8" }))
      )
    ),
    HttpRouter.get("/", Effect.map(board.current, (document) => HttpServerResponse.html(StatusPage.page(document)))),
    // Browsers ask for it on their own; the page has no icon (and a 404 would be an error in their console).
    HttpRouter.get("/favicon.ico", Effect.succeed(HttpServerResponse.empty({ status: 204 }))),
    HttpRouter.get(StatusPage.stylesheet.path, asset(StatusPage.stylesheet)),
    HttpRouter.get(StatusPage.script.path, asset(StatusPage.script))
  )
