/**
 * The live-application parts of the `city` CLI (docs/capability-plugin-lifecycle.md, "Applying surfaces to a live endpoint"): whether a daemon is running to carry
 * out pending work, the owed reloads and removals (`city capability list`, `city status`), and
 * `city status` itself, which also shows the plugin generation the daemon serves (its number, how
 * many loaded and were skipped, each skipped name with its reason; docs/plugin-loader-lifecycle.md:
 * "A skipped plugin is logged as plugin skipped: <name>: <reason>") and a restart request not yet
 * applied (RestartRequests.ts). An endpoint whose owed work failed shows its backoff
 * (docs/live-application.md, "Failed owed work: the backoff"): `failing (attempt N, next at <ISO
 * time>)` and the last reason on one line; in `--json`, `attempts`, `next_attempt_at`, `last_error`.
 * @since 0.1.0
 */
import * as Options from "@effect/cli/Options"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { NoStatusPage, type OwedRecord } from "../schema/Live.ts"
import { identityOf } from "../schema/Outcome.ts"
import { Runtimes } from "../services/capabilities/Runtimes.ts"
import { Peers } from "../services/capabilities/Peers.ts"
import { StateRoot } from "../services/capabilities/StateRoot.ts"
import * as DaemonLock from "../services/live/DaemonLock.ts"
import { makeRefs } from "../services/live/Endpoints.ts"
import { LiveJoints } from "../services/live/LiveJoints.ts"
import { isOwed, Reloads } from "../services/live/Reloads.ts"
import * as RestartRequests from "../services/loader/RestartRequests.ts"
import * as StatusAddress from "../services/status/StatusAddress.ts"
import { RuntimeNotWired } from "../schema/CapabilityErrors.ts"
import * as Arguments from "./arguments.ts"
import * as Json from "./jsonOutput.ts"
import * as Opt from "./options.ts"
import * as Out from "./output.ts"
import { runningGeneration } from "./plugins.ts"
import { verb } from "./verbs.ts"

/** `{ running, pid }` of this root's daemon. */
export const daemonInfo = Effect.map(DaemonLock.running, (r) => ({
  running: Option.isSome(r),
  pid: Option.getOrNull(Option.map(r, (x) => x.pid))
}))

/** The sentence a verb prints when it leaves `pending` work. */
export const pendingSentence = (count: number, daemon: { readonly running: boolean; readonly pid: number | null }) =>
  `${count} endpoint(s) pending: ` + (daemon.running
    ? `the city daemon (pid ${daemon.pid}) applies them after their current Turn`
    : "no city daemon is running on this root to carry them out; the work is recorded and done when `city daemon` starts")

/** Prints the pending sentence (stderr) when `count > 0`. */
export const notePending = (count: number, json: boolean) =>
  Effect.gen(function*() {
    const daemon = yield* daemonInfo
    if (count > 0 && !json) yield* Console.log(pendingSentence(count, daemon))
    return daemon
  })

const owedJson = (r: OwedRecord): typeof Json.Owed.Type => ({
  ...Json.endpointJson(r.runtime, r.personality),
  reload: isOwed(r) ? { requested: r.requested, applied: r.applied, reason: r.reason } : null,
  removal: r.removal ?? null,
  last_error: r.last_error ?? null,
  attempts: r.attempts ?? 0,
  next_attempt_at: r.next_attempt_at ?? null,
  updated_at: r.updated_at
})

/** `failing (attempt N, next at <time>)` for work whose last attempt failed, else empty. */
const failing = (r: OwedRecord) =>
  r.attempts === undefined || r.attempts === 0 ? "" : `failing (attempt ${r.attempts}, next at ${r.next_attempt_at ?? "now"})`

/** Owed work, as JSON and as table rows. */
export const owedWork = Effect.gen(function*() {
  const reloads = yield* Reloads
  const records = yield* reloads.list
  const invalid = yield* reloads.invalid
  const daemon = yield* daemonInfo
  return {
    daemon,
    json: records.map(owedJson),
    invalid,
    invalidJson: invalid.map((i): typeof Json.Invalid.Type => ({
      kind: "InvalidOwedRecord",
      file: i.file,
      field: "",
      rule: i.rule,
      message: `invalid owed-work record ${i.file}: ${i.rule}`
    })),
    rows: records.map((r) => [
      identityOf(r.runtime, r.personality),
      isOwed(r) ? `reload (${r.applied}/${r.requested})` : "",
      r.removal === undefined ? "" : "removal",
      failing(r),
      r.last_error === undefined ? "" : Out.oneLine(r.last_error, 200),
      r.updated_at
    ])
  }
})

/** Each invalid owed-work record, loudly on stderr. */
export const warnOwed = (owed: Effect.Effect.Success<typeof owedWork>) =>
  Effect.forEach(owed.invalidJson, (i) => Console.error(Out.safe`city: warning: ${i.message}`), { discard: true })

/** Prints the owed-work section of a human-readable listing. */
export const printOwed = (owed: Effect.Effect.Success<typeof owedWork>) =>
  Effect.gen(function*() {
    yield* warnOwed(owed)
    yield* Console.log(
      owed.rows.length === 0
        ? "no owed reloads or removals"
        : Out.table(["OWED ENDPOINT", "RELOAD", "REMOVAL", "RETRY", "LAST ERROR", "UPDATED"], owed.rows)
    )
    yield* Console.log(owed.daemon.running ? `daemon: running (pid ${owed.daemon.pid})` : "daemon: not running")
  })

/** The plugin part of `city status`: the daemon's running generation and a pending restart request. */
const pluginStatus = Effect.gen(function*() {
  const running = yield* runningGeneration
  const restart = yield* Effect.flatMap(RestartRequests.RestartRequests, (r) => r.get).pipe(
    Effect.provide(RestartRequests.layer)
  )
  const generation = Option.map(running.generation, (g) => ({
    number: g.generation,
    started_at: g.started_at,
    loaded: g.report.loaded.length,
    skipped: g.report.skipped.map((s) => ({ name: s.name, root: s.root, kind: s.kind, reason: s.reason })),
    missing: g.report.missing
  }))
  const pending = Option.filter(restart, RestartRequests.isOwed)
  const lines: Array<string> = []
  if (Option.isSome(generation)) {
    const g = generation.value
    lines.push(Out.safe`plugins: generation ${g.number} (since ${g.started_at}): ${g.loaded} loaded, ${g.skipped.length} skipped`)
    for (const s of g.skipped) lines.push(Out.safe`  skipped ${s.name}: ${Out.oneLine(s.reason, 300)}`)
    if (g.missing.length > 0) lines.push(Out.safe`  enabled but provided by no root: ${g.missing.join(", ")}`)
  } else {
    lines.push(
      Option.isSome(running.pid)
        ? "plugins: the daemon has published no plugin generation yet"
        : "plugins: no daemon runs, so no plugin generation is running"
    )
  }
  if (Option.isSome(pending)) {
    const r = pending.value
    lines.push(
      `plugins: restart requested (${r.applied}/${r.requested} applied)` +
        (r.last_error === undefined ? "" : `, last attempt failed: ${Out.oneLine(r.last_error.reason, 300)}`)
    )
  }
  return {
    lines,
    json: {
      generation: Option.getOrNull(generation),
      restart: Option.getOrNull(Option.map(restart, (r) => ({
        requested: r.requested,
        applied: r.applied,
        pending: RestartRequests.isOwed(r),
        last_error: r.last_error ?? null
      })))
    }
  }
})

const url = Opt.flag("url", "Print the address of the status page the daemon serves (exit 1 when none)")

export const status = verb(
  "status",
  "Owed reloads and removals, whether a daemon is running to carry them out, its plugin generation and status page",
  { ...Opt.readOptions, url },
  (o) =>
    Out.runVerb(
      "status",
      o.json,
      Effect.gen(function*() {
        yield* Arguments.existingRoot
        const page = yield* StatusAddress.current
        if (o.url && Option.isNone(page)) {
          return yield* new NoStatusPage({ root: (yield* StateRoot).root, daemon: (yield* daemonInfo).running })
        }
        if (o.url && !o.json) return yield* Console.log(Option.getOrThrow(page))
        const owed = yield* owedWork
        const plugins = yield* pluginStatus
        if (o.json) {
          yield* warnOwed(owed)
          return yield* Out.printDocument("status", {
            ok: true,
            owed: owed.json,
            daemon: owed.daemon,
            plugins: plugins.json,
            page: Option.getOrNull(page),
            invalid: owed.invalidJson
          })
        }
        yield* printOwed(owed)
        for (const line of plugins.lines) yield* Console.log(line)
        if (Option.isSome(page)) yield* Console.log(`status page: ${page.value}`)
      }).pipe(Effect.provide(Opt.live(o.root)))
    ),
  ["city status", "city status --json", "city status --url"]
)

const runtimes = Opt.described(
  Options.text("runtime").pipe(Options.withPseudoName("name"), Options.withDescription("Only this runtime (repeatable)"), Options.repeated),
  { kind: "flag", usage: "--runtime <name>", description: "Only this runtime; repeat for several (default: every agent runtime)" }
)

/**
 * `city reload <personality> [--runtime <r>]...`: requests a reload explicitly, for writers of
 * host-global files (`~/.codex/config.toml`, `~/.claude.json`), which are not fingerprinted
 * (spec: "the core verbs that write it ... request the reload explicitly and print
 * `runtime=applied|pending`"). Without `--runtime`, every agent runtime of the peer. Exit 1 when
 * an endpoint is foreign or failed.
 */
export const reload = verb(
  "reload",
  "Request a reload of a peer's live endpoints (after writing a host-global file)",
  { ...Opt.readOptions, personality: Opt.text("personality", "The peer's name"), runtime: runtimes },
  (o) =>
    Out.runVerb(
      "reload",
      o.json,
      Effect.gen(function*() {
        // The names first: nothing is read for an argument that is not one.
        yield* Arguments.personality(o.personality)
        yield* Arguments.runtimeNames(o.runtime)
        yield* Effect.gen(function*() {
          yield* Arguments.existingRoot
          yield* Arguments.knownRuntimes(o.runtime)
          const host = yield* Runtimes
          const peers = yield* Peers
          const refs = makeRefs(host, peers, yield* StateRoot)
          const peer = yield* peers.get(o.personality)
          const undeclared = o.runtime.find((r) => !peer.runtimes.includes(r))
          if (undeclared !== undefined) return yield* new RuntimeNotWired({ personality: peer.personality, runtime: undeclared })
          const chosen = peer.runtimes.filter((r) => host.isAgent(r) && (o.runtime.length === 0 || o.runtime.includes(r)))
          const targets = chosen.map((r) => refs.of(peer, r))
          const applied = yield* (yield* LiveJoints).requestReload(targets, "requested by city reload")
          const daemon = yield* daemonInfo
          const failed = applied.filter((a) => a.application === "foreign" || a.application === "failed")
          if (o.json) {
            const runtimeOf = new Map(targets.map((t) => [t.identity, t.runtime]))
            const owed = yield* owedWork
            yield* warnOwed(owed)
            yield* Out.printDocument("reload", {
              ok: failed.length === 0,
              peer: peer.personality,
              endpoints: applied.map((a) => ({
                endpoint: a.identity,
                peer: peer.personality,
                runtime: runtimeOf.get(a.identity) ?? "",
                application: a.application,
                ...(a.detail === undefined ? {} : { detail: a.detail })
              })),
              daemon,
              invalid: owed.invalidJson
            })
          } else {
            if (applied.length === 0) yield* Console.log(Out.safe`peer ${peer.personality}: no agent runtime to reload`)
            for (const a of applied) {
              yield* Console.log(Out.safe`${a.identity} runtime=${a.application}` + (a.detail === undefined ? "" : Out.safe` (${a.detail})`))
            }
            yield* notePending(applied.filter((a) => a.application === "pending").length, false)
            // The last line says what failed (docs/cli.md, "Exit codes").
            if (failed.length > 0) {
              yield* Console.log(Out.safe`not reloaded (${failed.length} of ${applied.length}): ${failed.map((a) => `${a.identity} ${a.application}`).join(", ")}`)
            }
          }
          yield* Out.setExitCode(failed.length > 0 ? 1 : 0)
        }).pipe(Effect.provide(Opt.live(o.root)))
      })
    ),
  ["city reload alice", "city reload alice --runtime codex --json"]
)
