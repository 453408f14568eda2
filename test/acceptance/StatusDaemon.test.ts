/**
 * `city daemon --http` (docs/status-page.md), through `@effect/platform`'s `HttpClient` against a
 * real daemon process on a free port: the status document, the events, health and metrics, the
 * Host check, the token, and the refusals of the flags. Every wait is bounded and names what it
 * waited for.
 */
import { describe, expect, it } from "@effect/vitest"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import { join } from "node:path"
import { StatusDocument, StatusEvent } from "../../src/schema/StatusDocument.ts"
import * as StatusPage from "../../src/services/status/StatusPage.ts"
import { city, sh, writeJson } from "./cityCli.ts"
import { capability, world } from "../support/world.ts"
import { startDaemon } from "../support/daemonProcess.ts"
import { awaitLog, logLines, within } from "../support/pluginDaemon.ts"
import { startStatusDaemon, statusWorld } from "../support/statusWorld.ts"

const live = (name: string, body: () => Effect.Effect<void, unknown, any>) =>
  it.scopedLive(name, () => body().pipe(Effect.provide(Layer.merge(NodeContext.layer, NodeHttpClient.layer))), 240_000)

const decodeDocument = Schema.decodeUnknownSync(StatusDocument)
const decodeEvent = Schema.decodeUnknownSync(StatusEvent)

/** GET `path` of `url` with `headers`: the status, the headers and the body. */
const get = (url: string, path: string, headers: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const response = yield* client.execute(HttpClientRequest.get(new URL(path, url).toString()).pipe(HttpClientRequest.setHeaders(headers)))
    return { status: response.status, headers: response.headers, body: yield* response.text }
  })

/**
 * Connects to `/api/events` and collects the events into `events` as they arrive (decoded by
 * their Schema), in a fiber of the caller's Scope.
 */
const subscribe = (url: string, headers: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const events: Array<StatusEvent> = []
    const response = yield* client.execute(HttpClientRequest.get(new URL("/api/events", url).toString()).pipe(HttpClientRequest.setHeaders(headers)))
    expect(response.status).toBe(200)
    expect(response.headers["content-type"]).toContain("text/event-stream")
    let buffer = ""
    const fiber = yield* response.stream.pipe(
      Stream.decodeText(),
      Stream.runForEach((chunk) =>
        Effect.sync(() => {
          buffer += chunk
          let end: number
          while ((end = buffer.indexOf("\n\n")) >= 0) {
            const frame = buffer.slice(0, end)
            buffer = buffer.slice(end + 2)
            const data = frame.split("\n").find((l) => l.startsWith("data: "))
            const name = frame.split("\n").find((l) => l.startsWith("event: "))
            if (data === undefined) continue // a keep-alive comment
            const event = decodeEvent(JSON.parse(data.slice(6)))
            expect(name).toBe(`event: ${event._tag}`)
            events.push(event)
          }
        })
      ),
      Effect.forkScoped
    )
    return { events, fiber }
  })

const endpointOf = (document: StatusDocument) => document.endpoints.find((e) => e.capability === "stamp" && e.peer === "alice")

describe("city daemon --http", () => {
  live("serves the status document, health, metrics and the page, read-only and with strict headers", () =>
    Effect.gen(function*() {
      const { register, setStatus, w } = yield* statusWorld
      yield* setStatus("idle")
      const { daemon, url } = yield* startStatusDaemon(w, "daemon")
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/)
      yield* register

      const status = yield* get(url, "/api/status")
      expect(status.status).toBe(200)
      expect(status.headers["content-type"]).toContain("application/json")
      const document = decodeDocument(JSON.parse(status.body))
      expect(document.daemon.pid).toBe(daemon.pid)
      expect(document.generation.number).toBe(1)
      expect(document.plugins).toMatchObject([{ name: "clock", status: "ready", root: "instance", version: "1.0.0", folder: join(w.root, "plugins", "clock") }])
      expect(document.skipped).toMatchObject([{ name: "broken", root: "instance", kind: "ManifestInvalid" }])
      expect(document.skipped[0]?.reason).toContain("apiVersion")
      // The register ran after the daemon started: the board sees it at its next poll.
      yield* within("the endpoint is listed as applied", Effect.map(get(url, "/api/status"), (r) => {
        const e = endpointOf(decodeDocument(JSON.parse(r.body)))
        return e?.standing === "applied" && e.last?.state === "ok"
      }))

      const health = yield* get(url, "/healthz")
      expect([health.status, health.body]).toEqual([200, "ok\n"])

      const metrics = yield* get(url, "/metrics")
      expect(metrics.status).toBe(200)
      expect(metrics.headers["content-type"]).toContain("text/plain")
      expect(metrics.body).toMatch(/^# TYPE city_plugins /m)
      expect(metrics.body).toMatch(/^city_plugins\{status="ready"\} 1$/m)
      // Listed by docs/library.md, exported before anything counts them.
      expect(metrics.body).toMatch(/^city_steps(_total)? \d+$/m)
      expect(metrics.body).toMatch(/^city_leases_held(_total)? \d+$/m)

      const page = yield* get(url, "/")
      expect(page.status).toBe(200)
      expect(page.headers["content-type"]).toContain("text/html")
      expect(page.body).toContain(`data-plugin="clock"`)
      expect(page.body).toContain(`data-skipped="broken"`)
      for (const response of [status, health, metrics, page]) {
        expect(response.headers["content-security-policy"]).toContain("default-src 'none'")
        expect(response.headers["x-content-type-options"]).toBe("nosniff")
        expect(Object.keys(response.headers).filter((h) => h.startsWith("access-control-"))).toEqual([])
      }
      // The assets as the binary (dist/city.cjs) finds them: the source files, byte for byte.
      for (const asset of [StatusPage.stylesheet, StatusPage.script]) {
        const served = yield* get(url, asset.path)
        expect([served.status, served.headers["content-type"]]).toEqual([200, asset.contentType])
        expect(served.body).toBe(fs.readFileSync(asset.file, "utf8"))
      }
      expect((yield* get(url, "/nothing-here")).status).toBe(404)
      const client = yield* HttpClient.HttpClient
      const post = yield* client.execute(HttpClientRequest.post(new URL("/api/status", url).toString()))
      expect(post.status).toBe(405)

      // `city status --url` names the page while the daemon serves it.
      const printed = yield* city(["status", "--url"], { root: w.root })
      expect([printed.code, printed.stdout.trim()]).toEqual([0, url])
      const statusJson = yield* city(["status", "--json"], { root: w.root })
      expect(JSON.parse(statusJson.stdout)).toMatchObject({ ok: true, page: url })

      yield* daemon.kill("SIGTERM")
      expect((yield* Deferred.await(daemon.exited)).code).toBe(0)
      expect(fs.existsSync(join(w.root, "state", "status-page.json"))).toBe(false)
      const gone = yield* city(["status", "--url"], { root: w.root })
      expect(gone.code).toBe(1)
      expect(gone.stderr).toContain("no city daemon is running on")
    }))

  live("refuses a Host header that does not name the server (DNS rebinding)", () =>
    Effect.gen(function*() {
      const { setStatus, w } = yield* statusWorld
      yield* setStatus("idle")
      const { url } = yield* startStatusDaemon(w, "daemon")
      const port = new URL(url).port
      expect((yield* get(url, "/api/status", { host: `localhost:${port}` })).status).toBe(200)
      for (const host of [`attacker.example:${port}`, "127.0.0.1:1", `127.0.0.1.nip.io:${port}`]) {
        const refused = yield* get(url, "/api/status", { host })
        expect([host, refused.status]).toEqual([host, 421])
        expect(refused.body).toContain("misdirected request")
      }
      // Health is checked too: a rebound page cannot probe it either.
      expect((yield* get(url, "/healthz", { host: `attacker.example:${port}` })).status).toBe(421)

      // A second daemon (another root) on the same port: one line, exit 1, its pid file released.
      const other = join(w.base, "other-root")
      fs.mkdirSync(other)
      const taken = yield* city(["daemon", "--http", `127.0.0.1:${port}`], { root: other })
      expect(taken.code).toBe(1)
      expect(taken.stderr.trim()).toMatch(/^city: error: the status page cannot listen on 127\.0\.0\.1:\d+: listen EADDRINUSE/)
      expect(fs.existsSync(join(other, "daemon.pid"))).toBe(false)
    }))

  live("events: the current state first, then an endpoint going pending, then applied, without polling", () =>
    Effect.gen(function*() {
      const { register, setStatus, w } = yield* statusWorld
      yield* setStatus("busy")
      const { daemon, url } = yield* startStatusDaemon(w, "daemon")
      const early = yield* subscribe(url)
      yield* within("the first event is the whole document", Effect.sync(() => early.events.length > 0))
      expect(early.events[0]?._tag).toBe("status")

      const registered = yield* register
      expect(registered["outcomes"]).toMatchObject([{ application: "pending" }])
      const standings = () =>
        early.events.flatMap((e) => e._tag === "endpoint" && e.endpoint.capability === "stamp" ? [e.endpoint.standing] : [])
      yield* within("an endpoint event says pending", Effect.sync(() => standings().includes("pending")))
      yield* setStatus("idle")
      yield* within("an endpoint event says applied", Effect.sync(() => standings().at(-1) === "applied"))
      expect(standings().indexOf("pending")).toBeLessThan(standings().lastIndexOf("applied"))
      expect(early.events.some((e) => e._tag === "log" && e.entry.text.includes("pending → applied"))).toBe(true)

      // A client that connects late gets the current state first.
      const late = yield* subscribe(url)
      yield* within("the late client's first event", Effect.sync(() => late.events.length > 0))
      const first = late.events[0]
      expect(first?._tag).toBe("status")
      if (first?._tag === "status") expect(endpointOf(first.document)?.standing).toBe("applied")
      const metrics = yield* get(url, "/metrics")
      expect(metrics.body).toMatch(/^city_status_event_clients 2$/m)
      yield* Fiber.interrupt(late.fiber)
      yield* within("the gone client is no longer counted", Effect.map(get(url, "/metrics"), (m) => /^city_status_event_clients 1$/m.test(m.body)))

      // A browser that stays connected does not hold the daemon's graceful stop until its deadline.
      yield* daemon.kill("SIGTERM")
      expect((yield* Deferred.await(daemon.exited)).code).toBe(0)
      expect(yield* logLines(daemon, "did not finish")).toEqual([])
      yield* within("the event stream ends with the daemon", Fiber.await(early.fiber).pipe(Effect.as(true)))
    }))

  live("Sessions: a City-hosted endpoint counts, busy while its Turn runs and idle after", () =>
    Effect.gen(function*() {
      const w = yield* world
      yield* writeJson(w.root, "host.json", {
        schema: 1,
        agent_runtimes: ["claude", "codex", "opencode"],
        channel_runtimes: [],
        profiles: { claude: { host: "city" } }
      })
      const decl = yield* capability(w, "stamp", ["claude"])
      const { url } = yield* startStatusDaemon(w, "daemon")
      expect((yield* city(["capability", "register", decl], { root: w.root })).code).toBe(0)
      const sessions = Effect.map(get(url, "/api/status"), (r) => decodeDocument(JSON.parse(r.body)).sessions)
      yield* within("the endpoint is hosted", Effect.map(sessions, (s) => s.count === 1))
      expect(yield* sessions).toEqual({ count: 1, busy: 0, idle: 1 })
      // The tool waits for a file: its Turn runs until the test lets it end.
      yield* sh(join(w.bin, "tool-stamp"), [`while [ ! -e '${w.base}/release' ]; do sleep 0.05; done`, "printf done"])
      const turns = join(w.root, "state", "turns", "claude-alice")
      fs.mkdirSync(turns, { recursive: true })
      fs.writeFileSync(join(turns, "t1.tmp"), JSON.stringify({ schema: 1, calls: [{ tool: "stamp", input: "x" }] }))
      fs.renameSync(join(turns, "t1.tmp"), join(turns, "t1.json"))
      yield* within("the Session is busy", Effect.map(sessions, (s) => s.busy === 1 && s.idle === 0))
      fs.writeFileSync(join(w.base, "release"), "")
      yield* within("the Turn's result", Effect.sync(() => fs.existsSync(join(turns, "t1.result.json"))))
      yield* within("the Session is idle again", Effect.map(sessions, (s) => s.busy === 0 && s.idle === 1))
    }))

  live("a token guards every route but /healthz, compared whole; a browser trades it for a cookie", () =>
    Effect.gen(function*() {
      const { setStatus, w } = yield* statusWorld
      yield* setStatus("idle")
      const token = "s3cr3t-token-of-the-operator"
      fs.writeFileSync(join(w.base, "token"), `${token}\n`)
      const { url } = yield* startStatusDaemon(w, "daemon", ["--http-token-file", join(w.base, "token")])
      for (const path of ["/", "/api/status", "/api/events", "/metrics", "/assets/status.js"]) {
        expect([path, (yield* get(url, path)).status]).toEqual([path, 401])
      }
      expect((yield* get(url, "/healthz")).status).toBe(200)
      expect((yield* get(url, "/api/status", { authorization: `Bearer ${token}` })).status).toBe(200)
      for (const wrong of [`${token}x`, token.slice(0, -1), token.toUpperCase(), ""]) {
        expect((yield* get(url, "/api/status", { authorization: `Bearer ${wrong}` })).status).toBe(401)
      }
      const traded = yield* get(url, `/?token=${encodeURIComponent(token)}`)
      expect(traded.status).toBe(303)
      expect(traded.headers["location"]).toBe("/")
      const cookie = String(traded.headers["set-cookie"])
      expect(cookie).toContain("city_token=")
      expect(cookie).toContain("HttpOnly")
      expect(cookie).toContain("SameSite=Strict")
      expect((yield* get(url, "/api/status", { cookie: `city_token=${token}` })).status).toBe(200)
      expect((yield* get(url, `/?token=wrong-token-wrong-token`)).status).toBe(401)
      const events = yield* subscribe(url, { cookie: `city_token=${token}` })
      yield* within("the cookie opens the event stream", Effect.sync(() => events.events.length > 0))
    }))

  live("refuses a non-loopback address without --http-public, a malformed one, and a bad token file, before starting (exit 2)", () =>
    Effect.gen(function*() {
      const { w } = yield* statusWorld
      fs.writeFileSync(join(w.base, "short"), "abc\n")
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
        [["--http", "0.0.0.0:0"], "is not a loopback address: add --http-public"],
        [["--http", "localhost"], "must be host:port"],
        [["--http", "example.com:80"], "host must be an IP address or localhost"],
        [["--http", "127.0.0.1:70000"], "port must be 0-65535"],
        [["--http", "127.0.0.1:0", "--http-token-file", join(w.base, "absent")], "does not exist"],
        [["--http", "127.0.0.1:0", "--http-token-file", join(w.base, "short")], "must hold one token"],
        [["--http", "127.0.0.1:0", "--http-token-file", w.base], "is a directory, not a regular file"]
      ]
      for (const [args, message] of cases) {
        const run = yield* city(["daemon", ...args], { root: w.root })
        expect([args.join(" "), run.code]).toEqual([args.join(" "), 2])
        expect(run.stderr).toContain(message)
        expect(run.stderr.trim().split("\n")).toHaveLength(1)
      }
      expect(fs.existsSync(join(w.root, "daemon.pid"))).toBe(false)
    }))

  live("host.json's daemon.http serves the page; a public bind warns", () =>
    Effect.gen(function*() {
      const { setStatus, w } = yield* statusWorld
      yield* setStatus("idle")
      const host = JSON.parse(fs.readFileSync(join(w.root, "host.json"), "utf8")) as Record<string, unknown>
      fs.writeFileSync(join(w.root, "host.json"), JSON.stringify({ ...host, daemon: { http: { listen: "0.0.0.0:0", public: true } } }))
      const daemon = yield* startDaemon(w.root, w.base, "daemon")
      yield* awaitLog(daemon, "status page at")
      expect((yield* logLines(daemon, "beyond this machine")).length).toBe(1)
      const url = (yield* logLines(daemon, "status page at"))[0]?.match(/http:\/\/[^\s"]+/)?.[0] ?? ""
      expect((yield* get(url, "/healthz")).status).toBe(200)
    }))
})
