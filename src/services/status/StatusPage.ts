/**
 * The status page of `city daemon --http` (docs/status-page.md): the HTML of `GET /`, its
 * stylesheet (`/assets/status.css`) and its script (`/assets/status.js`).
 *
 * The page is complete without JavaScript: `page` renders the whole `StatusDocument` on the
 * server, so the first load (or a reload, with scripts off) shows everything. The script then
 * opens `GET /api/events` (same origin, so the cookie goes along) and keeps the page in step with
 * the `StatusEvent`s: `status` re-renders every section, `plugin` / `plugin-removed` and
 * `endpoint` / `endpoint-removed` replace, insert or remove one row, `log` prepends one entry and
 * `health` updates the header and the fleet. The indicator `#live` says `not live`, `live` or `reconnecting…`.
 *
 * The DOM contract, the same whichever side built it:
 * - `#live[data-live=off|on|retry]`, `dl#summary` (each `dd[data-field]`: `pid`, `version`,
 *   `uptime`, `started`, `last-poll`, `poll`, `generation`, `generation-started`, `sessions`);
 * - `table#plugins > tbody > tr[data-plugin][data-status]`, `table#skipped > tbody > tr[data-skipped]`,
 *   `ul#missing > li[data-missing]`, `table#endpoints > tbody > tr[data-endpoint][data-standing]`
 *   (the key is `endpointKey`), `ol#log > li[data-kind]` (newest first, at most 200);
 * - on a host of a fleet only (`fleet` not null): `p#fleet-about` (this host, how many hosts are
 *   up, when the database was read), `table#fleet > tbody > tr[data-host][data-up]` (this host's
 *   row also `[data-this-host]`), `ul#fleet-invalid`; a host's state is `span.badge.host-up` or
 *   `span.badge.host-down`;
 * - an empty table holds one `tr.none` (`none`), an empty list one `li.none`;
 * - a cell is `td.<kind>` (`text`, `code`, `number`, `time`, `pre`, `badge`, `last`, `owed`, `updown`), a
 *   missing value `span.nil` (`—`), a badge `span.badge.status-<status>`,
 *   `span.badge.standing-<standing>` or `span.badge.state-<state>`, always with its word as text.
 *
 * Decisions:
 * - **Real asset files**, beside this module: `assets/status.css` and `assets/status.mjs` (plain
 *   ES2017 in an ES module that imports nothing, type-checked against the DOM by its test; its
 *   types for the server are `assets/status.d.mts`). They reach
 *   the running program in one way in all three forms: read at request time through `TextFile`,
 *   from `new URL("./assets/…", import.meta.url)`. Under tsx that is `src/services/status/assets/`;
 *   in the compiled package `dist/services/status/assets/`; in the bundle `dist/city.cjs`, whose
 *   `import.meta.url` is the bundle's, `dist/assets/`. `scripts/bundle.mjs` (run by `npm run
 *   build` after `tsc`, and in a checkout whenever the bundle is stale) copies them to both places
 *   in `dist/`, which the package ships whole.
 * - **The rows are written once**, in the script: the server imports `sections` and `columns` from
 *   it and serializes the trees with every string escaped (`escapeHtml`); the browser builds the
 *   same trees into nodes with `createElement`, `setAttribute` and `textContent` only, never markup.
 *   The page loads it as `<script type="module">` (deferred, like every module script).
 * - Nothing inline: no `<script>` without `src`, no `style` attribute, no external URL, so the
 *   page runs under the server's strict Content-Security-Policy (`default-src 'none'`,
 *   `script-src 'self'`, `style-src 'self'`, `connect-src 'self'`).
 * - Times are shown as the document gives them (ISO 8601, UTC, trimmed to the second) in
 *   `<time datetime>`, the same text on both sides whatever the browser's locale.
 * - The script exposes `window.cityStatus` (`apply(event)`, `sections(document)`, `state()`), so a
 *   browser test can drive the page without a server.
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import { fileURLToPath } from "node:url"
import type { FileRefused } from "../../schema/FileErrors.ts"
import type { StatusDocument } from "../../schema/StatusDocument.ts"
import * as TextFile from "../files/TextFile.ts"
import { type Column, columns, sections, type Tree } from "./assets/status.mjs"

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

const h = (tag: string, attrs: Readonly<Record<string, string>> = {}, children: ReadonlyArray<Tree | string> = []): Tree => ({
  tag,
  attrs,
  children
})

const toHtml = (node: Tree | string): string => {
  if (typeof node === "string") return escapeHtml(node)
  const attrs = Object.entries(node.attrs).map(([k, v]) => ` ${k}="${escapeHtml(v)}"`).join("")
  return `<${node.tag}${attrs}>${node.children.map(toHtml).join("")}</${node.tag}>`
}

const tableSection = (
  id: string,
  title: string,
  columns: ReadonlyArray<Column<string>>,
  rows: ReadonlyArray<Tree>,
  after: ReadonlyArray<Tree> = [],
  before: ReadonlyArray<Tree> = []
): Tree =>
  h("section", { "aria-labelledby": `${id}-title` }, [
    h("h2", { id: `${id}-title` }, [title]),
    ...before,
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
 * @category utils
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
  const fleet = document.fleet === null
    ? []
    : [tableSection("fleet", "Fleet", columns.fleet, s.fleet, [
      h("h3", { id: "fleet-invalid-title" }, ["Unreadable rows"]),
      h("p", { class: "hint" }, ["Rows of the fleet's database that could not be read: the row, the field, the rule."]),
      h("ul", { id: "fleet-invalid", "aria-labelledby": "fleet-invalid-title" }, s["fleet-invalid"])
    ], [h("p", { id: "fleet-about", class: "hint" }, s["fleet-about"])])]
  const main = h("main", {}, [
    ...fleet,
    tableSection("plugins", "Plugins", columns.plugins, s.plugins),
    tableSection("skipped", "Skipped", columns.skipped, s.skipped, [
      h("h3", { id: "missing-title" }, ["Missing"]),
      h("p", { class: "hint" }, ["Enabled names no root provides."]),
      h("ul", { id: "missing", "aria-labelledby": "missing-title" }, s.missing)
    ]),
    tableSection("endpoints", "Endpoints", columns.endpoints, s.endpoints),
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
    "<script type=\"module\" src=\"/assets/status.js\"></script>",
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

/**
 * A file the page loads: where the server serves it, the file it reads, and its content type.
 * @since 0.1.0
 * @category models
 */
export interface Asset {
  /** The path the page asks for. */
  readonly path: `/${string}`
  /** The file, beside this module (see the module comment). */
  readonly file: string
  readonly contentType: string
}

/**
 * `/assets/status.css` (`assets/status.css`): light and dark (`prefers-color-scheme`), system fonts
 * only, usable at 400 px wide (tables scroll inside their own box, long strings wrap anywhere).
 * Colours come with a text label, never alone: green `ready` / `applied` / `ok`, amber
 * `initializing`, `disposing`, `pending`, red `error`, `failing`, `failed`, `timeout`,
 * `not-executable`.
 * @since 0.1.0
 * @category utils
 */
export const stylesheet: Asset = {
  path: "/assets/status.css",
  file: fileURLToPath(new URL("./assets/status.css", import.meta.url)),
  contentType: "text/css; charset=utf-8"
}

/**
 * `/assets/status.js` (`assets/status.mjs`): the rows' builders, and the event handling that keeps
 * the page live (see the file's own comment).
 * @since 0.1.0
 * @category utils
 */
export const script: Asset = {
  path: "/assets/status.js",
  file: fileURLToPath(new URL("./assets/status.mjs", import.meta.url)),
  contentType: "text/javascript; charset=utf-8"
}

/**
 * The text of an asset, or `None` when the file is missing (a broken install).
 * @since 0.1.0
 * @category utils
 */
export const read = (asset: Asset): Effect.Effect<Option.Option<string>, FileRefused, FileSystem.FileSystem> =>
  TextFile.read(asset.file, TextFile.kinds.pageAsset)
