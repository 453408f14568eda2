/**
 * What `city capability register|sync|unregister|list` do (their parameters are in
 * `../capability.ts`): the declaration verbs and the sweeps (docs/capability-plugin-lifecycle.md, "Joints (core-owned)").
 * Sweeps list every endpoint with its outcome and exit 1 if any failed (or if a
 * peer file could not be read, so some endpoint could not be attempted).
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Invocation } from "../invocation.ts"
import type { VerbContext } from "../verbs.ts"
import { LiveJoints } from "../../services/live/LiveJoints.ts"
import * as JsonValues from "../jsonValues.ts"
import * as Opt from "../options.ts"
import * as Out from "../output.ts"
import { configuredFleet } from "./fleetConfig.ts"
import { renderSweep } from "./sweepReport.ts"
import * as Services from "./services.ts"

/**
 * The fleet a sweep verb is for: `--cluster`, else the root's host.json `cluster.url`, else none
 * (this host's files). A host.json that cannot be read is left to the verb to report.
 */
const fleetOf = (o: { readonly root: Option.Option<string>; readonly cluster: Option.Option<string> }) =>
  Option.isSome(o.cluster) ? Effect.succeed(o.cluster) : Effect.gen(function*() {
    const root = Opt.resolveRoot(o.root, yield* Invocation)
    return Option.map(yield* configuredFleet(root), (fleet) => fleet.url)
  })

/** The verb on the fleet of `url` (`run/cluster.ts`, the door to the cluster packages), else on this host. */
const onFleetOr = <A extends { readonly root: Option.Option<string>; readonly cluster: Option.Option<string> }>(
  o: A,
  fleet: (run: typeof import("./cluster.ts"), url: string) => Effect.Effect<void, never, VerbContext>,
  here: Effect.Effect<void, never, VerbContext>
) =>
  Effect.flatMap(fleetOf(o), (url) =>
    Option.isSome(url)
      ? Effect.flatMap(Effect.promise(() => import("./cluster.ts")), (run) => fleet(run, url.value))
      : here)

/** `capability register <file>` */
export const register = (o: Opt.CommandInput & { readonly cluster: Option.Option<string>; readonly file: string }) =>
  onFleetOr(o, (run, url) => run.register({ ...o, url }), registerHere(o))

const registerHere = (o: Opt.CommandInput & { readonly file: string }) =>
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
          JsonValues.capabilityJson(declaration),
          Out.safe`registered ${declaration.capability}${declaration.version === undefined ? "" : ` ${declaration.version}`}; ` +
            `sweep-on over ${report.outcomes.length} endpoint(s)`
        )
      }).pipe(Effect.provide(Services.live(o.root)))
    })
  )

/** `capability sync <name>`: the repair */
export const sync = (o: Opt.CommandInput & { readonly cluster: Option.Option<string>; readonly name: string }) =>
  onFleetOr(o, (run, url) => run.sync({ ...o, url }), syncHere(o))

const syncHere = (o: Opt.CommandInput & { readonly name: string }) =>
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
    }).pipe(Effect.provide(Services.live(o.root)))
  )

/** `capability unregister <name> [--force]` */
export const unregister = (
  o: Opt.CommandInput & { readonly cluster: Option.Option<string>; readonly name: string; readonly force: boolean }
) => onFleetOr(o, (run, url) => run.unregister({ ...o, url }), unregisterHere(o))

const unregisterHere = (o: Opt.CommandInput & { readonly name: string; readonly force: boolean }) =>
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
    }).pipe(Effect.provide(Services.live(o.root)))
  )
