/**
 * The status server's guard (docs/status-page.md), on the module's routes themselves over a real
 * board, through `@effect/platform`'s web handler (no socket): a `Host` the bind address does not
 * allow is refused `421` before any route; every method but GET and HEAD is `405`; with a token,
 * every route but `/healthz` needs it (a bearer header or the `city_token` cookie), a missing or
 * wrong one is `401`, and `/?token=` sets the cookie and redirects without it; every response,
 * refusals too, carries the security headers. Against a real `city daemon --http` process:
 * test/acceptance/StatusDaemon.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import type * as FileSystem from "@effect/platform/FileSystem"
import * as HttpApp from "@effect/platform/HttpApp"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type { LoadReport } from "../../../src/schema/LoadReport.ts"
import * as StatusBoard from "../../../src/services/status/StatusBoard.ts"
import * as StatusServer from "../../../src/services/status/StatusServer.ts"
import { provideNode } from "../../fixtures.ts"

const host = "127.0.0.1:4780"
const token = "s3cret-token"

const report: LoadReport = { generation: 1, loaded: [], skipped: [], missing: [], notEnabled: [], notices: [] }

/** A request handler over the real routes and a board on empty sources. */
const server = (withToken: boolean) =>
  Effect.gen(function*() {
    const board = yield* StatusBoard.make(
      { version: "0.1.0", pollInterval: "1 hour", sessions: Effect.succeed({ count: 0, busy: 0 }) },
      {
        snapshots: Effect.succeed([]),
        changes: Stream.never,
        report: Effect.succeed(report),
        capabilities: Effect.succeed({ capabilities: [], invalid: [] }),
        owed: Effect.succeed([]),
        heaps: Effect.succeed([])
      }
    )
    const runtime = yield* Effect.runtime<FileSystem.FileSystem>()
    const handler = HttpApp.toWebHandlerRuntime(runtime)(StatusServer.app(board, {
      allowHost: (given) => given === host,
      token: withToken ? Option.some(token) : Option.none(),
      stopping: Effect.never
    }))
    return (path: string, init: { readonly method?: string; readonly headers?: Record<string, string> } = {}) =>
      Effect.promise(() =>
        handler(new Request(`http://${host}${path}`, { method: init.method ?? "GET", headers: { host, ...init.headers } }))
      )
  })

const securityHeaders = (response: Response) => ({
  csp: response.headers.get("content-security-policy"),
  nosniff: response.headers.get("x-content-type-options"),
  referrer: response.headers.get("referrer-policy"),
  cache: response.headers.get("cache-control")
})

const secure = { csp: StatusServer.contentSecurityPolicy, nosniff: "nosniff", referrer: "no-referrer", cache: "no-store" }

describe("StatusServer", () => {
  it.scoped("a Host the bind address does not allow is refused 421 before any route, /healthz too", () =>
    provideNode(Effect.gen(function*() {
      const get = yield* server(false)
      const refused = yield* get("/healthz", { headers: { host: "evil.example:4780" } })
      expect(refused.status).toBe(421)
      expect(yield* Effect.promise(() => refused.text())).toContain("misdirected request")
      expect((yield* get("/healthz")).status).toBe(200)
    })))

  it.scoped("read-only: a method other than GET and HEAD is 405 and names the allowed ones; an unknown path is 404", () =>
    provideNode(Effect.gen(function*() {
      const get = yield* server(false)
      const posted = yield* get("/api/status", { method: "POST" })
      expect(posted.status).toBe(405)
      expect(posted.headers.get("allow")).toBe("GET, HEAD")
      expect((yield* get("/nothing-here")).status).toBe(404)
    })))

  it.scoped("with a token: /healthz needs none; every other route needs it, by bearer header or cookie; a missing or wrong one is 401", () =>
    provideNode(Effect.gen(function*() {
      const get = yield* server(true)
      expect((yield* get("/healthz")).status).toBe(200)
      expect((yield* get("/api/status")).status).toBe(401)
      expect((yield* get("/api/status", { headers: { authorization: "Bearer wrong" } })).status).toBe(401)
      expect((yield* get("/api/status", { headers: { authorization: `Bearer ${token}` } })).status).toBe(200)
      expect((yield* get("/api/status", { headers: { cookie: `city_token=${token}` } })).status).toBe(200)
      expect((yield* get("/api/status", { headers: { cookie: "city_token=wrong" } })).status).toBe(401)
    })))

  it.scoped("/?token= sets the cookie (HttpOnly, SameSite=Strict) and redirects to the same path without it; a wrong one is 401", () =>
    provideNode(Effect.gen(function*() {
      const get = yield* server(true)
      const opened = yield* get(`/?token=${token}&view=fleet`)
      expect(opened.status).toBe(303)
      expect(opened.headers.get("location")).toBe("/?view=fleet")
      const cookie = opened.headers.get("set-cookie") ?? ""
      expect(cookie).toContain(`city_token=${token}`)
      expect(cookie).toMatch(/HttpOnly/i)
      expect(cookie).toMatch(/SameSite=Strict/i)
      expect((yield* get("/?token=wrong")).status).toBe(401)
    })))

  it.scoped("every response carries the security headers, refusals too", () =>
    provideNode(Effect.gen(function*() {
      const get = yield* server(true)
      for (
        const response of [
          yield* get("/healthz"),
          yield* get("/api/status", { headers: { authorization: `Bearer ${token}` } }),
          yield* get("/api/status"),
          yield* get("/healthz", { headers: { host: "evil.example" } }),
          yield* get("/healthz", { method: "DELETE" })
        ]
      ) expect(securityHeaders(response)).toEqual(secure)
    })))
})
