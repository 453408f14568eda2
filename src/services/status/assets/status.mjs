/**
 * `/assets/status.js`, the status page's script (docs/status-page.md), and the one place the page's
 * rows are written: the server imports this module and renders `sections(document)` as HTML
 * (`StatusPage.page`), the browser loads it as `<script type="module">` and builds the same trees
 * into nodes on every event. Plain ES2017 in an ES module that imports nothing, ASCII only, no
 * build step: the file is served as it is.
 *
 * A section is a list of trees (`{ tag, attrs, children }`, a child a tree or a string); the DOM is
 * built from them with `createElement`, `setAttribute` and `textContent` only, never markup.
 * `start(window, document, EventSource)` opens `new EventSource("/api/events")`, keeps `#live` up
 * to date, applies every `StatusEvent` to the page and exposes `window.cityStatus`
 * (`apply(event)`, `sections(document)`, `state()`). In a browser it runs on load; elsewhere (the
 * server, a test) nothing runs until it is called.
 * @since 0.1.0
 */

var dash = "\u2014";
var none = "none";

/**
 * The newest log entries a page shows.
 * @since 0.1.0
 * @category constants
 */
export var logLimit = 200;

var retryMs = 5000;

/**
 * Every event the script listens to (a test holds it equal to the `StatusEvent` union).
 * @since 0.1.0
 * @category constants
 */
export var tags = ["status", "plugin", "plugin-removed", "endpoint", "endpoint-removed", "log", "health"];

/**
 * The tables' columns: a title, the row's field it shows (for a badge, also the badge's class
 * prefix, `status-ready`) and how the cell shows it (also the cell's class).
 * @since 0.1.0
 * @category constants
 */
export var columns = {
  plugins: [
    { title: "Name", field: "name", kind: "code" },
    { title: "Status", field: "status", kind: "badge" },
    { title: "Since", field: "updated_at", kind: "time" },
    { title: "Version", field: "version", kind: "text" },
    // One column for where it came from: `instance:<folder>`, `bundled:<folder>` or `code` (its
    // root and folder are in /api/status too, apart).
    { title: "Source", field: "source", kind: "code" },
    { title: "Isolation", field: "isolation", kind: "text" },
    { title: "Heap", field: "heap_used_bytes", kind: "bytes" },
    { title: "Attempts", field: "attempts", kind: "number" },
    { title: "Last error", field: "last_error", kind: "pre" }
  ],
  skipped: [
    { title: "Name", field: "name", kind: "code" },
    { title: "Root", field: "root", kind: "text" },
    { title: "Folder", field: "folder", kind: "code" },
    { title: "Kind", field: "kind", kind: "code" },
    { title: "Reason", field: "reason", kind: "pre" }
  ],
  endpoints: [
    { title: "Capability", field: "capability", kind: "code" },
    { title: "Peer", field: "peer", kind: "code" },
    { title: "Runtime", field: "runtime", kind: "code" },
    { title: "Standing", field: "standing", kind: "badge" },
    { title: "Last call", field: "last", kind: "last" },
    { title: "Owed", field: "owed", kind: "owed" }
  ],
  fleet: [
    { title: "Host", field: "host", kind: "code" },
    { title: "State", field: "up", kind: "updown" },
    { title: "Seen", field: "seen_at", kind: "time" },
    { title: "Started", field: "started_at", kind: "time" },
    { title: "Peers", field: "peers", kind: "number" },
    { title: "Endpoints", field: "endpoints", kind: "number" },
    { title: "Owed reloads", field: "owed_reloads", kind: "number" },
    { title: "Owed removals", field: "owed_removals", kind: "number" }
  ]
};

/** Where each part of `sections` goes. */
var containers = {
  summary: "#summary",
  plugins: "#plugins > tbody",
  skipped: "#skipped > tbody",
  missing: "#missing",
  endpoints: "#endpoints > tbody",
  log: "#log",
  fleet: "#fleet > tbody",
  "fleet-about": "#fleet-about",
  "fleet-invalid": "#fleet-invalid"
};

// The builders.

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

function nil() { return h("span", { "class": "nil" }, [dash]); }
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
    case "updown": return [badge("host", value ? "up" : "down")];
    default: return [String(value)];
  }
}

function cells(columns, row) {
  return columns.map(function (c) { return h("td", { "class": c.kind }, content(c, row[c.field])); });
}

// `StatusDocument.endpointKey`, as `data-endpoint` carries it (a test holds the two equal).
function endpointKey(e) {
  return JSON.stringify([e.capability === null || e.capability === undefined ? "" : e.capability, e.peer, e.runtime]);
}

function pluginRow(p) {
  return h("tr", { "data-plugin": p.name, "data-status": p.status }, cells(columns.plugins, p));
}
function skippedRow(s) { return h("tr", { "data-skipped": s.name }, cells(columns.skipped, s)); }
function endpointRow(e) {
  return h("tr", { "data-endpoint": endpointKey(e), "data-standing": e.standing }, cells(columns.endpoints, e));
}
function fleetRow(self) {
  return function (f) {
    var attrs = { "data-host": f.host, "data-up": String(f.up) };
    if (f.host === self) attrs["data-this-host"] = "";
    return h("tr", attrs, cells(columns.fleet, f));
  };
}
function invalidItem(line) { return h("li", {}, [line]); }
function fleetAbout(fleet) {
  var up = fleet.hosts.filter(function (f) { return f.up; }).length;
  return [
    "This daemon is host ",
    h("code", {}, [fleet.host]),
    " of a fleet of " + fleet.hosts.length + (fleet.hosts.length === 1 ? " host" : " hosts") + ", " + up + " up; ",
    fleet.read_at === null || fleet.read_at === undefined
      ? "its database not read yet."
      : h("span", {}, ["read from its database at ", time(fleet.read_at), "."])
  ];
}
function noneRow(columns) {
  return h("tr", { "class": "none" }, [h("td", { colspan: String(columns) }, [none])]);
}
function noneItem() { return h("li", { "class": "none" }, [none]); }
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

/**
 * The trees of every container (`#summary`, the tables' bodies, `#missing`, `#log`, and on a host
 * of a fleet `#fleet-about` and `#fleet-invalid`) for one document, as the server sends it: the
 * page's rows and items, on the server and in the browser. Without a fleet its parts are empty
 * and the page has no fleet section.
 * @since 0.1.0
 * @category utils
 */
export function sections(doc) {
  var fleet = doc.fleet === null || doc.fleet === undefined ? null : doc.fleet;
  return {
    fleet: fleet === null ? [] : rowsOr(fleet.hosts.map(fleetRow(fleet.host)), columns.fleet.length),
    "fleet-about": fleet === null ? [] : fleetAbout(fleet),
    "fleet-invalid": fleet === null ? [] : fleet.invalid.length === 0 ? [noneItem()] : fleet.invalid.map(invalidItem),
    summary: summaryItems(doc.generation, doc.daemon, doc.sessions),
    plugins: rowsOr(doc.plugins.map(pluginRow), columns.plugins.length),
    skipped: rowsOr(doc.skipped.map(skippedRow), columns.skipped.length),
    missing: doc.missing.length === 0 ? [noneItem()] : doc.missing.map(missingItem),
    endpoints: rowsOr(doc.endpoints.map(endpointRow), columns.endpoints.length),
    log: doc.log.length === 0 ? [noneItem()] : doc.log.slice(-logLimit).reverse().map(logItem)
  };
}

/**
 * Runs the page in `window`: exposes `window.cityStatus` and, when there is an `EventSource`,
 * connects to `/api/events` and applies every event to `document`. A browser calls it on load.
 * @since 0.1.0
 * @category utils
 * @param {any} window the browser's `window`, or a test's stand-in
 * @param {Document} document
 * @param {typeof EventSource | undefined} EventSource
 */
export function start(window, document, EventSource) {
  var state = null;

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

  function container(name) { return document.querySelector(containers[name]); }

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

  function renderAll() { Object.keys(containers).forEach(render); }

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
    if (state.log.length > logLimit) state.log.splice(0, state.log.length - logLimit);
    var el = container("log");
    if (!el) return;
    removeNone(el);
    el.insertBefore(build(logItem(entry)), el.firstChild);
    while (el.children.length > logLimit) el.removeChild(el.lastElementChild);
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
        if (ev.fleet !== undefined) {
          state.fleet = ev.fleet;
          render("fleet");
          render("fleet-about");
          render("fleet-invalid");
        }
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
    if (typeof EventSource === "undefined") return;
    var source = new EventSource("/api/events");
    source.onopen = function () { setLive("on", "live"); };
    source.onerror = function () {
      setLive("retry", "reconnecting\u2026");
      // The browser retries by itself unless the connection is closed for good (a refused
      // request): then try again later, from a fresh EventSource.
      if (source.readyState === 2 && retry === null) {
        source.close();
        retry = setTimeout(function () { retry = null; connect(); }, retryMs);
      }
    };
    tags.forEach(function (tag) { source.addEventListener(tag, onEvent); });
  }

  window.cityStatus = {
    apply: apply,
    sections: sections,
    state: function () { return state; }
  };

  if (typeof EventSource !== "undefined") connect();
}

if (typeof window !== "undefined" && typeof document !== "undefined") {
  start(window, document, typeof EventSource === "undefined" ? undefined : EventSource);
}
