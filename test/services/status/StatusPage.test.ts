/**
 * The status page (src/services/status/StatusPage.ts; docs/status-page.md) on a document full of
 * hostile strings: markup, attribute break-outs, quotes, emoji with variation selectors, a 10 KB
 * reason, non-ASCII. Every string reaches the HTML escaped, in text and in attributes; the rows
 * carry their data attributes; the page has nothing the server's Content-Security-Policy would
 * refuse (inline script or style, external URLs); the script parses, is ES2017, builds no markup,
 * and is the one source of the rows: the server renders with the very module it serves, and the
 * document as the browser gets it (JSON) gives the rows the server renders from the decoded one.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import { transformSync } from "esbuild"
import { readFileSync } from "node:fs"
import { pathToFileURL } from "node:url"
import ts from "typescript"
import { endpointKey, StatusDocument, type StatusEvent } from "../../../src/schema/StatusDocument.ts"
import * as StatusScript from "../../../src/services/status/assets/status.mjs"
import * as StatusPage from "../../../src/services/status/StatusPage.ts"

const { escapeHtml, page } = StatusPage
/** The files as the server serves them. */
const stylesheet = readFileSync(StatusPage.stylesheet.file, "utf8")
const script = readFileSync(StatusPage.script.file, "utf8")

const evil = {
  script: "<script>alert(1)</script>",
  breakout: "\"><img src=x onerror=alert(1)>",
  single: "' onmouseover='alert(1)",
  quotes: "it's \"quoted\" & 'single' & <tagged>",
  emoji: "ready \u2764\ufe0f \u263a\ufe0e \u{1F469}\u{1F3FD}\u200d\u{1F4BB} \u2714\ufe0f",
  nonAscii: "Z\u00fcrich \u2014 \u6771\u4eac \u2014 \u0645\u0631\u062d\u0628\u0627 \u2014 na\u00efve",
  long: "stderr <b>tail</b> & \"more\"\n".repeat(400).slice(0, 10 * 1024)
}
const hostile = Object.values(evil)

/** One host of the fleet, as the database has it. */
function fleetHost(host: string, up: boolean) {
  return {
    host,
    up,
    started_at: "2025-03-01T08:00:00Z",
    seen_at: "2025-03-01T10:00:00Z",
    peers: 2,
    endpoints: 3,
    owed_reloads: up ? 0 : 1,
    owed_removals: 0
  }
}

const document = Schema.decodeUnknownSync(StatusDocument)({
  schema: 1,
  generation: { number: 7, started_at: "2025-03-01T10:00:00.123Z" },
  plugins: [
    {
      name: evil.breakout,
      status: "error",
      last_error: evil.long,
      version: evil.quotes,
      source: "instance",
      root: "instance",
      folder: `/srv/plugins/${evil.nonAscii}`,
      isolation: "worker",
      heap_used_bytes: 7 * 1048576,
      attempts: 3,
      updated_at: "2025-03-01T10:00:01.000Z"
    },
    {
      name: "notes",
      status: "ready",
      last_error: null,
      version: "1.2.0",
      source: "code",
      root: null,
      folder: null,
      isolation: "none",
      heap_used_bytes: null,
      attempts: 1,
      updated_at: "2025-03-01T10:00:02Z"
    },
    {
      name: evil.emoji,
      status: "initializing",
      last_error: evil.script,
      version: null,
      source: "bundled",
      root: "bundled",
      folder: "/opt/city/bundled/emoji",
      isolation: "worker",
      heap_used_bytes: null,
      attempts: 0,
      updated_at: "2025-03-01T10:00:03Z"
    }
  ],
  skipped: [
    { name: evil.script, root: "instance", folder: `/srv/${evil.single}`, kind: "ManifestInvalid", reason: evil.long },
    { name: "licensed", root: "bundled", folder: "/opt/city/licensed", kind: "NotLicensed", reason: evil.nonAscii }
  ],
  missing: [evil.breakout, "absent"],
  sessions: { count: 3, busy: 1, idle: 2 },
  endpoints: [
    {
      capability: "memory",
      peer: "alice",
      runtime: "claude",
      standing: "applied",
      last: { state: "ok", occasion: "birth", at: "2025-03-01T10:00:04Z", exit: 0, detail: null },
      owed: null
    },
    {
      capability: evil.quotes,
      peer: evil.breakout,
      runtime: evil.emoji,
      standing: "failing",
      last: { state: "failed", occasion: "sweep-on", at: "2025-03-01T10:00:05Z", exit: 2, detail: evil.long },
      owed: {
        reload: true,
        removal: false,
        reason: evil.script,
        attempts: 4,
        last_error: evil.breakout,
        next_attempt_at: "2025-03-01T10:01:00Z"
      }
    },
    {
      capability: null,
      peer: "bob",
      runtime: evil.nonAscii,
      standing: "pending",
      last: null,
      owed: { reload: false, removal: true, reason: "capability removed", attempts: 0, last_error: null, next_attempt_at: null }
    }
  ],
  log: [
    { at: "2025-03-01T10:00:00Z", kind: "generation", text: "generation 7" },
    { at: "2025-03-01T10:00:01Z", kind: "plugin", text: `${evil.breakout}: initializing \u2192 error` },
    { at: "2025-03-01T10:00:05Z", kind: "endpoint", text: evil.emoji }
  ],
  daemon: {
    pid: 4242,
    version: evil.quotes,
    started_at: "2025-03-01T09:00:00Z",
    uptime_ms: 3_723_000,
    last_poll_at: null,
    poll_ms: 2000
  },
  fleet: {
    host: evil.breakout,
    read_at: "2025-03-01T10:00:06Z",
    hosts: [
      fleetHost(evil.breakout, true),
      fleetHost(evil.emoji, false),
      fleetHost("web-03", true)
    ],
    invalid: [`city_peers (web-03, ${evil.script}): runtimes: ${evil.long}`]
  }
})

const empty = Schema.decodeUnknownSync(StatusDocument)({
  schema: 1,
  generation: { number: 0, started_at: "2025-03-01T10:00:00Z" },
  plugins: [],
  skipped: [],
  missing: [],
  sessions: { count: 0, busy: 0, idle: 0 },
  endpoints: [],
  log: [],
  daemon: { pid: 1, version: "0.1.0", started_at: "2025-03-01T10:00:00Z", uptime_ms: 500, last_poll_at: "2025-03-01T10:00:00Z", poll_ms: 1000 },
  fleet: null
})

const html = page(document)

/** Every tag of the page, `<…>` as written. */
const tags = (text: string): Array<string> => [...text.matchAll(/<[^>]*>/g)].map((m) => m[0])

/** The inside of the first element opened by `open` (no nested element of the same tag). */
const inside = (text: string, open: string, close: string): string => {
  const start = text.indexOf(open)
  expect(start, open).toBeGreaterThanOrEqual(0)
  const end = text.indexOf(close, start + open.length)
  return text.slice(start + open.length, end)
}

describe("page", () => {
  it("is one HTML5 document with the head the server promises", () => {
    expect(html.startsWith("<!doctype html>\n<html lang=\"en\">")).toBe(true)
    expect(html).toContain("<meta charset=\"utf-8\">")
    expect(html).toContain("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")
    expect(html).toContain("<meta name=\"color-scheme\" content=\"light dark\">")
    expect(html).toContain("<title>city daemon status</title>")
    expect(html).toContain("<link rel=\"stylesheet\" href=\"/assets/status.css\">")
    expect(html).toContain("<script type=\"module\" src=\"/assets/status.js\"></script>")
    expect(html.trimEnd().endsWith("</html>")).toBe(true)
    expect(html).toContain("<span id=\"live\" role=\"status\" data-live=\"off\">not live</span>")
  })

  it("has nothing a strict Content-Security-Policy refuses: inline script or style, external URLs", () => {
    expect(html).not.toMatch(/style\s*=/i)
    expect(html).not.toMatch(/<style/i)
    const scripts = tags(html).filter((t) => /^<script\b/i.test(t))
    expect(scripts).toEqual(["<script type=\"module\" src=\"/assets/status.js\">"])
    expect(html).not.toMatch(/https?:\/\//i)
    const attributeNames = tags(html).flatMap((t) => [...t.replace(/="[^"]*"/g, "").matchAll(/\s([a-z-]+)/gi)].map((m) => m[1]))
    expect(attributeNames.filter((name) => /^on|^style$/i.test(name ?? ""))).toEqual([])
    const urls = [...html.matchAll(/\s(?:href|src|action|formaction)="([^"]*)"/g)].map((m) => m[1])
    expect(urls.sort()).toEqual(["/assets/status.css", "/assets/status.js"])
  })

  it("escapes every string of the document, in text and in attribute values", () => {
    for (const text of hostile) expect(html).toContain(escapeHtml(text))
    expect(html).not.toContain(evil.script)
    expect(html).not.toContain("<img")
    expect(html).not.toContain("<b>")
    expect(html).not.toContain("<tagged>")
    // No quote of a value breaks out of its attribute: every tag is well formed, attribute values
    // hold no `"`, `<` or `>`, and there is no `'` anywhere (the page itself writes none).
    const wellFormed = /^<(?:!doctype html|\/?[a-z][a-z0-9]*(?:\s+[a-z][a-z-]*(?:="[^"<>]*")?)*)>$/
    expect(tags(html).filter((t) => !wellFormed.test(t))).toEqual([])
    expect(html).not.toContain("'")
    // Text nodes hold no raw `<`/`>` either: removing the tags leaves none.
    expect(html.replace(/<[^>]*>/g, "")).not.toMatch(/[<>]/)
    // The emoji (with their variation selectors) and the non-ASCII text arrive intact.
    expect(html).toContain(evil.emoji)
    expect(html).toContain(evil.nonAscii)
    expect(escapeHtml("&<>\"'")).toBe("&amp;&lt;&gt;&quot;&#39;")
  })

  it("renders the header: pid, version, uptime, last poll, generation, Sessions", () => {
    const summary = inside(html, "<dl id=\"summary\">", "</dl>")
    expect(summary).toContain("<dd data-field=\"pid\">4242</dd>")
    expect(summary).toContain(`<dd data-field="version">${escapeHtml(evil.quotes)}</dd>`)
    expect(summary).toContain("<dd data-field=\"uptime\">1h 2m 3s</dd>")
    expect(summary).toContain("<dd data-field=\"last-poll\"><span class=\"nil\">\u2014</span></dd>")
    expect(summary).toContain("<dd data-field=\"poll\">2s</dd>")
    expect(summary).toContain("<dd data-field=\"generation\">7</dd>")
    expect(summary).toContain(
      "<dd data-field=\"generation-started\"><time datetime=\"2025-03-01T10:00:00.123Z\">2025-03-01 10:00:00 UTC</time></dd>"
    )
    expect(summary).toContain("<dd data-field=\"sessions\">3 (1 busy, 2 idle)</dd>")
  })

  it("renders one row per plugin, skipped folder, missing name and endpoint, with their data attributes", () => {
    const plugins = [...html.matchAll(/<tr data-plugin="([^"]*)" data-status="([^"]*)">/g)].map((m) => [m[1], m[2]])
    expect(plugins).toEqual(document.plugins.map((p) => [escapeHtml(p.name), p.status]))
    expect(html).toContain("<span class=\"badge status-error\">error</span>")
    expect(html).toContain("<span class=\"badge status-ready\">ready</span>")
    expect(html).toContain("<span class=\"badge status-initializing\">initializing</span>")
    // Where each runs, and a worker's heap in MiB.
    expect(html).toContain("<td class=\"text\">worker</td><td class=\"bytes\">7.0 MiB</td>")

    const skipped = [...html.matchAll(/<tr data-skipped="([^"]*)">/g)].map((m) => m[1])
    expect(skipped).toEqual(document.skipped.map((s) => escapeHtml(s.name)))
    const missing = [...html.matchAll(/<li data-missing="([^"]*)">/g)].map((m) => m[1])
    expect(missing).toEqual(document.missing.map(escapeHtml))

    const endpoints = [...html.matchAll(/<tr data-endpoint="([^"]*)" data-standing="(applied|pending|failing)">/g)]
      .map((m) => [m[1], m[2]])
    expect(endpoints).toEqual(document.endpoints.map((e) => [escapeHtml(endpointKey(e)), e.standing]))
    expect(html).toContain(`<tr data-endpoint="${escapeHtml(JSON.stringify(["memory", "alice", "claude"]))}" data-standing="applied">`)
    expect(html).toContain(`<tr data-endpoint="${escapeHtml(JSON.stringify(["", "bob", evil.nonAscii]))}" data-standing="pending">`)
    expect(html).toContain("<span class=\"badge standing-failing\">failing</span>")
    expect(html).toContain("<span class=\"badge state-failed\">failed</span>")
    expect(html).toContain("<span class=\"owed-kind\">reload</span>")
    expect(html).toContain("<span class=\"owed-kind\">removal</span>")
    expect(html).toContain("<span class=\"field\"><span class=\"label\">exit</span>2</span>")
  })

  it("on a host of a fleet, shows every host with its state, this host marked, and the rows that could not be read", () => {
    const table = inside(html, "<table id=\"fleet\">", "</table>")
    const rows = [...table.matchAll(/<tr data-host="([^"]*)" data-up="(true|false)"( data-this-host="")?>/g)].map((m) => [m[1], m[2], m[3] !== undefined])
    expect(rows).toEqual([[escapeHtml(evil.breakout), "true", true], [escapeHtml(evil.emoji), "false", false], ["web-03", "true", false]])
    expect(table).toContain("<td class=\"updown\"><span class=\"badge host-up\">up</span></td>")
    expect(table).toContain("<td class=\"updown\"><span class=\"badge host-down\">down</span></td>")
    expect(table).toContain("<td class=\"number\">3</td><td class=\"number\">1</td><td class=\"number\">0</td>")
    const about = inside(html, "<p id=\"fleet-about\" class=\"hint\">", "</p>")
    expect(about).toBe(
      `This daemon is host <code>${escapeHtml(evil.breakout)}</code> of a fleet of 3 hosts, 2 up; ` +
        "<span>read from its database at <time datetime=\"2025-03-01T10:00:06Z\">2025-03-01 10:00:06 UTC</time>.</span>"
    )
    expect(inside(html, "<ul id=\"fleet-invalid\" aria-labelledby=\"fleet-invalid-title\">", "</ul>")).toBe(
      `<li>${escapeHtml(document.fleet!.invalid[0]!)}</li>`
    )
    // The fleet comes first; a host alone has no fleet section at all.
    expect(html.indexOf("<table id=\"fleet\">")).toBeLessThan(html.indexOf("<table id=\"plugins\">"))
    expect(page(empty)).not.toMatch(/fleet/)
  })

  it("lists the log newest first", () => {
    const kinds = [...inside(html, "<ol id=\"log\" aria-labelledby=\"log-title\">", "</ol>").matchAll(/<li data-kind="([a-z]+)">/g)]
      .map((m) => m[1])
    expect(kinds).toEqual(["endpoint", "plugin", "generation"])
  })

  it("shows `none` in every empty table and list", () => {
    const none = page(empty)
    expect(none).toContain("<table id=\"plugins\">")
    expect(inside(none, "<table id=\"plugins\">", "</table>")).toContain("<tbody><tr class=\"none\"><td colspan=\"9\">none</td></tr></tbody>")
    expect(inside(none, "<table id=\"skipped\">", "</table>")).toContain("<tbody><tr class=\"none\"><td colspan=\"5\">none</td></tr></tbody>")
    expect(inside(none, "<table id=\"endpoints\">", "</table>")).toContain("<tbody><tr class=\"none\"><td colspan=\"6\">none</td></tr></tbody>")
    expect(none).toContain("<ul id=\"missing\" aria-labelledby=\"missing-title\"><li class=\"none\">none</li></ul>")
    expect(none).toContain("<ol id=\"log\" aria-labelledby=\"log-title\"><li class=\"none\">none</li></ol>")
    expect(none).not.toMatch(/data-(?:plugin|skipped|endpoint|kind|missing)=/)
    expect(none).toContain("<dd data-field=\"uptime\">500 ms</dd>")
  })
})

describe("stylesheet", () => {
  it("is light and dark, wraps long strings, uses system fonts and loads nothing", () => {
    expect(stylesheet).toContain("color-scheme: light dark;")
    expect(stylesheet).toContain("@media (prefers-color-scheme: dark)")
    expect(stylesheet).toContain("overflow-wrap: anywhere;")
    expect(stylesheet).toContain("overflow-x: auto;")
    expect(stylesheet).toContain("system-ui")
    expect(stylesheet).not.toMatch(/url\(|@import|@font-face|https?:\/\//i)
    for (const cls of ["status-ready", "status-initializing", "status-disposing", "status-error", "standing-applied", "standing-pending", "standing-failing", "host-up", "host-down"]) {
      expect(stylesheet).toContain(`.${cls}`)
    }
  })
})

/** The script run as a browser would, with no EventSource (so it only defines `window.cityStatus`). */
interface Tree {
  readonly tag: string
  readonly attrs: Record<string, string>
  readonly children: ReadonlyArray<Tree | string>
}
const loadScript = (): { readonly sections: (doc: unknown) => Record<string, ReadonlyArray<Tree>> } => {
  const window: { cityStatus?: { sections: (doc: unknown) => Record<string, ReadonlyArray<Tree>> } } = {}
  StatusScript.start(window, {}, undefined)
  expect(window.cityStatus).toBeDefined()
  return window.cityStatus!
}

/** What the browser's DOM holds for a tree, as HTML (the serialization of `innerHTML`/`outerHTML`). */
const serialize = (node: Tree | string): string =>
  typeof node === "string"
    ? escapeHtml(node)
    : `<${node.tag}${Object.entries(node.attrs).map(([k, v]) => ` ${k}="${escapeHtml(v)}"`).join("")}>${node.children.map(serialize).join("")}</${node.tag}>`

describe("script", () => {
  it("parses as JavaScript, is ES2017, imports nothing, and builds no markup", () => {
    const opts = { loader: "js", format: "esm", minifyWhitespace: false } as const
    expect(transformSync(script, { ...opts, target: "es2017" }).code).toBe(transformSync(script, { ...opts, target: "esnext" }).code)
    expect(script).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function/)
    expect(script).toContain("new EventSource(\"/api/events\")")
    expect(script).not.toMatch(/https?:\/\//)
    expect(script).not.toMatch(/^\s*import\b|\bimport\(/m)
    // ASCII only, whatever charset it is served with.
    expect(script).toMatch(/^[\x00-\x7f]*$/)
  })

  it("type-checks as ES2017 against the DOM (its own JSDoc, strict but for untyped parameters)", () => {
    const program = ts.createProgram([StatusPage.script.file], {
      allowJs: true,
      checkJs: true,
      noEmit: true,
      strict: true,
      noImplicitAny: false,
      target: ts.ScriptTarget.ES2017,
      module: ts.ModuleKind.ESNext,
      lib: ["lib.es2017.d.ts", "lib.dom.d.ts"],
      types: []
    })
    const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"))
    expect(problems).toEqual([])
  }, 60_000)

  it("is the module the server renders with, and listens to every event", async () => {
    const served: typeof StatusScript = await import(pathToFileURL(StatusPage.script.file).href)
    expect(served.sections).toBe(StatusScript.sections)
    expect(served.columns).toBe(StatusScript.columns)
    // A record, so a new `_tag` fails to compile until it is added here (and to the script).
    const union: Record<StatusEvent["_tag"], true> = {
      "status": true,
      "plugin": true,
      "plugin-removed": true,
      "endpoint": true,
      "endpoint-removed": true,
      "log": true,
      "health": true
    }
    expect([...StatusScript.tags].sort()).toEqual(Object.keys(union).sort())
  })

  it("builds exactly the rows and items the server renders, from the document as the browser gets it", () => {
    const { sections } = loadScript()
    // What the browser gets: the encoded document, as JSON.
    const wire = JSON.parse(JSON.stringify(Schema.encodeSync(StatusDocument)(document)))
    for (const doc of [[document, wire], [empty, JSON.parse(JSON.stringify(empty))]] as const) {
      const rendered = page(doc[0])
      const s = sections(doc[1])
      const inner = (name: string) => (s[name] ?? []).map(serialize).join("")
      expect(inside(rendered, "<dl id=\"summary\">", "</dl>")).toBe(inner("summary"))
      expect(inside(inside(rendered, "<table id=\"plugins\">", "</table>"), "<tbody>", "</tbody>")).toBe(inner("plugins"))
      expect(inside(inside(rendered, "<table id=\"skipped\">", "</table>"), "<tbody>", "</tbody>")).toBe(inner("skipped"))
      expect(inside(rendered, "<ul id=\"missing\" aria-labelledby=\"missing-title\">", "</ul>")).toBe(inner("missing"))
      expect(inside(inside(rendered, "<table id=\"endpoints\">", "</table>"), "<tbody>", "</tbody>")).toBe(inner("endpoints"))
      expect(inside(rendered, "<ol id=\"log\" aria-labelledby=\"log-title\">", "</ol>")).toBe(inner("log"))
      if (doc[0].fleet === null) {
        for (const name of ["fleet", "fleet-about", "fleet-invalid"]) expect(s[name]).toEqual([])
      } else {
        expect(inside(inside(rendered, "<table id=\"fleet\">", "</table>"), "<tbody>", "</tbody>")).toBe(inner("fleet"))
        expect(inside(rendered, "<p id=\"fleet-about\" class=\"hint\">", "</p>")).toBe(inner("fleet-about"))
        expect(inside(rendered, "<ul id=\"fleet-invalid\" aria-labelledby=\"fleet-invalid-title\">", "</ul>")).toBe(inner("fleet-invalid"))
      }
    }
  })
})

/**
 * A stand-in for the browser, until the real browser test: just the DOM the script touches
 * (`createElement`, `createTextNode`, `setAttribute`, `textContent`, insertion and removal), the
 * page's containers, and an `EventSource` the test sends events through. After every step the
 * containers must hold what `page` renders for the document the events lead to.
 */
class FakeText {
  parent: FakeElement | null = null
  constructor(readonly data: string) {}
  get textContent(): string {
    return this.data
  }
}
class FakeElement {
  parent: FakeElement | null = null
  childNodes: Array<FakeElement | FakeText> = []
  readonly attrs = new Map<string, string>()
  constructor(readonly tagName: string) {}
  get children(): Array<FakeElement> {
    return this.childNodes.filter((c): c is FakeElement => c instanceof FakeElement)
  }
  get firstChild(): FakeElement | FakeText | null {
    return this.childNodes[0] ?? null
  }
  get lastElementChild(): FakeElement | null {
    return this.children.at(-1) ?? null
  }
  get classList() {
    return { contains: (c: string) => (this.getAttribute("class") ?? "").split(" ").includes(c) }
  }
  setAttribute(k: string, v: string) {
    this.attrs.set(k, String(v))
  }
  getAttribute(k: string): string | null {
    return this.attrs.get(k) ?? null
  }
  set textContent(text: string) {
    this.childNodes = [new FakeText(text)]
  }
  get textContent(): string {
    return this.childNodes.map((c) => c.textContent).join("")
  }
  appendChild(c: FakeElement | FakeText) {
    return this.insertBefore(c, null)
  }
  insertBefore(c: FakeElement | FakeText, ref: FakeElement | FakeText | null) {
    c.parent?.removeChild(c)
    const i = ref === null ? this.childNodes.length : this.childNodes.indexOf(ref)
    if (i < 0) throw new Error("insertBefore: not a child")
    this.childNodes.splice(i, 0, c)
    c.parent = this
    return c
  }
  removeChild(c: FakeElement | FakeText) {
    const i = this.childNodes.indexOf(c)
    if (i < 0) throw new Error("removeChild: not a child")
    this.childNodes.splice(i, 1)
    c.parent = null
    return c
  }
  replaceChild(next: FakeElement | FakeText, old: FakeElement | FakeText) {
    this.insertBefore(next, old)
    return this.removeChild(old)
  }
  get html(): string {
    return this.childNodes.map((c) =>
      c instanceof FakeText
        ? escapeHtml(c.data)
        : `<${c.tagName}${[...c.attrs].map(([k, v]) => ` ${k}="${escapeHtml(v)}"`).join("")}>${c.html}</${c.tagName}>`
    ).join("")
  }
}

/** The page's containers, as `page` opens them. */
const containers = {
  "#summary": "<dl id=\"summary\">",
  "#plugins > tbody": "<table id=\"plugins\">",
  "#skipped > tbody": "<table id=\"skipped\">",
  "#missing": "<ul id=\"missing\" aria-labelledby=\"missing-title\">",
  "#endpoints > tbody": "<table id=\"endpoints\">",
  "#log": "<ol id=\"log\" aria-labelledby=\"log-title\">",
  "#fleet > tbody": "<table id=\"fleet\">",
  "#fleet-about": "<p id=\"fleet-about\" class=\"hint\">",
  "#fleet-invalid": "<ul id=\"fleet-invalid\" aria-labelledby=\"fleet-invalid-title\">"
} as const
const fleetContainers = ["#fleet > tbody", "#fleet-about", "#fleet-invalid"]

const inPage = (rendered: string, selector: keyof typeof containers): string => {
  const open = containers[selector]
  if (open.startsWith("<table")) return inside(inside(rendered, open, "</table>"), "<tbody>", "</tbody>")
  return inside(rendered, open, `</${/^<([a-z]+)/.exec(open)![1]}>`)
}

/** A page of a host alone has no fleet containers; one of a host of a fleet has them. */
const browser = (fleet = false) => {
  const elements = new Map(
    Object.keys(containers).filter((s) => fleet || !fleetContainers.includes(s)).map((s) => [s, new FakeElement(s)])
  )
  const live = new FakeElement("span")
  const fakeDocument = {
    createElement: (tag: string) => new FakeElement(tag),
    createTextNode: (text: string) => new FakeText(text),
    querySelector: (selector: string) => elements.get(selector) ?? null,
    getElementById: (id: string) => (id === "live" ? live : null)
  }
  const sources: Array<FakeEventSource> = []
  class FakeEventSource {
    readyState = 1
    onopen: (() => void) | null = null
    onerror: (() => void) | null = null
    readonly listeners = new Map<string, Array<(e: { data: string }) => void>>()
    constructor(readonly url: string) {
      sources.push(this)
    }
    addEventListener(type: string, f: (e: { data: string }) => void) {
      this.listeners.set(type, [...(this.listeners.get(type) ?? []), f])
    }
    close() {}
  }
  StatusScript.start({}, fakeDocument, FakeEventSource)
  const source = sources[0]!
  return {
    url: source.url,
    live,
    open: () => source.onopen?.(),
    fail: () => source.onerror?.(),
    send: (event: unknown) => {
      const tag = (event as { _tag: string })._tag
      for (const f of source.listeners.get(tag) ?? []) f({ data: JSON.stringify(event) })
    },
    /** The containers hold what `page` renders for `expected`. */
    shows: (expected: unknown) => {
      const rendered = page(Schema.decodeUnknownSync(StatusDocument)(expected))
      for (const [selector, element] of elements) {
        expect(element.html, selector).toBe(inPage(rendered, selector as keyof typeof containers))
      }
    }
  }
}

const plugin = (name: string, status = "ready") => ({
  name,
  status,
  last_error: null,
  version: null,
  source: "code",
  root: null,
  folder: null,
  isolation: "none",
  heap_used_bytes: null,
  attempts: 0,
  updated_at: "2025-01-01T00:00:00Z"
})
const endpoint = (capability: string | null, peer: string, standing = "applied") => ({
  capability,
  peer,
  runtime: "claude",
  standing,
  last: null,
  owed: null
})
const wire = JSON.parse(JSON.stringify(Schema.encodeSync(StatusDocument)(empty))) as Record<string, unknown>
const docWith = (over: Record<string, unknown>) => ({ ...wire, ...over })

describe("script, on a stand-in DOM", () => {
  it("connects to /api/events, says whether it is live, and applies every event as page renders it", () => {
    const b = browser()
    expect(b.url).toBe("/api/events")
    expect(b.live.textContent).toBe("")
    b.open()
    expect([b.live.textContent, b.live.getAttribute("data-live")]).toEqual(["live", "on"])

    b.send({ _tag: "status", document: docWith({ plugins: [plugin(evil.breakout)], endpoints: [endpoint(null, "z")] }) })
    b.shows(docWith({ plugins: [plugin(evil.breakout)], endpoints: [endpoint(null, "z")] }))

    b.send({ _tag: "plugin", plugin: plugin("a") })
    b.send({ _tag: "plugin", plugin: plugin("\u{1F600}", "error") })
    b.send({ _tag: "plugin", plugin: plugin(evil.breakout, "disposing") })
    b.send({ _tag: "endpoint", endpoint: endpoint("m", evil.script) })
    b.send({ _tag: "endpoint", endpoint: endpoint("a", "bob", "pending") })
    b.send({ _tag: "endpoint", endpoint: endpoint("m", evil.script, "failing") })
    const plugins = [plugin(evil.breakout, "disposing"), plugin("a"), plugin("\u{1F600}", "error")]
    const endpoints = [endpoint("a", "bob", "pending"), endpoint("m", evil.script, "failing"), endpoint(null, "z")]
    b.shows(docWith({ plugins, endpoints }))

    b.send({ _tag: "plugin-removed", name: "a" })
    b.send({ _tag: "endpoint-removed", capability: null, peer: "z", runtime: "claude" })
    b.shows(docWith({ plugins: [plugins[0], plugins[2]], endpoints: endpoints.slice(0, 2) }))

    for (const p of [plugins[0]!, plugins[2]!]) b.send({ _tag: "plugin-removed", name: p.name })
    for (const e of endpoints.slice(0, 2)) b.send({ _tag: "endpoint-removed", ...e })
    b.shows(wire)

    const entries = Array.from({ length: 250 }, (_, i) => ({ at: "2025-01-01T00:00:00Z", kind: "plugin", text: `${evil.single} ${i}` }))
    for (const entry of entries) b.send({ _tag: "log", entry })
    const health = {
      daemon: { pid: 2, version: evil.quotes, started_at: "2025-01-01T00:00:00Z", uptime_ms: 90_061_000, last_poll_at: "2025-01-01T00:00:01Z", poll_ms: 500 },
      sessions: { count: 2, busy: 1, idle: 1 }
    }
    b.send({ _tag: "health", ...health })
    b.shows(docWith({ log: entries.slice(-200), ...health }))

    b.fail()
    expect([b.live.textContent, b.live.getAttribute("data-live")]).toEqual(["reconnecting\u2026", "retry"])
  })

  it("on a host of a fleet, each health event brings the fleet as it stands", () => {
    const b = browser(true)
    const fleet = { host: "web-01", read_at: null, hosts: [], invalid: [] }
    b.send({ _tag: "status", document: docWith({ fleet }) })
    b.shows(docWith({ fleet }))
    const health = { daemon: (wire as { daemon: unknown }).daemon, sessions: { count: 0, busy: 0, idle: 0 } }
    const read = {
      host: "web-01",
      read_at: "2025-01-01T00:00:03Z",
      hosts: [fleetHost("web-01", true), fleetHost(evil.breakout, false)],
      invalid: [evil.script]
    }
    b.send({ _tag: "health", ...health, fleet: read })
    b.shows(docWith({ ...health, fleet: read }))
    const later = { ...read, hosts: [fleetHost("web-01", true), fleetHost(evil.breakout, true), fleetHost("web-09", false)], invalid: [] }
    b.send({ _tag: "health", ...health, fleet: later })
    b.shows(docWith({ ...health, fleet: later }))
  })
})
