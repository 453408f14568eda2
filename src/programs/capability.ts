/**
 * `city capability register|sync|unregister|list`: the declaration verbs and
 * the sweeps (docs/capability-plugin-lifecycle.md, "Joints (core-owned)").
 * Sweeps list every endpoint with its outcome and exit 1 if any failed (or if a
 * peer file could not be read, so some endpoint could not be attempted).
 * @since 0.1.0
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Listings } from "../services/capabilities/Listings.ts"
import type { JointReport } from "../services/capabilities/Provisioner.ts"
import { LiveJoints } from "../services/live/LiveJoints.ts"
import * as Json from "./jsonOutput.ts"
import * as Live from "./live.ts"
import * as Opt from "./options.ts"
import * as Out from "./output.ts"
import { group, verb } from "./verbs.ts"

type SweepVerb = "capability register" | "capability sync" | "capability unregister"

const renderSweep = <V extends SweepVerb>(
  verb: V,
  json: boolean,
  report: JointReport,
  extra: Omit<Out.Extra<V>, "daemon">,
  headline: string
) =>
  Effect.gen(function*() {
    // Live application: whether a daemon runs to carry out `pending` work.
    const daemon = yield* Live.daemonInfo
    yield* Out.renderReport({ policy: "sweep", verb, json, report, extra: { ...extra, daemon } as Out.Extra<V>, headline })
    yield* Live.notePending(report.outcomes.filter((o) => o.application === "pending").length, json)
  })

export const register = verb(
  "register",
  "Validate a declaration file, store it, and provision every endpoint (sweep-on)",
  { ...Opt.commandOptions, file: Opt.file("file", "The declaration to register (JSON, named <capability>.json)") },
  (o) =>
    Out.runVerb(
      "capability register",
      o.json,
      Effect.gen(function*() {
        // Checked before the state root is touched: a typo in the path changes nothing.
        const file = yield* Opt.inputFile(o.file)
        yield* Effect.gen(function*() {
          const provisioner = yield* LiveJoints
          const { declaration, report } = yield* provisioner.register(
            file,
            yield* Out.settings(o.json, o.timeoutMs, o.concurrency)
          )
          yield* renderSweep(
            "capability register",
            o.json,
            report,
            Json.capabilityJson(declaration),
            Out.safe`registered ${declaration.capability}${declaration.version === undefined ? "" : ` ${declaration.version}`}; ` +
              `sweep-on over ${report.outcomes.length} endpoint(s)`
          )
        }).pipe(Effect.provide(Opt.live(o.root)))
      })
    ),
  ["city capability register ./stat.json", "city capability register ./stat.json --json --concurrency 8"]
)

const nameArg = Opt.text("name", "The name of a registered capability")

export const sync = verb(
  "sync",
  "Provision every endpoint of a registered capability again (the repair)",
  { ...Opt.commandOptions, name: nameArg },
  (o) =>
    Out.runVerb(
      "capability sync",
      o.json,
      Effect.gen(function*() {
        const provisioner = yield* LiveJoints
        const report = yield* provisioner.sync(o.name, yield* Out.settings(o.json, o.timeoutMs, o.concurrency))
        yield* renderSweep(
          "capability sync",
          o.json,
          report,
          { capability: o.name },
          Out.safe`sync ${o.name}: sweep-on over ${report.outcomes.length} endpoint(s)`
        )
      }).pipe(Effect.provide(Opt.live(o.root)))
    )
)

const force = Opt.force("Delete the declaration even when it is invalid; its endpoints cannot be unprovisioned and are listed")

export const unregister = verb(
  "unregister",
  "Unprovision every endpoint (off-all), then delete the declaration",
  { ...Opt.commandOptions, name: nameArg, force },
  (o) =>
    Out.runVerb(
      "capability unregister",
      o.json,
      Effect.gen(function*() {
        const provisioner = yield* LiveJoints
        const report = yield* provisioner.unregister(o.name, {
          ...(yield* Out.settings(o.json, o.timeoutMs, o.concurrency)),
          force: o.force
        })
        yield* renderSweep(
          "capability unregister",
          o.json,
          report,
          { capability: o.name },
          Out.safe`unregistered ${o.name}: off-all over ${report.outcomes.length} endpoint(s); declaration deleted`
        )
      }).pipe(Effect.provide(Opt.live(o.root)))
    )
)

export const list = verb(
  "list",
  "List each declaration, its version, its endpoints and their last state",
  Opt.readOptions,
  (o) =>
    Out.runVerb(
      "capability list",
      o.json,
      Effect.gen(function*() {
        const overview = yield* (yield* Listings).capabilities
        const owed = yield* Live.owedWork
        yield* Out.warnInvalid(overview)
        if (o.json) {
          yield* Live.warnOwed(owed)
          return yield* Out.printDocument("capability list", {
            ok: true,
            capabilities: overview.capabilities.map((c) => ({
              ...Json.capabilityJson(c.declaration),
              endpoints: c.endpoints.map((e) => ({ peer: e.personality, runtime: e.runtime, last: Option.getOrNull(e.last) }))
            })),
            owed: owed.json,
            daemon: owed.daemon,
            invalid: [...Json.invalidJson(overview.invalid), ...owed.invalidJson]
          })
        }
        const rows = overview.capabilities.flatMap((c) => {
          const head = [c.declaration.capability, c.declaration.version ?? ""]
          if (c.endpoints.length === 0) return [[...head, "(no endpoints)", "", "", "", ""]]
          return c.endpoints.map((e) =>
            Option.match(e.last, {
              onNone: () => [...head, e.personality, e.runtime, "never", "", ""],
              onSome: (r) => [...head, e.personality, e.runtime, r.state, r.occasion, r.at]
            })
          )
        })
        yield* Console.log(
          rows.length === 0
            ? "no capabilities registered"
            : Out.table(["CAPABILITY", "VERSION", "PEER", "RUNTIME", "LAST STATE", "OCCASION", "AT"], rows)
        )
        if (overview.invalid.length > 0) {
          yield* Console.log("")
          yield* Console.log(
            Out.table(["INVALID FILE", "FIELD", "RULE"], overview.invalid.map((e) => [e.file, e.field, e.rule]))
          )
        }
        yield* Console.log("")
        yield* Live.printOwed(owed)
      }).pipe(Effect.provide(Opt.live(o.root)))
    )
)

export const capability = group("capability", "Capability plugins: declarations and their provisioning sweeps", [
  register,
  sync,
  unregister,
  list
])
