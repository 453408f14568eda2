/**
 * The status page of `city daemon --http` (docs/status-page.md): the HTML of `GET /`, its
 * stylesheet (`/assets/status.css`) and its script (`/assets/status.js`).
 *
 * The page is complete without JavaScript: `page` renders the whole `StatusDocument` on the
 * server, so the first load (or a reload, with scripts off) shows everything. The script then
 * opens `GET /api/events` (same origin, so the cookie goes along) and keeps the page in step with
 * the `StatusEvent`s: `status` re-renders every section, `plugin` / `plugin-removed` and
 * `endpoint` / `endpoint-removed` replace, insert or remove one row, `log` prepends one entry and
 * `health` updates the header. The indicator `#live` says `not live`, `live` or `reconnecting…`.
 *
 * The DOM contract, the same whichever side built it:
 * - `#live[data-live=off|on|retry]`, `dl#summary` (each `dd[data-field]`: `pid`, `version`,
 *   `uptime`, `started`, `last-poll`, `poll`, `generation`, `generation-started`, `sessions`);
 * - `table#plugins > tbody > tr[data-plugin][data-status]`, `table#skipped > tbody > tr[data-skipped]`,
 *   `ul#missing > li[data-missing]`, `table#endpoints > tbody > tr[data-endpoint][data-standing]`
 *   (the key is `endpointKey`), `ol#log > li[data-kind]` (newest first, at most 200);
 * - an empty table holds one `tr.none` (`none`), an empty list one `li.none`;
 * - a cell is `td.<kind>` (`text`, `code`, `number`, `time`, `pre`, `badge`, `last`, `owed`), a
 *   missing value `span.nil` (`—`), a badge `span.badge.status-<status>`,
 *   `span.badge.standing-<standing>` or `span.badge.state-<state>`, always with its word as text.
 *
 * Decisions:
 * - One picture, two builders. Both sides describe the sections as the same plain tree
 *   (`{ tag, attrs, children }`); the server serializes it with every string escaped
 *   (`escapeHtml`), the script turns it into nodes with `createElement`, `setAttribute` and
 *   `textContent` only, never markup. The column definitions, the labels of the empty rows and
 *   the log's length are one value, embedded in the script as JSON; the cell and row builders are
 *   written twice, side by side below (TypeScript for the server, ES2017 for the browser), and the
 *   test checks that both give the same rows for the same document.
 * - Nothing inline: no `<script>` without `src`, no `style` attribute, no external URL, so the
 *   page runs under the server's strict Content-Security-Policy (`default-src 'none'`,
 *   `script-src 'self'`, `style-src 'self'`, `connect-src 'self'`).
 * - Times are shown as the document gives them (ISO 8601, UTC, trimmed to the second) in
 *   `<time datetime>`, the same text on both sides whatever the browser's locale.
 * - The script exposes `window.cityStatus` (`apply(event)`, `sections(document)`, `state()`), so a
 *   browser test can drive the page without a server.
 * @since 0.1.0
 */
import type { SkippedPlugin } from "../../schema/LoadReport.ts"
import {
  endpointKey,
  type StatusDocument,
  type StatusEndpoint,
  type StatusEvent,
  type StatusLogEntry,
  type StatusPlugin
} from "../../schema/StatusDocument.ts"

const entities: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  "\"": "&quot;",
  "'": "&#39;"
}

/**
 * Escapes `& < > " '` for HTML, in text and in (double- or single-quoted) attribute values.
 * @since 0.1.0
 * @category utils
 */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => entities[c] ?? c)

// ---------------------------------------------------------------------------------------------
// The shared part: columns, containers, limits. Embedded in the script as JSON.
// ---------------------------------------------------------------------------------------------

/** How a cell shows its value; also the cell's class. */
type CellKind = "text" | "code" | "number" | "bytes" | "time" | "pre" | "badge" | "last" | "owed"

interface Column<F extends string> {
  readonly title: string
  /** The row's field it shows; for a badge, also the badge's class prefix (`status-ready`). */
  readonly field: F
  readonly kind: CellKind
}

const pluginColumns: ReadonlyArray<Column<keyof StatusPlugin>> = [
  { title: "Name", field: "name", kind: "code" },
  { title: "Status", field: "status", kind: "badge" },
  { title: "Since", field: "updated_at", kind: "time" },
  { title: "Version", field: "version", kind: "text" },
  { title: "Source", field: "source", kind: "text" },
  { title: "Root", field: "root", kind: "text" },
  { title: "Isolation", field: "isolation", kind: "text" },
  { title: "Heap", field: "heap_used_bytes", kind: "bytes" },
  { title: "Folder", field: "folder", kind: "code" },
  { title: "Attempts", field: "attempts", kind: "number" },
  { title: "Last error", field: "last_error", kind: "pre" }
]

const skippedColumns: ReadonlyArray<Column<keyof SkippedPlugin>> = [
  { title: "Name", field: "name", kind: "code" },
  { title: "Root", field: "root", kind: "text" },
  { title: "Folder", field: "folder", kind: "code" },
  { title: "Kind", field: "kind", kind: "code" },
  { title: "Reason", field: "reason", kind: "pre" }
]

const endpointColumns: ReadonlyArray<Column<keyof StatusEndpoint>> = [
  { title: "Capability", field: "capability", kind: "code" },
  { title: "Peer", field: "peer", kind: "code" },
  { title: "Runtime", field: "runtime", kind: "code" },
  { title: "Standing", field: "standing", kind: "badge" },
  { title: "Last call", field: "last", kind: "last" },
  { title: "Owed", field: "owed", kind: "owed" }
]

/** Every event the script listens to: a record, so a new `_tag` fails to compile until added. */
const eventTags: Readonly<Record<StatusEvent["_tag"], true>> = {
  "status": true,
  "plugin": true,
  "plugin-removed": true,
  "endpoint": true,
  "endpoint-removed": true,
  "log": true,
  "health": true
}

const shared = {
  dash: "\u2014",
  none: "none",
  logLimit: 200,
  retryMs: 5000,
  tags: Object.keys(eventTags),
  columns: { plugins: pluginColumns, skipped: skippedColumns, endpoints: endpointColumns },
  /** Where each part of `sections` goes. */
  containers: {
    summary: "#summary",
    plugins: "#plugins > tbody",
    skipped: "#skipped > tbody",
    missing: "#missing",
    endpoints: "#endpoints > tbody",
    log: "#log"
  }
} as const

// ---------------------------------------------------------------------------------------------
// The server's builders. Each has its twin in `script` below: change both.
// ---------------------------------------------------------------------------------------------

type Child = Tree | string
interface Tree {
  readonly tag: string
  readonly attrs: Readonly<Record<string, string>>
  readonly children: ReadonlyArray<Child>
}

const h = (tag: string, attrs: Readonly<Record<string, string>> = {}, children: ReadonlyArray<Child> = []): Tree => ({
  tag,
  attrs,
  children
})

/** `2024-05-01T12:00:03.123Z` → `2024-05-01 12:00:03 UTC`; anything else as it is. */
const displayTime = (iso: string): string =>
  iso.replace(/^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)(?:\.\d+)?Z$/, "$1 $2 UTC")

/** `850 ms`, `5s`, `3m 5s`, `2h 0m 5s`, `1d 2h 3m 4s`. */
const duration = (ms: number): string => {
  if (!(ms >= 1000)) return `${Math.round(ms)} ms`
  const s = Math.floor(ms / 1000)
  const d = Math.floor(s / 86400)
  const hh = Math.floor((s % 86400) / 3600)
  const m = Math.floor((s % 3600) / 60)
  const parts: Array<string> = []
  if (d > 0) parts.push(`${d}d`)
  if (d > 0 || hh > 0) parts.push(`${hh}h`)
  if (d > 0 || hh > 0 || m > 0) parts.push(`${m}m`)
  parts.push(`${s % 60}s`)
  return parts.join(" ")
}

const nil = (): Tree => h("span", { class: "nil" }, [shared.dash])
const time = (iso: string): Tree => h("time", { datetime: iso }, [displayTime(iso)])
const badge = (kind: string, value: string): Tree => h("span", { class: `badge ${kind}-${value}` }, [value])
const field = (label: string, value: Child): Tree =>
  h("span", { class: "field" }, [h("span", { class: "label" }, [label]), value])

const lastCall = (last: NonNullable<StatusEndpoint["last"]>): Tree => {
  const parts: Array<Child> = [badge("state", last.state), field("occasion", last.occasion), field("at", time(last.at))]
  if (last.exit !== null) parts.push(field("exit", String(last.exit)))
  if (last.detail !== null) parts.push(h("pre", { class: "detail" }, [last.detail]))
  return h("div", { class: "parts" }, parts)
}

const owedWork = (owed: NonNullable<StatusEndpoint["owed"]>): Tree => {
  const what = owed.reload && owed.removal
    ? "reload + removal"
    : owed.reload
    ? "reload"
    : owed.removal
    ? "removal"
    : "owed"
  const parts: Array<Child> = [
    h("span", { class: "owed-kind" }, [what]),
    field("reason", owed.reason),
    field("attempts", String(owed.attempts))
  ]
  if (owed.next_attempt_at !== null) parts.push(field("next attempt", time(owed.next_attempt_at)))
  if (owed.last_error !== null) parts.push(h("pre", { class: "detail" }, [owed.last_error]))
  return h("div", { class: "parts" }, parts)
}

const content = (column: Column<string>, value: unknown): ReadonlyArray<Child> => {
  if (value === null || value === undefined) return [nil()]
  switch (column.kind) {
    case "number":
      return [String(value)]
    case "bytes":
      return [`${(Number(value) / 1048576).toFixed(1)} MiB`]
    case "time":
      return [time(String(value))]
    case "pre":
      return [h("pre", {}, [String(value)])]
    case "badge":
      return [badge(column.field, String(value))]
    case "last":
      return [lastCall(value as NonNullable<StatusEndpoint["last"]>)]
    case "owed":
      return [owedWork(value as NonNullable<StatusEndpoint["owed"]>)]
    default:
      return [String(value)]
  }
}

const cells = <R>(columns: ReadonlyArray<Column<keyof R & string>>, row: R): Array<Tree> =>
  columns.map((c) => h("td", { class: c.kind }, content(c, row[c.field])))

const pluginRow = (p: StatusPlugin): Tree =>
  h("tr", { "data-plugin": p.name, "data-status": p.status }, cells(pluginColumns, p))
const skippedRow = (s: SkippedPlugin): Tree => h("tr", { "data-skipped": s.name }, cells(skippedColumns, s))
const endpointRow = (e: StatusEndpoint): Tree =>
  h("tr", { "data-endpoint": endpointKey(e), "data-standing": e.standing }, cells(endpointColumns, e))
const noneRow = (columns: number): Tree =>
  h("tr", { class: "none" }, [h("td", { colspan: String(columns) }, [shared.none])])
const noneItem = (): Tree => h("li", { class: "none" }, [shared.none])
const missingItem = (name: string): Tree => h("li", { "data-missing": name }, [name])
const logItem = (e: StatusLogEntry): Tree =>
  h("li", { "data-kind": e.kind }, [time(e.at), h("span", { class: "kind" }, [e.kind]), h("span", { class: "text" }, [e.text])])

const item = (label: string, name: string, value: Child): Tree =>
  h("div", {}, [h("dt", {}, [label]), h("dd", { "data-field": name }, [value])])

const summaryItems = (
  g: StatusDocument["generation"],
  d: StatusDocument["daemon"],
  s: StatusDocument["sessions"]
): Array<Tree> => [
  item("pid", "pid", String(d.pid)),
  item("version", "version", d.version),
  item("uptime", "uptime", duration(d.uptime_ms)),
  item("started", "started", time(d.started_at)),
  item("last poll", "last-poll", d.last_poll_at === null ? nil() : time(d.last_poll_at)),
  item("poll every", "poll", duration(d.poll_ms)),
  item("generation", "generation", String(g.number)),
  item("generation since", "generation-started", time(g.started_at)),
  item("sessions", "sessions", `${s.count} (${s.busy} busy, ${s.idle} idle)`)
]

const rowsOr = (rows: Array<Tree>, columns: number): Array<Tree> => rows.length === 0 ? [noneRow(columns)] : rows

/** The children of every container of `shared.containers`, for one document. */
const sections = (doc: StatusDocument): Record<keyof typeof shared.containers, Array<Tree>> => ({
  summary: summaryItems(doc.generation, doc.daemon, doc.sessions),
  plugins: rowsOr(doc.plugins.map(pluginRow), pluginColumns.length),
  skipped: rowsOr(doc.skipped.map(skippedRow), skippedColumns.length),
  missing: doc.missing.length === 0 ? [noneItem()] : doc.missing.map(missingItem),
  endpoints: rowsOr(doc.endpoints.map(endpointRow), endpointColumns.length),
  log: doc.log.length === 0 ? [noneItem()] : doc.log.slice(-shared.logLimit).reverse().map(logItem)
})

const toHtml = (node: Child): string => {
  if (typeof node === "string") return escapeHtml(node)
  const attrs = Object.entries(node.attrs).map(([k, v]) => ` ${k}="${escapeHtml(v)}"`).join("")
  return `<${node.tag}${attrs}>${node.children.map(toHtml).join("")}</${node.tag}>`
}

const tableSection = (
  id: string,
  title: string,
  columns: ReadonlyArray<Column<string>>,
  rows: ReadonlyArray<Tree>,
  after: ReadonlyArray<Tree> = []
): Tree =>
  h("section", { "aria-labelledby": `${id}-title` }, [
    h("h2", { id: `${id}-title` }, [title]),
    h("div", { class: "scroll", role: "region", "aria-labelledby": `${id}-title`, tabindex: "0" }, [
      h("table", { id }, [
        h("thead", {}, [h("tr", {}, columns.map((c) => h("th", { scope: "col", class: c.kind }, [c.title])))]),
        h("tbody", {}, rows)
      ])
    ]),
    ...after
  ])

/**
 * The status page for one document: a complete HTML5 document, everything rendered on the server
 * (it needs no JavaScript to show it), loading only `/assets/status.css` and `/assets/status.js`.
 * Every string of the document is escaped. No inline script or style, no external URL.
 * @since 0.1.0
 * @category rendering
 */
export const page = (document: StatusDocument): string => {
  const s = sections(document)
  const header = h("header", {}, [
    h("div", { class: "heading" }, [
      h("h1", {}, ["city daemon status"]),
      h("span", { id: "live", role: "status", "data-live": "off" }, ["not live"])
    ]),
    h("dl", { id: "summary" }, s.summary)
  ])
  const main = h("main", {}, [
    tableSection("plugins", "Plugins", pluginColumns, s.plugins),
    tableSection("skipped", "Skipped", skippedColumns, s.skipped, [
      h("h3", { id: "missing-title" }, ["Missing"]),
      h("p", { class: "hint" }, ["Enabled names no root provides."]),
      h("ul", { id: "missing", "aria-labelledby": "missing-title" }, s.missing)
    ]),
    tableSection("endpoints", "Endpoints", endpointColumns, s.endpoints),
    h("section", { "aria-labelledby": "log-title" }, [
      h("h2", { id: "log-title" }, ["Live log"]),
      h("ol", { id: "log", "aria-labelledby": "log-title" }, s.log)
    ])
  ])
  const footer = h("footer", {}, [
    h("noscript", {}, ["This page updates itself with JavaScript on; without it, reload to see changes."])
  ])
  return [
    "<!doctype html>",
    "<html lang=\"en\">",
    "<head>",
    "<meta charset=\"utf-8\">",
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
    "<meta name=\"color-scheme\" content=\"light dark\">",
    "<title>city daemon status</title>",
    "<link rel=\"stylesheet\" href=\"/assets/status.css\">",
    "<script src=\"/assets/status.js\" defer></script>",
    "</head>",
    "<body>",
    toHtml(header),
    toHtml(main),
    toHtml(footer),
    "</body>",
    "</html>",
    ""
  ].join("\n")
}

// ---------------------------------------------------------------------------------------------
// The stylesheet.
// ---------------------------------------------------------------------------------------------

/**
 * `/assets/status.css`: light and dark (`prefers-color-scheme`), system fonts only, usable at
 * 400 px wide (tables scroll inside their own box, long strings wrap anywhere). Colours come with
 * a text label, never alone: green `ready` / `applied` / `ok`, amber `initializing`, `disposing`,
 * `pending`, red `error`, `failing`, `failed`, `timeout`, `not-executable`.
 * @since 0.1.0
 * @category rendering
 */
export const stylesheet: string = `:root {
  color-scheme: light dark;
  --bg: #ffffff;
  --fg: #1f2328;
  --muted: #59636e;
  --line: #d1d9e0;
  --head: #f6f8fa;
  --focus: #0969da;
  --ok-bg: #dafbe1;
  --ok-fg: #116329;
  --ok-line: #4ac26b;
  --warn-bg: #fff8c5;
  --warn-fg: #6b4400;
  --warn-line: #d4a72c;
  --bad-bg: #ffebe9;
  --bad-fg: #a40e26;
  --bad-line: #ff8182;
  --sans: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  --mono: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "Liberation Mono", monospace;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0d1117;
    --fg: #e6edf3;
    --muted: #9198a1;
    --line: #3d444d;
    --head: #151b23;
    --focus: #4493f8;
    --ok-bg: #0f2a1b;
    --ok-fg: #7ee2a0;
    --ok-line: #238636;
    --warn-bg: #2b2111;
    --warn-fg: #f0c45a;
    --warn-line: #9e6a03;
    --bad-bg: #2d1519;
    --bad-fg: #ffa198;
    --bad-line: #da3633;
  }
}
*, *::before, *::after { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }
body {
  margin: 0;
  padding: 1rem;
  background: var(--bg);
  color: var(--fg);
  font-family: var(--sans);
  font-size: 15px;
  line-height: 1.45;
  overflow-wrap: anywhere;
}
header, main, footer { max-width: 90rem; margin: 0 auto; min-width: 0; }
h1 { font-size: 1.35rem; margin: 0; }
h2 { font-size: 1.1rem; margin: 1.5rem 0 .5rem; }
h3 { font-size: 1rem; margin: 1rem 0 .25rem; }
.heading { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1rem; }
#live {
  display: inline-block;
  padding: 0 .6em;
  border: 1px solid var(--line);
  border-radius: 1em;
  font-size: .85rem;
  font-weight: 600;
  color: var(--muted);
}
#live[data-live="on"] { background: var(--ok-bg); color: var(--ok-fg); border-color: var(--ok-line); }
#live[data-live="retry"] { background: var(--warn-bg); color: var(--warn-fg); border-color: var(--warn-line); }
#summary { display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; margin: .75rem 0 0; }
#summary > div { min-width: 0; }
#summary dt { color: var(--muted); font-size: .8rem; }
#summary dd { margin: 0; font-variant-numeric: tabular-nums; }
.hint { color: var(--muted); margin: 0 0 .25rem; font-size: .9rem; }
.scroll {
  max-width: 100%;
  overflow-x: auto;
  border: 1px solid var(--line);
  border-radius: 6px;
}
.scroll:focus-visible { outline: 2px solid var(--focus); outline-offset: 2px; }
table { border-collapse: collapse; width: 100%; }
th, td {
  text-align: left;
  vertical-align: top;
  padding: .4rem .6rem;
  border-bottom: 1px solid var(--line);
  overflow-wrap: break-word;
}
tbody tr:last-child > td { border-bottom: 0; }
thead th { background: var(--head); font-weight: 600; font-size: .85rem; white-space: nowrap; }
td.code, td.code * { font-family: var(--mono); font-size: .88em; }
td.number, th.number { text-align: right; font-variant-numeric: tabular-nums; }
td.time, td.badge { white-space: nowrap; }
pre {
  margin: 0;
  min-width: 14ch;
  max-height: 12em;
  overflow: auto;
  font-family: var(--mono);
  font-size: .85em;
  white-space: pre-wrap;
  overflow-wrap: anywhere;
}
time { font-variant-numeric: tabular-nums; }
.nil { color: var(--muted); }
tr.none > td, li.none { color: var(--muted); font-style: italic; }
span.badge {
  display: inline-block;
  padding: 0 .5em;
  border: 1px solid var(--line);
  border-radius: 1em;
  font-size: .85em;
  font-weight: 600;
  white-space: nowrap;
}
.status-ready, .standing-applied, .state-ok {
  background: var(--ok-bg); color: var(--ok-fg); border-color: var(--ok-line);
}
.status-initializing, .status-disposing, .standing-pending {
  background: var(--warn-bg); color: var(--warn-fg); border-color: var(--warn-line);
}
.status-error, .standing-failing, .state-failed, .state-timeout, .state-not-executable {
  background: var(--bad-bg); color: var(--bad-fg); border-color: var(--bad-line);
}
.parts { display: flex; flex-wrap: wrap; align-items: baseline; gap: .2rem .75rem; min-width: 16ch; }
.parts > pre { flex: 1 1 100%; }
.label { color: var(--muted); font-size: .85em; margin-right: .35em; }
.owed-kind { font-weight: 600; }
#missing { margin: 0; padding-left: 1.25rem; font-family: var(--mono); font-size: .9em; }
#log { list-style: none; margin: 0; padding: 0; border: 1px solid var(--line); border-radius: 6px; }
#log > li {
  display: flex;
  flex-wrap: wrap;
  align-items: baseline;
  gap: .1rem .75rem;
  padding: .3rem .6rem;
  border-bottom: 1px solid var(--line);
}
#log > li:last-child { border-bottom: 0; }
#log time { color: var(--muted); font-size: .85em; }
#log .kind { font-size: .8em; font-weight: 600; text-transform: uppercase; color: var(--muted); }
#log .text { flex: 1 1 20ch; min-width: 0; }
footer { margin-top: 1.5rem; color: var(--muted); font-size: .85rem; }
@media (max-width: 600px) {
  body { padding: .5rem; font-size: 14px; }
  th, td { padding: .3rem .4rem; }
  #summary { gap: .4rem 1rem; }
}
`

// ---------------------------------------------------------------------------------------------
// The script: the browser's twin of the builders above, and the event handling.
// ---------------------------------------------------------------------------------------------

/** JSON with everything past ASCII as `\uXXXX`, so the script is ASCII whatever its charset. */
const asciiJson = (value: unknown): string =>
  JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

/**
 * `/assets/status.js`: plain ES2017, no modules, no build step. Opens
 * `new EventSource("/api/events")`, keeps `#live` up to date and applies every `StatusEvent` to
 * the page, building nodes with `createElement`, `setAttribute` and `textContent` only. Rows it
 * builds are the ones `page` renders, attribute for attribute. Exposes `window.cityStatus`:
 * `apply(event)` (one decoded event, as the server sends it), `sections(document)` (the trees of
 * every container) and `state()` (the document as the page holds it).
 * @since 0.1.0
 * @category rendering
 */
export const script: string = String.raw`(function () {
  "use strict";

  var C = ${asciiJson(shared)};
  var state = null;

  // The builders: each is the twin of the server's of the same name (src/services/status/StatusPage.ts).

  function h(tag, attrs, children) {
    return { tag: tag, attrs: attrs || {}, children: children || [] };
  }

  function displayTime(iso) {
    return String(iso).replace(/^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)(?:\.\d+)?Z$/, "$1 $2 UTC");
  }

  function duration(ms) {
    if (!(ms >= 1000)) return Math.round(ms) + " ms";
    var s = Math.floor(ms / 1000);
    var d = Math.floor(s / 86400);
    var hh = Math.floor((s % 86400) / 3600);
    var m = Math.floor((s % 3600) / 60);
    var parts = [];
    if (d > 0) parts.push(d + "d");
    if (d > 0 || hh > 0) parts.push(hh + "h");
    if (d > 0 || hh > 0 || m > 0) parts.push(m + "m");
    parts.push((s % 60) + "s");
    return parts.join(" ");
  }

  function nil() { return h("span", { "class": "nil" }, [C.dash]); }
  function time(iso) { return h("time", { datetime: iso }, [displayTime(iso)]); }
  function badge(kind, value) { return h("span", { "class": "badge " + kind + "-" + value }, [value]); }
  function field(label, value) {
    return h("span", { "class": "field" }, [h("span", { "class": "label" }, [label]), value]);
  }

  function lastCall(last) {
    var parts = [badge("state", last.state), field("occasion", last.occasion), field("at", time(last.at))];
    if (last.exit !== null && last.exit !== undefined) parts.push(field("exit", String(last.exit)));
    if (last.detail !== null && last.detail !== undefined) parts.push(h("pre", { "class": "detail" }, [last.detail]));
    return h("div", { "class": "parts" }, parts);
  }

  function owedWork(owed) {
    var what = owed.reload && owed.removal ? "reload + removal"
      : owed.reload ? "reload"
      : owed.removal ? "removal"
      : "owed";
    var parts = [
      h("span", { "class": "owed-kind" }, [what]),
      field("reason", owed.reason),
      field("attempts", String(owed.attempts))
    ];
    if (owed.next_attempt_at !== null && owed.next_attempt_at !== undefined) {
      parts.push(field("next attempt", time(owed.next_attempt_at)));
    }
    if (owed.last_error !== null && owed.last_error !== undefined) {
      parts.push(h("pre", { "class": "detail" }, [owed.last_error]));
    }
    return h("div", { "class": "parts" }, parts);
  }

  function content(column, value) {
    if (value === null || value === undefined) return [nil()];
    switch (column.kind) {
      case "number": return [String(value)];
      case "bytes": return [(Number(value) / 1048576).toFixed(1) + " MiB"];
      case "time": return [time(String(value))];
      case "pre": return [h("pre", {}, [String(value)])];
      case "badge": return [badge(column.field, String(value))];
      case "last": return [lastCall(value)];
      case "owed": return [owedWork(value)];
      default: return [String(value)];
    }
  }

  function cells(columns, row) {
    return columns.map(function (c) { return h("td", { "class": c.kind }, content(c, row[c.field])); });
  }

  function endpointKey(e) {
    return JSON.stringify([e.capability === null || e.capability === undefined ? "" : e.capability, e.peer, e.runtime]);
  }

  function pluginRow(p) {
    return h("tr", { "data-plugin": p.name, "data-status": p.status }, cells(C.columns.plugins, p));
  }
  function skippedRow(s) { return h("tr", { "data-skipped": s.name }, cells(C.columns.skipped, s)); }
  function endpointRow(e) {
    return h("tr", { "data-endpoint": endpointKey(e), "data-standing": e.standing }, cells(C.columns.endpoints, e));
  }
  function noneRow(columns) {
    return h("tr", { "class": "none" }, [h("td", { colspan: String(columns) }, [C.none])]);
  }
  function noneItem() { return h("li", { "class": "none" }, [C.none]); }
  function missingItem(name) { return h("li", { "data-missing": name }, [name]); }
  function logItem(e) {
    return h("li", { "data-kind": e.kind }, [
      time(e.at),
      h("span", { "class": "kind" }, [e.kind]),
      h("span", { "class": "text" }, [e.text])
    ]);
  }

  function item(label, name, value) {
    return h("div", {}, [h("dt", {}, [label]), h("dd", { "data-field": name }, [value])]);
  }

  function summaryItems(g, d, s) {
    return [
      item("pid", "pid", String(d.pid)),
      item("version", "version", d.version),
      item("uptime", "uptime", duration(d.uptime_ms)),
      item("started", "started", time(d.started_at)),
      item("last poll", "last-poll", d.last_poll_at === null || d.last_poll_at === undefined ? nil() : time(d.last_poll_at)),
      item("poll every", "poll", duration(d.poll_ms)),
      item("generation", "generation", String(g.number)),
      item("generation since", "generation-started", time(g.started_at)),
      item("sessions", "sessions", s.count + " (" + s.busy + " busy, " + s.idle + " idle)")
    ];
  }

  function rowsOr(rows, columns) { return rows.length === 0 ? [noneRow(columns)] : rows; }

  function sections(doc) {
    return {
      summary: summaryItems(doc.generation, doc.daemon, doc.sessions),
      plugins: rowsOr(doc.plugins.map(pluginRow), C.columns.plugins.length),
      skipped: rowsOr(doc.skipped.map(skippedRow), C.columns.skipped.length),
      missing: doc.missing.length === 0 ? [noneItem()] : doc.missing.map(missingItem),
      endpoints: rowsOr(doc.endpoints.map(endpointRow), C.columns.endpoints.length),
      log: doc.log.length === 0 ? [noneItem()] : doc.log.slice(-C.logLimit).reverse().map(logItem)
    };
  }

  // The DOM: nodes from trees, with createElement, setAttribute and textContent only.

  function build(node) {
    if (typeof node === "string") return document.createTextNode(node);
    var el = document.createElement(node.tag);
    Object.keys(node.attrs).forEach(function (k) { el.setAttribute(k, node.attrs[k]); });
    if (node.children.length === 1 && typeof node.children[0] === "string") {
      el.textContent = node.children[0];
    } else {
      node.children.forEach(function (c) { el.appendChild(build(c)); });
    }
    return el;
  }

  function container(name) { return document.querySelector(C.containers[name]); }

  function fill(el, nodes) {
    while (el.firstChild) el.removeChild(el.firstChild);
    nodes.forEach(function (n) { el.appendChild(build(n)); });
  }

  function removeNone(el) {
    Array.prototype.slice.call(el.children).forEach(function (c) {
      if (c.classList.contains("none")) el.removeChild(c);
    });
  }

  function childByAttr(el, attr, value) {
    var children = el.children;
    for (var i = 0; i < children.length; i++) {
      if (children[i].getAttribute(attr) === value) return children[i];
    }
    return null;
  }

  function render(name) {
    var el = container(name);
    if (el) fill(el, sections(state)[name]);
  }

  function renderAll() { Object.keys(C.containers).forEach(render); }

  function compareText(a, b) { return a < b ? -1 : a > b ? 1 : 0; }

  function compareEndpoints(a, b) {
    var an = a.capability === null || a.capability === undefined;
    var bn = b.capability === null || b.capability === undefined;
    if (an !== bn) return an ? 1 : -1;
    return compareText(an ? "" : a.capability, bn ? "" : b.capability) ||
      compareText(a.peer, b.peer) ||
      compareText(a.runtime, b.runtime);
  }

  var tables = {
    plugins: {
      attr: "data-plugin",
      key: function (p) { return p.name; },
      row: pluginRow,
      compare: function (a, b) { return compareText(a.name, b.name); }
    },
    endpoints: { attr: "data-endpoint", key: endpointKey, row: endpointRow, compare: compareEndpoints }
  };

  function indexOf(list, key, keyOf) {
    for (var i = 0; i < list.length; i++) if (keyOf(list[i]) === key) return i;
    return -1;
  }

  // Replaces the row of the same key, or inserts it in order.
  function upsert(name, value) {
    var t = tables[name];
    var list = state[name];
    var key = t.key(value);
    var i = indexOf(list, key, t.key);
    if (i >= 0) {
      list[i] = value;
    } else {
      i = 0;
      while (i < list.length && t.compare(list[i], value) < 0) i++;
      list.splice(i, 0, value);
    }
    var el = container(name);
    if (!el) return;
    var row = build(t.row(value));
    var old = childByAttr(el, t.attr, key);
    if (old) {
      el.replaceChild(row, old);
      return;
    }
    removeNone(el);
    var next = i + 1 < list.length ? childByAttr(el, t.attr, t.key(list[i + 1])) : null;
    el.insertBefore(row, next);
  }

  function remove(name, key) {
    var t = tables[name];
    var list = state[name];
    var i = indexOf(list, key, t.key);
    if (i >= 0) list.splice(i, 1);
    var el = container(name);
    if (!el) return;
    var old = childByAttr(el, t.attr, key);
    if (old) el.removeChild(old);
    if (list.length === 0) render(name);
  }

  function prependLog(entry) {
    state.log.push(entry);
    if (state.log.length > C.logLimit) state.log.splice(0, state.log.length - C.logLimit);
    var el = container("log");
    if (!el) return;
    removeNone(el);
    el.insertBefore(build(logItem(entry)), el.firstChild);
    while (el.children.length > C.logLimit) el.removeChild(el.lastElementChild);
  }

  function copy(doc) {
    var d = {};
    Object.keys(doc).forEach(function (k) { d[k] = Array.isArray(doc[k]) ? doc[k].slice() : doc[k]; });
    return d;
  }

  // Applies one event (the decoded data of one server-sent event). Events before the first
  // status are ignored: every connection starts with one.
  function apply(ev) {
    if (ev._tag === "status") {
      state = copy(ev.document);
      renderAll();
      return;
    }
    if (state === null) return;
    switch (ev._tag) {
      case "plugin": upsert("plugins", ev.plugin); break;
      case "plugin-removed": remove("plugins", ev.name); break;
      case "endpoint": upsert("endpoints", ev.endpoint); break;
      case "endpoint-removed": remove("endpoints", endpointKey(ev)); break;
      case "log": prependLog(ev.entry); break;
      case "health":
        state.daemon = ev.daemon;
        state.sessions = ev.sessions;
        render("summary");
        break;
      default: break;
    }
  }

  // The connection.

  function setLive(mode, text) {
    var el = document.getElementById("live");
    if (!el) return;
    el.setAttribute("data-live", mode);
    el.textContent = text;
  }

  function onEvent(e) {
    try {
      apply(JSON.parse(e.data));
    } catch (err) {
      if (typeof console !== "undefined") console.error("city status: cannot apply an event", err);
    }
  }

  var retry = null;

  function connect() {
    var source = new EventSource("/api/events");
    source.onopen = function () { setLive("on", "live"); };
    source.onerror = function () {
      setLive("retry", "reconnecting\u2026");
      // The browser retries by itself unless the connection is closed for good (a refused
      // request): then try again later, from a fresh EventSource.
      if (source.readyState === 2 && retry === null) {
        source.close();
        retry = setTimeout(function () { retry = null; connect(); }, C.retryMs);
      }
    };
    C.tags.forEach(function (tag) { source.addEventListener(tag, onEvent); });
  }

  window.cityStatus = {
    apply: apply,
    sections: sections,
    state: function () { return state; }
  };

  if (typeof EventSource !== "undefined") connect();
})();
`
