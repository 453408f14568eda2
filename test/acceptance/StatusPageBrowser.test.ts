/**
 * The status page in a real browser (docs/status-page.md): Debian's `chromium`, headless, driven by
 * `playwright-core` against a real `city daemon --http` process. The page shows a loaded plugin and
 * a skipped one with its reason, and an endpoint goes `pending` then `applied` live, without a
 * reload of the page; it renders without JavaScript; its script runs under the page's strict CSP
 * (any console error fails the test); it reads at 400 px wide and in dark mode. A host of a fleet
 * (`--cluster sqlite:<file>`, one process) shows the fleet first, this host marked, and a host
 * going down in place. Screenshots go to `test-output/` (ignored by git).
 *
 * The browser is `$CITY_CHROMIUM`, else `/usr/bin/chromium`; `.ci/run` installs it when it is
 * missing. Without one, the test fails saying so: it never passes without having run.
 */
import { describe, expect, it } from "@effect/vitest"
import { registerEntry, writePlugin, writeSettings } from "../support/pluginDaemon.ts"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import { join, resolve } from "node:path"
import { chromium, type Page } from "playwright-core"
import { freePort } from "../support/freePort.ts"
import { startStatusDaemon, statusWorld } from "../support/statusWorld.ts"

const executablePath = process.env["CITY_CHROMIUM"] ?? "/usr/bin/chromium"
const output = resolve(import.meta.dirname, "../../test-output")

/** A headless Chromium for the test's Scope, or a failure that says why there is none. */
const browser = Effect.acquireRelease(
  Effect.gen(function*() {
    if (!fs.existsSync(executablePath)) {
      return yield* Effect.dieMessage(
        `the browser test cannot run: no Chromium at ${executablePath} (install Debian's chromium, as .ci/run does, or set CITY_CHROMIUM)`
      )
    }
    return yield* Effect.promise(() => chromium.launch({ executablePath, headless: true, args: ["--no-sandbox", "--disable-gpu"] }))
  }),
  (b) => Effect.promise(() => b.close())
)

/** Console errors and failed requests of `page` (a CSP violation is a console error). */
const watch = (page: Page) => {
  const problems: Array<string> = []
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console: ${m.text()}`)
  })
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`))
  page.on("response", (r) => {
    if (r.status() >= 400) problems.push(`response ${r.status()}: ${r.url()}`)
  })
  page.on("requestfailed", (r) => {
    // The event stream is cut when the page closes; that is not a problem of the page.
    if (!r.url().endsWith("/api/events")) problems.push(`request failed: ${r.url()}`)
  })
  return problems
}

const wait = (page: Page, selector: string, what: string) =>
  Effect.tryPromise({
    try: () => page.waitForSelector(selector, { timeout: 60_000 }),
    catch: (e) => new Error(`the page did not show ${what} (${selector}) within 60 s: ${String(e)}`)
  })

describe("the status page in Chromium", () => {
  it.scopedLive("shows plugins, a skipped one with its reason, and an endpoint going pending then applied live", () =>
    Effect.gen(function*() {
      fs.mkdirSync(output, { recursive: true })
      const b = yield* browser
      const { register, setStatus, w } = yield* statusWorld
      // A plugin whose folder has the longest name a plugin may have (64 characters).
      const long = "a-plugin-whose-folder-has-the-longest-name-a-plugin-may-have-x64"
      writePlugin(join(w.root, "plugins"), long, registerEntry(`ctx.registerSystem("long")`))
      writeSettings(w.root, { enabled: ["clock", "broken", long], licensed: ["clock", "broken", long] })
      yield* setStatus("busy")
      const { url } = yield* startStatusDaemon(w, "daemon")

      const context = yield* Effect.promise(() => b.newContext({ viewport: { width: 1200, height: 900 } }))
      const page = yield* Effect.promise(() => context.newPage())
      const problems = watch(page)
      let navigations = 0
      page.on("framenavigated", (f) => {
        if (f === page.mainFrame()) navigations++
      })
      yield* Effect.promise(() => page.goto(url))
      yield* wait(page, `tr[data-plugin="clock"][data-status="ready"]`, "the loaded plugin as ready")
      const skipped = yield* Effect.promise(() => page.textContent(`tr[data-skipped="broken"]`))
      expect(skipped).toContain("apiVersion")
      // A selector, not a predicate: Playwright evaluates a predicate with eval, which the page's
      // CSP refuses (found by CI).
      yield* wait(page, `#live[data-live="on"]`, "itself as live")
      expect(yield* Effect.promise(() => page.textContent("#live"))).toBe("live")
      // A marker in the page's memory: gone if the page reloads.
      yield* Effect.promise(() => page.evaluate(`void (window.cityMarker = 42)`))

      const registered = yield* register
      expect(registered["outcomes"]).toMatchObject([{ application: "pending" }])
      yield* wait(page, `tr[data-endpoint][data-standing="pending"]`, "the endpoint as pending")
      yield* Effect.promise(() => page.screenshot({ path: join(output, "status-page-pending.png"), fullPage: true }))
      yield* setStatus("idle")
      yield* wait(page, `tr[data-endpoint][data-standing="applied"]`, "the endpoint as applied")
      const log = yield* Effect.promise(() => page.textContent("#log"))
      expect(log).toContain("pending → applied")
      expect(yield* Effect.promise(() => page.evaluate(`window.cityMarker`))).toBe(42)
      expect(navigations).toBe(1)
      yield* Effect.promise(() => page.screenshot({ path: join(output, "status-page.png"), fullPage: true }))

      // 1280 px wide: no table scrolls sideways, long folder paths and all; no column repeats another.
      yield* wait(page, `tr[data-plugin="${long}"]`, "the long-named plugin")
      yield* Effect.promise(() => page.setViewportSize({ width: 1280, height: 900 }))
      const overflowing = yield* Effect.promise(() =>
        page.evaluate<ReadonlyArray<string>>(
          `[...document.querySelectorAll(".scroll")].filter((e) => e.scrollWidth > e.clientWidth).map((e) => (e.id || e.querySelector("table")?.id || "?") + ": " + e.scrollWidth + " > " + e.clientWidth)`
        )
      )
      expect(overflowing).toEqual([])
      const headers = yield* Effect.promise(() =>
        page.evaluate<ReadonlyArray<string>>(`[...document.querySelectorAll("#plugins thead th, table[id*=plugins] thead th")].map((th) => th.textContent ?? "")`)
      )
      expect(new Set(headers).size).toBe(headers.length)

      // 400 px wide, dark: no sideways scrolling of the page, a dark background.
      yield* Effect.promise(() => page.setViewportSize({ width: 400, height: 900 }))
      yield* Effect.promise(() => page.emulateMedia({ colorScheme: "dark" }))
      const layout = yield* Effect.promise(() =>
        page.evaluate<{ scrollWidth: number; background: string }>(
          `({ scrollWidth: document.documentElement.scrollWidth, background: getComputedStyle(document.body).backgroundColor })`
        )
      )
      expect(layout.scrollWidth).toBeLessThanOrEqual(400)
      const [r, g, bl] = (layout.background.match(/\d+/g) ?? ["255", "255", "255"]).map(Number)
      expect((r ?? 255) + (g ?? 255) + (bl ?? 255)).toBeLessThan(3 * 128)
      yield* Effect.promise(() => page.screenshot({ path: join(output, "status-page-400-dark.png"), fullPage: true }))
      expect(problems).toEqual([])

      // Without JavaScript the first render shows everything.
      const plain = yield* Effect.promise(() => b.newContext({ javaScriptEnabled: false }))
      const still = yield* Effect.promise(() => plain.newPage())
      yield* Effect.promise(() => still.goto(url))
      expect(yield* Effect.promise(() => still.locator(`tr[data-plugin="clock"][data-status="ready"]`).count())).toBe(1)
      expect(yield* Effect.promise(() => still.locator(`tr[data-endpoint][data-standing="applied"]`).count())).toBe(1)
      expect(yield* Effect.promise(() => still.textContent(`tr[data-skipped="broken"]`))).toContain("apiVersion")
      expect(fs.statSync(join(output, "status-page.png")).size).toBeGreaterThan(1000)
    }).pipe(Effect.provide(NodeContext.layer)), 240_000)

  it.scopedLive("on a host of a fleet: the fleet first, this host marked, a host going down shown in place", () =>
    Effect.gen(function*() {
      fs.mkdirSync(output, { recursive: true })
      const b = yield* browser
      const { w } = yield* statusWorld
      const port = yield* freePort
      const { url } = yield* startStatusDaemon(w, "fleet-daemon", [
        "--cluster",
        `sqlite:${join(w.base, "fleet.db")}`,
        "--cluster-host",
        "web-01",
        "--cluster-address",
        `127.0.0.1:${port}`
      ])
      const context = yield* Effect.promise(() => b.newContext({ viewport: { width: 1200, height: 900 } }))
      const page = yield* Effect.promise(() => context.newPage())
      const problems = watch(page)
      yield* Effect.promise(() => page.goto(url))
      // Its runner registers, and the fleet is read at most every 5 s: live, without a reload.
      yield* wait(page, `tr[data-host="web-01"][data-up="true"][data-this-host]`, "this host as up")
      expect(yield* Effect.promise(() => page.textContent("#fleet-about"))).toMatch(/^This daemon is host web-01 of a fleet of 1 host, 1 up; read from its database at /)
      const order = yield* Effect.promise(() => page.evaluate(`[...document.querySelectorAll("main > section h2")].map((h) => h.textContent)`))
      expect(order).toEqual(["Fleet", "Plugins", "Skipped", "Endpoints", "Live log"])

      // A health event whose fleet has web-02 down, applied as one from the server would be (the
      // next real one, a poll later, puts the fleet back as it is).
      const shown = yield* Effect.promise(() =>
        page.evaluate(`(() => {
          const s = window.cityStatus.state()
          const web02 = { ...s.fleet.hosts[0], host: "web-02", up: false, seen_at: "2026-01-01T00:00:00.000Z" }
          window.cityStatus.apply({ _tag: "health", daemon: s.daemon, sessions: s.sessions, fleet: { ...s.fleet, hosts: [s.fleet.hosts[0], web02] } })
          const row = document.querySelector('tr[data-host="web-02"]')
          const up = getComputedStyle(document.querySelector('tr[data-host="web-01"] span.badge')).backgroundColor
          const down = getComputedStyle(row.querySelector("span.badge")).backgroundColor
          return { up: row.getAttribute("data-up"), text: row.querySelector("td.updown").textContent, distinct: up !== down, about: document.querySelector("#fleet-about").textContent }
        })()`)
      )
      expect(shown).toMatchObject({ up: "false", text: "down", distinct: true })
      expect((shown as { about: string }).about).toContain("a fleet of 2 hosts, 1 up")
      yield* Effect.promise(() => page.screenshot({ path: join(output, "status-page-fleet.png"), fullPage: true }))
      yield* Effect.promise(() => page.setViewportSize({ width: 400, height: 900 }))
      expect(yield* Effect.promise(() => page.evaluate(`document.documentElement.scrollWidth`))).toBeLessThanOrEqual(400)
      expect(problems).toEqual([])
    }).pipe(Effect.provide(NodeContext.layer)), 120_000)
})
