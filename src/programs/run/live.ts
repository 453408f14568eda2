/**
 * What `city status` and `city reload` do (their parameters are in `../live.ts`;
 * docs/capability-plugin-lifecycle.md, "Applying surfaces to a live endpoint"). `city status`
 * shows the owed work (`owed.ts`) and the plugin generation the daemon serves (its number, how
 * many loaded and were skipped, each skipped name with its reason; docs/plugin-loader-lifecycle.md:
 * "A skipped plugin is logged as plugin skipped: <name>: <reason>") and a restart request not yet
 * applied (RestartRequests.ts); on a host of a fleet, the fleet's hosts (docs/cluster.md, "The
 * fleet's status").
 * @since 0.1.0
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { DaemonError } from "../../schema/Live.ts"
import { RuntimeProfiles } from "../../services/capabilities/RuntimeProfiles.ts"
import { Peers } from "../../services/capabilities/Peers.ts"
import { StateRoot } from "../../services/root/StateRoot.ts"
import { makeRefs } from "../../services/live/Endpoints.ts"
import { LiveJoints } from "../../services/live/LiveJoints.ts"
import * as RestartRequests from "../../services/loader/RestartRequests.ts"
import * as StatusAddress from "../../services/status/StatusAddress.ts"
import { CapabilityError } from "../../schema/CapabilityErrors.ts"
import * as Arguments from "../arguments.ts"
import * as Opt from "../options.ts"
import * as Out from "../output.ts"
import * as Quarantine from "../../services/watchdog/Quarantine.ts"
import { daemonInfo, notePending, owedWork, printOwed, warnOwed } from "./owed.ts"
import * as Services from "./services.ts"
import { runningGeneration } from "./plugins.ts"

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
    missing: g.report.missing,
    isolated: g.report.loaded.filter((p) => p.isolation !== "none").map((p) => p.name),
    unwell: (g.unwell ?? []).map((p) => ({ name: p.name, status: p.status, last_error: p.last_error ?? null }))
  }))
  const inProcesses = Option.match(running.generation, {
    onNone: (): ReadonlyArray<string> => [],
    onSome: (g) => g.report.loaded.filter((p) => p.isolation === "process").map((p) => p.name)
  })
  const pending = Option.filter(restart, RestartRequests.isOwed)
  const lines: Array<string> = []
  if (Option.isSome(generation)) {
    const g = generation.value
    lines.push(Out.safe`plugins: generation ${g.number} (since ${g.started_at}): ${g.loaded} loaded, ${g.skipped.length} skipped`)
    const inThreads = g.isolated.filter((name) => !inProcesses.includes(name))
    if (inThreads.length > 0) {
      lines.push(Out.safe`  in worker threads of their own: ${inThreads.join(", ")} (their heaps: the status page)`)
    }
    if (inProcesses.length > 0) {
      lines.push(Out.safe`  in processes of their own: ${inProcesses.join(", ")} (their heaps: the status page)`)
    }
    for (const p of g.unwell) {
      lines.push(Out.safe`  ${p.name}: ${p.status}${p.last_error === null ? "" : ` (${Out.oneLine(p.last_error, 300)})`}`)
    }
    // A refused manifest's reason is a line per fault (the loader writes every other reason on one line).
    for (const s of g.skipped) {
      for (const line of s.reason.split("\n")) lines.push(Out.safe`  skipped ${s.name}: ${Out.oneLine(line, 300)}`)
    }
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

/**
 * The running daemon's freeze, if its watchdog recorded one (watchdog/Quarantine.ts): `city status`
 * then says `frozen`, naming the plugin, where and since when, rather than `running`. A record of
 * another process (a daemon that is gone) is no freeze of the running one.
 */
const daemonFreeze = (daemon: { readonly running: boolean; readonly pid: number | null }) =>
  Effect.map(
    daemon.running ? Quarantine.freezeRecord : Effect.succeed(Option.none<Quarantine.FreezeRecord>()),
    Option.filter((record) => record.pid === daemon.pid && !record.ended)
  )

/** `status [--url]` */
export const status = (o: Opt.ReadInput & { readonly url: boolean }) =>
  Out.runVerb(
    "status",
    o.json,
    Effect.gen(function*() {
      yield* Arguments.existingRoot
      const page = yield* StatusAddress.current
      if (o.url && Option.isNone(page)) {
        return yield* new DaemonError({ reason: "NoStatusPage", root: (yield* StateRoot).root, daemon: (yield* daemonInfo).running })
      }
      if (o.url && !o.json) return yield* Console.log(Option.getOrThrow(page))
      const owed = yield* owedWork
      const plugins = yield* pluginStatus
      const fleet = yield* Services.fleetStatus(o.root)
      const frozen = yield* daemonFreeze(owed.daemon)
      if (o.json) {
        yield* warnOwed(owed)
        return yield* Out.printDocument("status", {
          ok: true,
          owed: owed.json,
          daemon: {
            ...owed.daemon,
            frozen: Option.getOrNull(Option.map(frozen, (f) => ({ plugin: f.plugin, location: f.location, since: f.since })))
          },
          plugins: plugins.json,
          page: Option.getOrNull(page),
          fleet: Option.getOrNull(Option.map(fleet, (f) => f.json)),
          invalid: owed.invalidJson
        })
      }
      yield* printOwed(
        owed,
        Option.getOrUndefined(Option.map(frozen, (f) =>
          Out.safe`daemon: frozen (pid ${owed.daemon.pid}): its thread is blocked since ${f.since} in ` +
            (f.plugin === null ? Out.safe`${f.location ?? "code outside JavaScript"}` : Out.safe`plugin ${f.plugin} (${f.location ?? "no frame"})`)))
      )
      for (const line of plugins.lines) yield* Console.log(line)
      if (Option.isSome(fleet)) for (const line of fleet.value.lines) yield* Console.log(line)
      if (Option.isSome(page)) yield* Console.log(`status page: ${page.value}`)
    }).pipe(Effect.provide(Services.live(o.root)))
  )

/**
 * `city reload <personality> [--runtime <r>]...`: requests a reload explicitly, for writers of
 * host-global files (`~/.codex/config.toml`, `~/.claude.json`), which are not fingerprinted
 * (spec: "the core verbs that write it ... request the reload explicitly and print
 * `runtime=applied|pending`"). Without `--runtime`, every agent runtime of the peer. Exit 1 when
 * an endpoint is foreign or failed.
 */
export const reload = (o: Opt.ReadInput & { readonly personality: string; readonly runtime: ReadonlyArray<string> }) =>
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
        const profiles = yield* RuntimeProfiles
        const peers = yield* Peers
        const refs = makeRefs(profiles, peers, yield* StateRoot)
        const peer = yield* peers.get(o.personality)
        const undeclared = o.runtime.find((r) => !peer.runtimes.includes(r))
        if (undeclared !== undefined) return yield* new CapabilityError({ reason: "RuntimeNotWired", personality: peer.personality, runtime: undeclared })
        const chosen = peer.runtimes.filter((r) => profiles.isAgent(r) && (o.runtime.length === 0 || o.runtime.includes(r)))
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
      }).pipe(Effect.provide(Services.live(o.root)))
    })
  )
